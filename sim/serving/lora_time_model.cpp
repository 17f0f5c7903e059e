#include "sim/serving/lora_time_model.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/check.hpp"

namespace vramsim::serving {

LoraTimeModel::LoraTimeModel(const ExecutionTimeModel& inner, const model::ModelSpec& spec,
                             const hardware::DeviceSpec& device, model::Parallelism par,
                             const memory::LoraConfig& lora, const cost::Efficiencies& eff)
    : inner_(inner),
      device_(device),
      eff_(eff),
      dtype_(lora.dtype),
      modules_(memory::lora_modules(spec, par.tp, lora)),
      num_layers_(spec.num_layers) {
  VRAMSIM_CHECK(par.pp >= 1, "pp must be >= 1, got {}", par.pp);
  for (int stage = 0; stage < par.pp; ++stage) {
    stage_layers_ =
        std::max(stage_layers_, model::stage_layers(spec.num_layers, par.pp, stage).size());
  }
}

double LoraTimeModel::adapter_layer_seconds(std::int64_t tokens) const {
  double s = 0.0;
  for (const memory::LoraModule& m : modules_) {
    s += cost::datasheet_matmul_seconds(device_, eff_, dtype_, tokens, m.rank_a, m.input);
    s += cost::datasheet_matmul_seconds(device_, eff_, dtype_, tokens, m.out_b, m.rank);
  }
  return s;
}

double LoraTimeModel::layer_seconds(std::int64_t num_lora_tokens,
                                    std::int64_t num_adapters) const {
  if (num_lora_tokens <= 0 || num_adapters <= 0) return 0.0;
  VRAMSIM_CHECK(num_adapters <= num_lora_tokens, "{} adapters over {} tokens", num_adapters,
                num_lora_tokens);
  // An even split: `extra` adapters carry one token more than the others.
  const std::int64_t base = num_lora_tokens / num_adapters;
  const std::int64_t extra = num_lora_tokens % num_adapters;
  double s = static_cast<double>(num_adapters - extra) * adapter_layer_seconds(base);
  if (extra > 0) s += static_cast<double>(extra) * adapter_layer_seconds(base + 1);
  return s;
}

StepTime LoraTimeModel::step_time(const BatchShape& batch) const {
  StepTime t = inner_.step_time(batch);
  const double layer = layer_seconds(batch.num_lora_tokens, batch.num_adapters);
  if (layer == 0.0) return t;
  const Duration all = Duration::from_seconds(layer * static_cast<double>(num_layers_));
  const Duration stage = Duration::from_seconds(layer * static_cast<double>(stage_layers_));
  t.linear += all;
  t.total += all;
  t.stage_interval += stage;
  return t;
}

std::string LoraTimeModel::describe() const {
  return fmt::format("{} + LoRA shrink/expand ({})", inner_.describe(), to_string(dtype_));
}

}  // namespace vramsim::serving
