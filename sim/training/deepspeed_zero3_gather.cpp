// DeepSpeed ZeRO-3's persistent parameters and prefetch (deepspeed_zero3_gather.hpp).
#include "sim/training/deepspeed_zero3_gather.hpp"

#include <algorithm>
#include <limits>

#include "sim/core/check.hpp"
#include "sim/model/weight_tensors.hpp"

namespace vramsim::training {

std::int64_t PersistentParams::total() const {
  std::int64_t sum = embedding + head;
  for (const std::int64_t n : per_layer) sum += n;
  return sum;
}

PersistentParams persistent_params(const model::ModelSpec& spec, const TrainingPlan& plan) {
  PersistentParams out;
  out.per_layer.assign(static_cast<std::size_t>(spec.num_layers), 0);
  if (plan.strategy != Strategy::kZero3 || !plan.deepspeed_zero() || plan.lora.enabled()) {
    return out;
  }
  const std::int64_t tp = plan.tp;
  std::int64_t persisted = 0;
  // mark_persistent_parameters: the cap is checked first, so a tensor that would pass it is
  // skipped (persistent or not) and a later, smaller one may still fit.
  for (const model::WeightTensor& w : model::weight_tensors(spec)) {
    if (w.tied || w.kind == model::TensorKind::kVision) continue;
    const std::int64_t one = w.in_features * w.out_features;
    const std::int64_t local = w.split == model::TpSplit::kReplicated ? one : ceil_div(one, tp);
    for (std::int64_t copy = 0; copy < w.copies; ++copy) {
      if (local > plan.model_persistence_threshold - persisted) continue;
      if (local > plan.param_persistence_threshold) continue;
      persisted += local;
      ++out.num_tensors;
      if (w.layer == model::kPreLayers) {
        out.embedding += local;
      } else if (w.layer >= spec.num_layers) {
        out.head += local;
      } else {
        out.per_layer[static_cast<std::size_t>(w.layer)] += local;
      }
    }
  }
  return out;
}

ModuleHooks module_hooks(const model::ModelSpec& spec, const TrainingPlan& plan) {
  ModuleHooks out;
  out.per_layer.assign(static_cast<std::size_t>(spec.num_layers), 0);
  if (plan.strategy != Strategy::kZero3) return out;
  for (const model::WeightTensor& w : model::weight_tensors(spec)) {
    if (w.tied || w.kind == model::TensorKind::kVision) continue;
    if (w.layer == model::kPreLayers) {
      out.embedding += w.copies;
    } else if (w.layer >= spec.num_layers) {
      out.head += w.copies;
    } else {
      out.per_layer[static_cast<std::size_t>(w.layer)] += w.copies;
    }
  }
  return out;
}

std::vector<GatherPiece> plan_gathers(std::span<const std::int64_t> need,
                                      std::span<const std::int64_t> held, std::int64_t bucket,
                                      std::int64_t max_live, std::span<const std::int64_t> hooks) {
  VRAMSIM_CHECK(need.size() == held.size() && bucket >= 0 && max_live >= 0 &&
                    (hooks.empty() || hooks.size() == need.size()),
                "bad plan_gathers arguments: {} / {} / {} blocks, bucket {}, max_live {}",
                need.size(), held.size(), hooks.size(), bucket, max_live);
  const std::size_t n = need.size();
  std::vector<std::int64_t> issued(n, 0);  // elements of each block gathered or in flight
  std::vector<GatherPiece> pieces;
  std::size_t next = 0;  // the first block after the current one with elements not yet issued
  // Elements issued for the blocks after the current one (prefetched), kept as a running sum:
  // only a prefetch adds to it, and moving on to a block takes that block's share out.
  std::int64_t ahead = 0;
  for (std::size_t k = 0; k < n; ++k) {
    VRAMSIM_CHECK(need[k] >= 0 && held[k] >= 0, "negative elements at block {}", k);
    ahead -= issued[k];
    if (need[k] > issued[k]) {
      pieces.push_back({k, k, need[k] - issued[k]});
      issued[k] = need[k];
    }
    const std::int64_t alive = need[k] + ahead + held[k];
    // One bucket per module hook, saturating (a bucket near INT64_MAX means "everything").
    const std::int64_t n_hooks = hooks.empty() ? 1 : std::max<std::int64_t>(1, hooks[k]);
    const std::int64_t window =
        bucket > std::numeric_limits<std::int64_t>::max() / n_hooks
            ? std::numeric_limits<std::int64_t>::max()
            : bucket * n_hooks;
    std::int64_t budget = std::min(window, std::max<std::int64_t>(0, max_live - alive));
    next = std::max(next, k + 1);
    while (budget > 0 && next < n) {
      const std::int64_t take = std::min(budget, need[next] - issued[next]);
      if (take > 0) {
        pieces.push_back({next, k, take});
        issued[next] += take;
        ahead += take;
        budget -= take;
      }
      if (issued[next] == need[next]) ++next;
    }
  }
  return pieces;
}

}  // namespace vramsim::training
