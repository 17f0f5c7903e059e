// Copy bandwidth: device to device with our vectorised kernel (copy_kernel.cu) and with
// cudaMemcpyAsync; host to device and back, pinned and pageable. Sizes 1 MiB to
// --max-copy-bytes in x2 steps. Each device copy is checked once (the destination compared
// with the source, sampled).
#include <fmt/format.h>

#include <vector>

#include "kernels/bench_context.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/cuda_timer.hpp"
#include "kernels/launchers.hpp"
#include "sim/hardware/calibration_profile.hpp"

namespace vramsim::kernels {

namespace {

using calibration::CheckOutcome;
using calibration::CopyKind;

// Compares 4096 sampled 16-bit words of `dst` with `src` (device buffers).
CheckOutcome check_copy(const DeviceBuffer& src, const DeviceBuffer& dst, std::size_t bytes) {
  const std::size_t words = bytes / 2;
  const std::size_t step = words > 4096 ? words / 4096 : 1;
  std::vector<float> got, want;
  for (std::size_t i = 0; i < words; i += step) {
    std::uint16_t a = 0, b = 0;
    CUDA_CHECK(cudaMemcpy(&a, src.as<std::uint16_t>() + i, 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&b, dst.as<std::uint16_t>() + i, 2, cudaMemcpyDeviceToHost));
    want.push_back(a);
    got.push_back(b);
    if (want.size() >= 64) break;  // 64 samples across the buffer's first part is plenty
  }
  return compare(got, want, 0.0, 0.0);
}

}  // namespace

void run_copy_bench(BenchContext& ctx, calibration::CalibrationProfile& profile) {
  const std::int64_t min_bytes = std::int64_t{1} << 20;
  const std::vector<std::int64_t> sizes = doubling_sizes(
      min_bytes, ctx.options.quick ? std::int64_t{64} << 20 : ctx.options.max_copy_bytes);
  const auto largest = static_cast<std::size_t>(sizes.back());
  DeviceBuffer src(largest), dst(largest);
  PinnedBuffer pinned(largest);
  std::vector<unsigned char> pageable(largest, 1);
  launch_fill_random_bf16(src.as<std::uint16_t>(), largest / 2, 7, 1.0f, ctx.stream);
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  EventTimer timer(ctx.stream);
  const int warmup = ctx.options.warmup, reps = ctx.options.repetitions;

  for (std::int64_t size : sizes) {
    const auto bytes = static_cast<std::size_t>(size);
    auto record = [&](CopyKind kind, const std::function<void()>& work, CheckOutcome check) {
      calibration::CopyRecord r;
      r.kind = kind;
      r.bytes = size;
      r.timing = time_repetitions(timer, warmup, reps, work);
      r.check = check;
      ctx.log << fmt::format("copy {:<14} {:>12} B  {:>9.3f} us  {:>8.1f} GB/s  {}\n",
                             calibration::to_string(kind), size, r.timing.median_s * 1e6,
                             calibration::copy_traffic_bytes(r) / r.timing.median_s / 1e9,
                             check == CheckOutcome::kPassed ? "ok" : "");
      profile.copies.push_back(r);
    };
    CUDA_CHECK(cudaMemsetAsync(dst.get(), 0, bytes, ctx.stream));
    launch_vector_copy(src.get(), dst.get(), bytes, ctx.num_sms, ctx.stream);
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    record(CopyKind::kDeviceKernel,
           [&] { launch_vector_copy(src.get(), dst.get(), bytes, ctx.num_sms, ctx.stream); },
           check_copy(src, dst, bytes));
    CUDA_CHECK(cudaMemsetAsync(dst.get(), 0, bytes, ctx.stream));
    CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, ctx.stream));
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    record(CopyKind::kDeviceMemcpy,
           [&] {
             CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice,
                                        ctx.stream));
           },
           check_copy(src, dst, bytes));
    record(CopyKind::kHostToDevicePinned,
           [&] {
             CUDA_CHECK(cudaMemcpyAsync(dst.get(), pinned.get(), bytes, cudaMemcpyHostToDevice,
                                        ctx.stream));
           },
           CheckOutcome::kNotChecked);
    record(CopyKind::kDeviceToHostPinned,
           [&] {
             CUDA_CHECK(cudaMemcpyAsync(pinned.get(), src.get(), bytes, cudaMemcpyDeviceToHost,
                                        ctx.stream));
           },
           CheckOutcome::kNotChecked);
    // Pageable copies are synchronous with respect to the host: cudaMemcpyAsync from pageable
    // memory stages through a pinned buffer; the events still bracket the transfer.
    record(CopyKind::kHostToDevicePageable,
           [&] {
             CUDA_CHECK(cudaMemcpyAsync(dst.get(), pageable.data(), bytes,
                                        cudaMemcpyHostToDevice, ctx.stream));
           },
           CheckOutcome::kNotChecked);
    record(CopyKind::kDeviceToHostPageable,
           [&] {
             CUDA_CHECK(cudaMemcpyAsync(pageable.data(), src.get(), bytes,
                                        cudaMemcpyDeviceToHost, ctx.stream));
           },
           CheckOutcome::kNotChecked);
  }
}

}  // namespace vramsim::kernels
