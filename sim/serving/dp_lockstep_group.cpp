#include "sim/serving/dp_lockstep_group.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <utility>

namespace vramsim::serving {

DpLockstepGroups::DpLockstepGroups(std::vector<Replica*> ranks, std::size_t group_size,
                                   bool pad_to_largest, const ExecutionTimeModel& time_model)
    : ranks_(std::move(ranks)), group_size_(group_size), pad_to_largest_(pad_to_largest),
      time_model_(time_model) {
  VRAMSIM_CHECK(group_size_ >= 1 && ranks_.size() % group_size_ == 0,
                "{} ranks in groups of {}", ranks_.size(), group_size_);
  const std::size_t groups = ranks_.size() / group_size_;
  launch_pending_.assign(groups, false);
  busy_.assign(groups, false);
  launched_.assign(ranks_.size(), false);
  shapes_.resize(group_size_);
}

bool DpLockstepGroups::request_launch(std::size_t g) {
  if (launch_pending_[g] || busy_[g]) return false;
  launch_pending_[g] = true;
  return true;
}

GroupLaunch DpLockstepGroups::try_launch(
    std::size_t g, SimTime now, const std::function<void(std::size_t, const Launch&)>& on_start) {
  launch_pending_[g] = false;
  if (busy_[g]) return {};
  const std::size_t first = g * group_size_;
  bool any = false;
  for (std::size_t m = 0; m < group_size_; ++m) any = any || ranks_[first + m]->can_launch();
  if (!any) return {};
  // Every rank plans its batch; those with none run vLLM's dummy batch (one token).
  std::int64_t largest = 0;
  std::int64_t sum = 0;
  bool planned = false;
  for (std::size_t m = 0; m < group_size_; ++m) {
    Replica& rep = *ranks_[first + m];
    const BatchShape* shape = rep.can_launch() ? rep.plan(now) : nullptr;
    launched_[first + m] = shape != nullptr;
    planned = planned || shape != nullptr;
    BatchShape& b = shapes_[m];
    if (shape != nullptr) {
      b = *shape;
    } else {
      b = BatchShape{};
      b.num_decodes = 1;
      b.decode_context_tokens = 1;
    }
    largest = std::max(largest, b.num_tokens());
    sum += b.num_tokens();
  }
  if (!planned) {
    for (std::size_t m = 0; m < group_size_; ++m) {
      const Replica& rep = *ranks_[first + m];
      VRAMSIM_CHECK(rep.num_unfinished() == 0 || rep.num_in_flight() > 0,
                    "replica {} is stuck: {} requests wait but none can be scheduled",
                    first + m, rep.num_unfinished());
    }
    return {GroupLaunchOutcome::kNonePlanned, Duration::zero()};
  }
  const std::int64_t group_tokens =
      pad_to_largest_ ? largest * static_cast<std::int64_t>(group_size_) : sum;
  StepTime slowest;
  for (std::size_t m = 0; m < group_size_; ++m) {
    BatchShape& b = shapes_[m];
    b.dp_rank = static_cast<std::int32_t>(m);
    b.dp_padded_tokens = pad_to_largest_ ? largest : b.num_tokens();
    b.dp_group_tokens = group_tokens;
    const StepTime t = time_model_.step_time(b);
    if (m == 0 || t.total > slowest.total) slowest = t;
  }
  Duration latency = Duration::zero();
  for (std::size_t m = 0; m < group_size_; ++m) {
    if (!launched_[first + m]) continue;
    const Launch l = ranks_[first + m]->start(now, slowest);
    VRAMSIM_CHECK(l.slot == 0, "a lock-stepped rank launched into slot {}", l.slot);
    latency = std::max(latency, l.latency);
    on_start(first + m, l);
  }
  busy_[g] = true;
  return {GroupLaunchOutcome::kStarted, latency};
}

void DpLockstepGroups::complete(std::size_t g, SimTime now, ServingMetrics& metrics,
                                std::vector<Request*>& finished,
                                const std::function<void(Request&)>& on_finished) {
  const std::size_t first = g * group_size_;
  for (std::size_t m = 0; m < group_size_; ++m) {
    if (!launched_[first + m]) continue;
    launched_[first + m] = false;
    finished.clear();
    ranks_[first + m]->complete(0, now, metrics, finished);
    for (Request* r : finished) on_finished(*r);
  }
  busy_[g] = false;
}

}  // namespace vramsim::serving
