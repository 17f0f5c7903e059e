// NCCL collectives in the nccl-tests shape: all-reduce, all-gather, reduce-scatter, broadcast
// and send/recv (ring neighbour) on float data, sizes 8 B to --max-collective-bytes in x2 steps,
// S being nccl-tests' size (comm/collective.hpp). algbw = S / time, busbw = algbw x
// bus_bandwidth_factor (calibration_record.hpp). One process drives every visible GPU
// (ncclCommInitAll, as nccl-tests' -g), and also a single rank; with --mpi each process drives
// one GPU and NCCL is bootstrapped over MPI (ncclGetUniqueId broadcast, ncclCommInitRank).
// A sample is a batch of launches timed on the host around a stream synchronisation, divided
// by the batch (nccl-tests' way: 20 launches for small sizes). The all-reduce is checked at
// 1 MiB: rank r contributes r + 1, every element must equal n (n + 1) / 2.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/bench_context.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/cuda_timer.hpp"
#include "sim/hardware/calibration_profile.hpp"

#if VRAMSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace vramsim::kernels {

#if VRAMSIM_HAVE_NCCL

namespace {

using calibration::CheckOutcome;
using calibration::CollectiveOp;

struct Rank {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};

// The ranks this process drives, their buffers and communicators.
class Ranks {
 public:
  Ranks(const std::vector<int>& devices, std::size_t bytes, int world_size, int first_rank,
        const ncclUniqueId* id)
      : world_size_(world_size) {
    ranks_.resize(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
      Rank& r = ranks_[i];
      r.device = devices[i];
      CUDA_CHECK(cudaSetDevice(r.device));
      CUDA_CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
      CUDA_CHECK(cudaMalloc(&r.send, bytes));
      CUDA_CHECK(cudaMalloc(&r.recv, bytes));
    }
    CUDA_CHECK(cudaSetDevice(devices.front()));
    std::size_t free_before = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
    if (id == nullptr) {
      std::vector<ncclComm_t> comms(devices.size());
      NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
      for (std::size_t i = 0; i < devices.size(); ++i) ranks_[i].comm = comms[i];
    } else {
      NCCL_CHECK(ncclCommInitRank(&ranks_.front().comm, world_size, *id, first_rank));
    }
    CUDA_CHECK(cudaSetDevice(devices.front()));
    CUDA_CHECK(cudaMemGetInfo(&free_after_init_, &total));
    free_before_ = free_before;
  }
  ~Ranks() {
    for (Rank& r : ranks_) {
      cudaSetDevice(r.device);
      if (r.comm != nullptr) ncclCommDestroy(r.comm);
      cudaFree(r.send);
      cudaFree(r.recv);
      cudaStreamDestroy(r.stream);
    }
  }
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  int world_size() const { return world_size_; }
  std::vector<Rank>& ranks() { return ranks_; }
  /// Device memory the communicator took on the first device, after its first collective.
  std::int64_t communicator_bytes() const {
    std::size_t free = 0, total = 0;
    CUDA_CHECK(cudaSetDevice(ranks_.front().device));
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return static_cast<std::int64_t>(free_before_) - static_cast<std::int64_t>(free);
  }
  void synchronize() {
    for (Rank& r : ranks_) {
      CUDA_CHECK(cudaSetDevice(r.device));
      CUDA_CHECK(cudaStreamSynchronize(r.stream));
    }
  }

