// The lock-stepped data-parallel groups of a serving run: ServingSetup::data_parallel_size and
// dp_lockstep (serving_simulation.hpp) state what a group's step is; here is how it runs. Each
// group's ranks are consecutive replicas, one step of the group in flight at a time:
//
//   group g: replicas [g * group_size, (g + 1) * group_size)
//   try_launch ──▶ every rank plans its batch (vLLM's dummy batch of one token when it has
//                  none) ──▶ each rank's step time with the group's token counts
//                  (BatchShape::dp_*) ──▶ the ranks that planned start with the slowest's
//   complete   ──▶ the ranks that started apply their step; the group may launch again
//
// The groups own their launch state (a try pending, a step in flight, the ranks in it). Like
// DisaggregatedHandover they never touch the event queue: request_launch says when the caller
// must schedule a try, try_launch returns the group's step latency for the caller to schedule
// its end, and the caller hands that end back through complete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/serving/execution_time_model.hpp"
#include "sim/serving/replica.hpp"
#include "sim/serving/request.hpp"
#include "sim/serving/serving_metrics.hpp"

namespace vramsim::serving {

/// What DpLockstepGroups::try_launch did.
enum class GroupLaunchOutcome : std::uint8_t {
  kNoneReady,    // no rank could launch: nothing was planned
  kNonePlanned,  // ranks could launch but none planned a batch: no step started
  kStarted,      // the group's step started (GroupLaunch::latency)
};

struct GroupLaunch {
  GroupLaunchOutcome outcome = GroupLaunchOutcome::kNoneReady;
  Duration latency = Duration::zero();  // kStarted: until the slowest rank's step ends
};

class DpLockstepGroups {
 public:
  /// `ranks`: the run's replicas, group by group, `group_size` ranks each (not owned; they
  /// outlive the groups). `time_model` must be built for the group (RooflineTimeModel with its
  /// ExpertParallelSetup). `pad_to_largest`: ServingSetup::dp_pad_to_largest.
  DpLockstepGroups(std::vector<Replica*> ranks, std::size_t group_size, bool pad_to_largest,
                   const ExecutionTimeModel& time_model);

  std::size_t group_size() const { return group_size_; }
  std::size_t num_groups() const { return busy_.size(); }
  /// The group replica `replica` is a rank of.
  std::int32_t group_of(std::int32_t replica) const {
    return replica / static_cast<std::int32_t>(group_size_);
  }
  /// Group `g`'s ranks.
  std::span<Replica* const> ranks(std::size_t g) const {
    return {ranks_.data() + g * group_size_, group_size_};
  }

  /// Group `g` should try to launch: true when the caller must schedule a try (try_launch)
  /// now; false when one is already pending or the group's step is in flight (its end tries).
  bool request_launch(std::size_t g);

  /// The pending try of group `g` at `now`: when any rank can launch, every rank plans and,
  /// when one planned a batch, the ranks that did start the group's step; `on_start` is called
  /// with each started rank's replica index and launch, in rank order, right after its start.
  /// With nothing planned, checks that no rank is stuck (requests waiting, none in flight).
  GroupLaunch try_launch(std::size_t g, SimTime now,
                         const std::function<void(std::size_t, const Launch&)>& on_start);

  /// Group `g`'s step ended at `now`: each rank that started it applies it, in rank order,
  /// `on_finished` called with each request it finished before the next rank's completion.
  /// The group may then launch again (the caller requests it).
  void complete(std::size_t g, SimTime now, ServingMetrics& metrics,
                std::vector<Request*>& finished, const std::function<void(Request&)>& on_finished);

 private:
  std::vector<Replica*> ranks_;
  std::size_t group_size_;
  bool pad_to_largest_;
  const ExecutionTimeModel& time_model_;
  std::vector<bool> launch_pending_;  // per group
  std::vector<bool> busy_;            // per group: a step in flight
  std::vector<bool> launched_;        // per rank: in its group's step in flight
  std::vector<BatchShape> shapes_;    // scratch: one group's batches
};

}  // namespace vramsim::serving
