// Multi-LoRA's share of a step: a decorator over any step-time model that adds, on every
// decoder layer, punica's shrink (x·A) and expand (·B) products of the four LoRA modules
// (memory/lora_memory.hpp) for the step's tokens that name an adapter.
//
// Each distinct adapter of the step runs its own products over its own tokens, reading its A
// and B once: per layer and adapter a with t_a tokens,
//
//   sum over modules  matmul(t_a, rank_a, input) + matmul(t_a, out_b, rank)
//
// each a datasheet roofline of the shared cost model (cost::datasheet_matmul_seconds: FLOPs
// against the matmul peak, weights and activations against the memory bandwidth), so a decode
// step is bound by reading the adapters' weights and grows with the number of adapters.
// NOTE: BatchShape carries the adapters' tokens together, so they are split evenly over the
// adapters; vLLM's sgmv kernels run the adapters of a step in one launch, which the sum of
// per-adapter rooflines bounds from above. The fully-sharded layers' extra all-gather and
// all-reduce of the T x rank shrink output are left out (T x rank x 4 B, under a percent of
// the layer's all-reduces at ranks up to 64).
//
// The term is added to `linear` and `total` (every stage's layers) and to `stage_interval`
// (the busiest stage's layers).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "sim/cost/datasheet.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/memory/lora_memory.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/parallelism.hpp"
#include "sim/serving/execution_time_model.hpp"

namespace vramsim::serving {

class LoraTimeModel final : public ExecutionTimeModel {
 public:
  /// `inner` must outlive this model.
  LoraTimeModel(const ExecutionTimeModel& inner, const model::ModelSpec& spec,
                const hardware::DeviceSpec& device, model::Parallelism par,
                const memory::LoraConfig& lora, const cost::Efficiencies& eff);

  StepTime step_time(const BatchShape& batch) const override;
  std::string describe() const override;

  /// The LoRA products of one decoder layer for `num_lora_tokens` tokens over `num_adapters`
  /// adapters (0 when either is 0), in seconds.
  double layer_seconds(std::int64_t num_lora_tokens, std::int64_t num_adapters) const;

 private:
  double adapter_layer_seconds(std::int64_t tokens) const;

  const ExecutionTimeModel& inner_;
  const hardware::DeviceSpec& device_;
  cost::Efficiencies eff_;
  DType dtype_;
  std::array<memory::LoraModule, 4> modules_;
  std::int64_t num_layers_ = 0;
  std::int64_t stage_layers_ = 0;  // the busiest pipeline stage's
};

}  // namespace vramsim::serving