 private:
  int world_size_ = 1;
  std::vector<Rank> ranks_;
  std::size_t free_before_ = 0;
  std::size_t free_after_init_ = 0;
};

// Issues one collective of S = `bytes` on every rank this process drives.
void launch(Ranks& ranks, CollectiveOp op, std::size_t bytes, int first_rank) {
  const int n = ranks.world_size();
  const std::size_t count = bytes / sizeof(float);
  NCCL_CHECK(ncclGroupStart());
  for (std::size_t i = 0; i < ranks.ranks().size(); ++i) {
    Rank& r = ranks.ranks()[i];
    const int rank = first_rank + static_cast<int>(i);
    switch (op) {
      case CollectiveOp::kAllReduce:
        NCCL_CHECK(ncclAllReduce(r.send, r.recv, count, ncclFloat, ncclSum, r.comm, r.stream));
        break;
      case CollectiveOp::kAllGather:
        NCCL_CHECK(ncclAllGather(r.send, r.recv, count / static_cast<std::size_t>(n), ncclFloat,
                                 r.comm, r.stream));
        break;
      case CollectiveOp::kReduceScatter:
        NCCL_CHECK(ncclReduceScatter(r.send, r.recv, count / static_cast<std::size_t>(n),
                                     ncclFloat, ncclSum, r.comm, r.stream));
        break;
      case CollectiveOp::kBroadcast:
        NCCL_CHECK(ncclBroadcast(r.send, r.recv, count, ncclFloat, 0, r.comm, r.stream));
        break;
      case CollectiveOp::kSendRecv:
        NCCL_CHECK(ncclSend(r.send, count, ncclFloat, (rank + 1) % n, r.comm, r.stream));
        NCCL_CHECK(ncclRecv(r.recv, count, ncclFloat, (rank - 1 + n) % n, r.comm, r.stream));
        break;
    }
  }
  NCCL_CHECK(ncclGroupEnd());
}

void barrier([[maybe_unused]] bool mpi) {
#if VRAMSIM_HAVE_MPI
  if (mpi) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

// Host-clock timer around a batch of launches on every rank (and every process with MPI).
class BatchTimer final : public Timer {
 public:
  BatchTimer(Ranks& ranks, int batch, bool mpi) : ranks_(ranks), batch_(batch), mpi_(mpi) {}
  void start() override {
    ranks_.synchronize();
    barrier(mpi_);
    t0_ = std::chrono::steady_clock::now();
  }
  double stop_s() override {
    ranks_.synchronize();
    barrier(mpi_);
    const std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0_;
    return d.count() / batch_;
  }

 private:
  Ranks& ranks_;
  int batch_;
  bool mpi_;
  std::chrono::steady_clock::time_point t0_;
};

CheckOutcome check_all_reduce(Ranks& ranks, int first_rank) {
  const std::size_t bytes = std::size_t{1} << 20, count = bytes / sizeof(float);
  for (std::size_t i = 0; i < ranks.ranks().size(); ++i) {
    Rank& r = ranks.ranks()[i];
    const std::vector<float> mine(count, static_cast<float>(first_rank + static_cast<int>(i) + 1));
    CUDA_CHECK(cudaSetDevice(r.device));
    CUDA_CHECK(cudaMemcpy(r.send, mine.data(), bytes, cudaMemcpyHostToDevice));
  }
  launch(ranks, CollectiveOp::kAllReduce, bytes, first_rank);
  ranks.synchronize();
  const double n = ranks.world_size();
  std::vector<float> got(count);
  CUDA_CHECK(cudaSetDevice(ranks.ranks().front().device));
  CUDA_CHECK(cudaMemcpy(got.data(), ranks.ranks().front().recv, bytes, cudaMemcpyDeviceToHost));
  const std::vector<float> want(count, static_cast<float>(n * (n + 1) / 2));
  return compare(got, want, 0.0, 0.0);
}

void measure(BenchContext& ctx, calibration::CalibrationProfile& profile, Ranks& ranks,
             int first_rank, int num_nodes, bool report) {
  const int n = ranks.world_size();
  const std::int64_t max_bytes =
      ctx.options.quick ? std::int64_t{1} << 24 : ctx.options.max_collective_bytes;
  const CheckOutcome all_reduce_check = check_all_reduce(ranks, first_rank);
  if (report && n > 1 && profile.memory.nccl_communicator_ranks < n) {
    profile.memory.nccl_communicator_bytes = ranks.communicator_bytes();
    profile.memory.nccl_communicator_ranks = n;
  }
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                          CollectiveOp::kReduceScatter, CollectiveOp::kBroadcast,
                          CollectiveOp::kSendRecv}) {
    for (std::int64_t size : doubling_sizes(8, max_bytes)) {
      const auto bytes = static_cast<std::size_t>(size);
      const bool sharded = op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
      if (sharded && bytes % (sizeof(float) * static_cast<std::size_t>(n)) != 0) continue;
      const int batch = size <= (std::int64_t{1} << 20) ? 20 : size <= (std::int64_t{1} << 26) ? 5 : 1;
      BatchTimer timer(ranks, batch, ctx.options.mpi);
      calibration::CollectiveRecord r;
      r.op = op;
      r.num_ranks = n;
      r.num_nodes = num_nodes;
      r.bytes = size;
      r.dtype = "fp32";
      r.timing = time_repetitions(timer, ctx.options.warmup, ctx.options.repetitions, [&] {
        for (int b = 0; b < batch; ++b) launch(ranks, op, bytes, first_rank);
      });
      r.check = op == CollectiveOp::kAllReduce ? all_reduce_check : CheckOutcome::kNotChecked;
      if (!report) continue;
      ctx.log << fmt::format("{:<14} ranks={} {:>11} B {:>10.2f} us algbw {:>8.2f} GB/s busbw {:>8.2f} GB/s\n",
                             calibration::to_string(op), n, size, r.timing.median_s * 1e6,
                             calibration::algorithm_bandwidth(size, r.timing.median_s) / 1e9,
                             calibration::bus_bandwidth(op, n, size, r.timing.median_s) / 1e9);
      profile.collectives.push_back(r);
    }
  }
}

}  // namespace

