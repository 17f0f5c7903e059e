#include "sim/run/sweep_parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"

#ifdef VRAMSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace vramsim::run {

namespace {

constexpr int kRecordTag = 17;

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return 0;
  return std::atoi(v);
}

}  // namespace

PointPool::PointPool(std::vector<std::size_t> indices, int num_threads, Work work)
    : indices_(std::move(indices)), work_(std::move(work)) {
  const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(std::max(1, num_threads)),
                                              std::max<std::size_t>(1, indices_.size()));
  threads_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) threads_.emplace_back([this] { worker(); });
}

PointPool::~PointPool() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

void PointPool::worker() {
  for (;;) {
    std::size_t index = 0;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_ || next_job_ == indices_.size()) return;
      index = indices_[next_job_++];
    }
    PointRecord record = work_(index);  // never throws for a point's own problems
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_.push_back(std::move(record));
    }
    ready_.notify_one();
  }
}

std::optional<PointRecord> PointPool::next(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!ready_.wait_for(lock, wait, [this] { return !done_.empty(); })) return std::nullopt;
  PointRecord r = std::move(done_.front());
  done_.pop_front();
  ++taken_;
  return r;
}

std::size_t PointPool::pending() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return indices_.size() - taken_;
}

int SweepWorld::launched_size() {
  // Open MPI's mpirun; MPICH / Intel MPI (Hydra) and Slurm's PMI; srun's job step.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    if (const int n = env_int(name); n > 0) return n;
  }
  return 1;
}

SweepWorld::SweepWorld() {
  const int launched = launched_size();
  if (launched <= 1) return;
#ifdef VRAMSIM_HAVE_MPI
  int provided = 0;
  // Worker threads never call MPI; only the thread that made the world does.
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
#else
  throw ConfigError(
      "mpirun", fmt::format("launched as one of {} processes, but this vramsim was built without "
                            "MPI, so each would run the whole sweep. Rebuild with MPI "
                            "(libopenmpi-dev; CMake finds it), or run one process: it already "
                            "spreads points over local cores (-j)",
                            launched));
#endif
}

SweepWorld::~SweepWorld() {
#ifdef VRAMSIM_HAVE_MPI
  if (mpi_) MPI_Finalize();
#endif
}

std::string SweepWorld::broadcast(const std::string& message) const {
#ifdef VRAMSIM_HAVE_MPI
  if (mpi_) {
    std::uint64_t n = message.size();
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    std::string out = rank_ == 0 ? message : std::string(n, '\0');
    if (n > 0) MPI_Bcast(out.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
    return out;
  }
#endif
  return message;
}

void SweepWorld::send_to_root(const std::string& message) const {
  VRAMSIM_CHECK(mpi_ && rank_ != 0, "send_to_root outside an MPI job or from rank 0");
#ifdef VRAMSIM_HAVE_MPI
  MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kRecordTag,
           MPI_COMM_WORLD);
#else
  (void)message;
#endif
}

std::optional<std::string> SweepWorld::poll() const {
#ifdef VRAMSIM_HAVE_MPI
  if (!mpi_) return std::nullopt;
  int arrived = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, kRecordTag, MPI_COMM_WORLD, &arrived, &status);
  if (arrived == 0) return std::nullopt;
  int n = 0;
  MPI_Get_count(&status, MPI_CHAR, &n);
  std::string out(static_cast<std::size_t>(n), '\0');
  MPI_Recv(out.data(), n, MPI_CHAR, status.MPI_SOURCE, kRecordTag, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return out;
#else
  return std::nullopt;
#endif
}

std::set<std::size_t> SweepWorld::broadcast_indices(const std::vector<std::size_t>& indices) const {
  std::string text;
  for (const std::size_t i : indices) text += fmt::format("{} ", i);
  text = broadcast(text);
  std::set<std::size_t> out;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = text.find(' ', pos);
    out.insert(std::stoull(text.substr(pos, end - pos)));
    pos = end + 1;
  }
  return out;
}

int search_threads(int jobs, const SweepWorld& world) {
  if (jobs > 0) return jobs;
  return world.size() > 1 ? 1 : static_cast<int>(std::thread::hardware_concurrency());
}

std::size_t spread_points(const SweepWorld& world, const SpreadWork& w) {
  std::vector<std::size_t> remaining;
  for (const std::size_t i : w.candidates) {
    if (w.done.count(i) == 0) remaining.push_back(i);
  }
  std::vector<std::size_t> mine;
  const auto ranks = static_cast<std::size_t>(world.size());
  for (std::size_t k = static_cast<std::size_t>(world.rank()); k < remaining.size(); k += ranks) {
    mine.push_back(remaining[k]);
  }
  PointPool pool(std::move(mine), w.threads, w.work);
  if (!world.is_root()) {
    while (pool.pending() > 0) {
      if (std::optional<PointRecord> r = pool.next(std::chrono::milliseconds(200))) {
        world.send_to_root(record_to_json(*r));
      }
    }
    return remaining.size();
  }
  std::size_t received = 0;
  if (w.progress) w.progress(0, remaining.size());
  const auto take = [&](PointRecord r) {
    w.take(std::move(r));
    ++received;
    if (w.progress) w.progress(received, remaining.size());
  };
  // Under MPI the other ranks' messages are polled often; alone, the pool's wait is the clock.
  const auto wait = std::chrono::milliseconds(world.size() > 1 ? 2 : 200);
  while (received < remaining.size()) {
    if (std::optional<PointRecord> r = pool.next(wait)) take(std::move(*r));
    while (std::optional<std::string> message = world.poll()) {
      std::optional<PointRecord> r = record_from_json(*message);
      VRAMSIM_CHECK(r.has_value(), "a rank sent a malformed record");
      take(std::move(*r));
    }
  }
  return remaining.size();
}

}  // namespace vramsim::run
