#include "sim/model/param_count.hpp"

#include "sim/model/weight_tensors.hpp"

namespace vramsim::model {

ParamCount count_params(const ModelSpec& spec) {
  ParamCount c;
  c.per_layer.assign(static_cast<std::size_t>(spec.num_layers), 0);
  c.per_layer_active.assign(static_cast<std::size_t>(spec.num_layers), 0);
  for (const WeightTensor& t : weight_tensors(spec)) {
    c.total += t.numel();
    c.active += t.active_numel();
    switch (t.kind) {
      case TensorKind::kEmbedding:
      case TensorKind::kPositionEmbedding: c.embedding += t.numel(); break;
      case TensorKind::kLmHead: c.lm_head += t.numel(); break;
      case TensorKind::kVision: c.vision += t.numel(); break;
      case TensorKind::kLinear:
      case TensorKind::kExpertLinear:
      case TensorKind::kRouter:
      case TensorKind::kVector: break;
    }
    if (t.name == "lm_head.bias") c.lm_head += t.numel();
    if (t.layer >= 0 && t.layer < spec.num_layers) {
      const auto i = static_cast<std::size_t>(t.layer);
      c.per_layer[i] += t.numel();
      c.per_layer_active[i] += t.active_numel();
    }
  }
  return c;
}

}  // namespace vramsim::model