void run_collective_bench(BenchContext& ctx, calibration::CalibrationProfile& profile) {
  int num_devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&num_devices));
  const auto largest = static_cast<std::size_t>(
      ctx.options.quick ? std::int64_t{1} << 24 : ctx.options.max_collective_bytes);
  if (ctx.options.mpi) {
#if VRAMSIM_HAVE_MPI
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ncclUniqueId id{};
    if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    char host[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(host, &len);
    std::vector<char> hosts(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts.data(), MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> distinct;
    for (int i = 0; i < size; ++i) {
      const std::string h(&hosts[static_cast<std::size_t>(i) * MPI_MAX_PROCESSOR_NAME]);
      if (std::find(distinct.begin(), distinct.end(), h) == distinct.end()) distinct.push_back(h);
    }
    // One GPU per process: the local rank picks it (OpenMPI's variable, else rank modulo).
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    const int device = (local != nullptr ? std::atoi(local) : rank) % num_devices;
    Ranks ranks({device}, largest, size, rank, &id);
    measure(ctx, profile, ranks, rank, static_cast<int>(distinct.size()), rank == 0);
    profile.identity.num_devices = size;
#else
    throw std::runtime_error("--mpi: vramsim-calibrate was built without MPI");
#endif
    return;
  }
  {
    Ranks one({ctx.device}, largest, 1, 0, nullptr);
    measure(ctx, profile, one, 0, 1, true);
  }
  if (num_devices > 1) {
    std::vector<int> devices(static_cast<std::size_t>(num_devices));
    for (int i = 0; i < num_devices; ++i) devices[static_cast<std::size_t>(i)] = i;
    Ranks all(devices, largest, num_devices, 0, nullptr);
    measure(ctx, profile, all, 0, 1, true);
  }
  CUDA_CHECK(cudaSetDevice(ctx.device));
}

#else  // no NCCL

void run_collective_bench(BenchContext& ctx, calibration::CalibrationProfile&) {
  ctx.log << "collectives: built without NCCL; no collective measured\n";
}

#endif

}  // namespace vramsim::kernels
