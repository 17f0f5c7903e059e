// [gpu]: a quick run of vramsim-calibrate on the local device. Excluded from the default
// ctest run; where the program is not built or no CUDA device exists it says so and passes.
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>

#include "sim/hardware/calibration_profile.hpp"
#include "tests/catch.hpp"

#ifdef VRAMSIM_CALIBRATE_BINARY
namespace {

int run_command(const std::string& cmd, std::string& out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace
#endif

TEST_CASE("a quick calibration on the local GPU writes a valid profile whose checks pass",
          "[kernels][gpu]") {
#ifndef VRAMSIM_CALIBRATE_BINARY
  WARN("skipped: vramsim-calibrate is not built (no CUDA compiler or cuBLAS at configure time)");
  return;
#else
  std::string out;
  const int probe = run_command(std::string(VRAMSIM_CALIBRATE_BINARY) + " --check-device", out);
  if (probe != 0) {
    WARN("skipped: no usable CUDA device (" << out << ")");
    return;
  }
  const auto path = std::filesystem::temp_directory_path() / "vramsim_gpu_test_profile.json";
  out.clear();
  const int rc = run_command(std::string(VRAMSIM_CALIBRATE_BINARY) +
                                 " --quick --repetitions 3 --warmup 1 --device-id gpu-test --out " +
                                 path.string(),
                             out);
  INFO(out);
  REQUIRE(rc == 0);
  const auto p = vramsim::calibration::load_calibration_profile(path);
  CHECK(p.memory.cuda_context_bytes > 0);
  CHECK_FALSE(p.copies.empty());
  CHECK_FALSE(p.gemms.empty());
  CHECK_FALSE(p.decode_attention.empty());
  for (const auto& r : p.copies) CHECK(r.check != vramsim::calibration::CheckOutcome::kFailed);
  for (const auto& r : p.gemms) CHECK(r.check != vramsim::calibration::CheckOutcome::kFailed);
  for (const auto& r : p.decode_attention) {
    CHECK(r.check == vramsim::calibration::CheckOutcome::kPassed);
  }
  for (const auto& r : p.prefill_attention) {
    CHECK(r.check != vramsim::calibration::CheckOutcome::kFailed);
  }
  for (const auto& r : p.collectives) {
    CHECK(r.check != vramsim::calibration::CheckOutcome::kFailed);
  }
  std::filesystem::remove(path);
#endif
}
