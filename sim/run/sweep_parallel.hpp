// Where `vramsim sweep` runs its points: worker threads on this machine (PointPool), and, under
// mpirun or srun in a build with MPI, several processes (SweepWorld). Each point is simulated
// on one thread, independently of the others; results are keyed by point index, so the output
// does not depend on how many threads or ranks ran them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sim/run/sweep_point.hpp"

namespace vramsim::run {

/// Runs `work(i)` for every i of `indices` on `num_threads` threads (at least one), in the
/// order given; the thread that made the pool collects the records as they finish.
class PointPool {
 public:
  using Work = std::function<PointRecord(std::size_t)>;
  PointPool(std::vector<std::size_t> indices, int num_threads, Work work);
  /// Waits for the points already started; points not started are skipped.
  ~PointPool();
  PointPool(const PointPool&) = delete;
  PointPool& operator=(const PointPool&) = delete;

  /// The next finished record, waiting at most `wait`; nullopt when none finished meanwhile.
  std::optional<PointRecord> next(std::chrono::milliseconds wait);
  /// Records not yet returned by next().
  std::size_t pending() const;

 private:
  void worker();

  std::vector<std::size_t> indices_;
  Work work_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::size_t next_job_ = 0;
  std::size_t taken_ = 0;
  bool stopping_ = false;
  std::deque<PointRecord> done_;
  std::vector<std::thread> threads_;
};

/// The processes of one sweep. Outside an MPI launch (or with one process) it is a world of one
/// and MPI is never initialised.
class SweepWorld {
 public:
  /// Joins the MPI job when mpirun or srun started several processes. Throws ConfigError when
  /// they did but this build has no MPI: each process would otherwise run the whole sweep.
  SweepWorld();
  ~SweepWorld();
  SweepWorld(const SweepWorld&) = delete;
  SweepWorld& operator=(const SweepWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

  /// Rank 0's `message` on every rank.
  std::string broadcast(const std::string& message) const;
  /// Rank 0's `indices` on every rank (the work already done, which no rank runs again).
  std::set<std::size_t> broadcast_indices(const std::vector<std::size_t>& indices) const;
  /// Sends `message` to rank 0 (from another rank).
  void send_to_root(const std::string& message) const;
  /// On rank 0: a message another rank sent, if one has arrived; never waits.
  std::optional<std::string> poll() const;

  /// Number of processes the launcher started, from its environment (1 when not launched).
  static int launched_size();

 private:
  int rank_ = 0;
  int size_ = 1;
  bool mpi_ = false;
};

/// The threads a search runs on this process: `jobs` when > 0, else one per core for a lone
/// process and one per rank under MPI (the ranks already fill the cores).
int search_threads(int jobs, const SweepWorld& world);

/// What a search (sweep, plan train, plan serve) hands spread_points.
struct SpreadWork {
  std::vector<std::size_t> candidates;  // the indices the search simulates, in order
  std::set<std::size_t> done;           // those a resumed run already has (on every rank)
  int threads = 1;
  PointPool::Work work;
  /// Rank 0: every record, this rank's and the others', as each arrives.
  std::function<void(PointRecord)> take;
  /// Rank 0, optional: (records taken, records expected), from (0, n) on.
  std::function<void(std::size_t, std::size_t)> progress;
};

/// Runs `w.work(i)` for every candidate not done: rank r takes every size()-th of them from
/// the r-th, on `w.threads` threads. Rank 0 hands every record to `w.take`; the other ranks
/// send theirs to rank 0. Returns the number of points run in all, before the broadcast that
/// ends the search, which the caller makes (rank 0 may carry a verdict in it).
std::size_t spread_points(const SweepWorld& world, const SpreadWork& w);

}  // namespace vramsim::run
