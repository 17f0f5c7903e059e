// The attention layers of a model grouped into classes by sliding window, per pipeline stage:
// the one grouping both serving step-time models (roofline and calibrated) cost attention over,
// so that a step loops over a few classes, never over layers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/dtype.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/parallelism.hpp"

namespace vramsim::cost {

/// The largest number of distinct sliding windows (0 = global counts as one) a model may use.
inline constexpr std::size_t kMaxAttentionClasses = 4;

/// The layers of one stage with one sliding window: their count and the sum of their KV bytes
/// per token on one device.
struct AttentionClass {
  double num_layers = 0;
  double kv_bytes_per_token = 0;  // all layers of the class together
  /// KV bytes per token of one layer of the class (0 for an empty class).
  double kv_bytes_per_layer_token() const {
    return num_layers > 0 ? kv_bytes_per_token / num_layers : 0.0;
  }
};

struct StageAttention {
  std::int64_t num_layers = 0;  // attention layers of the stage
  std::array<AttentionClass, kMaxAttentionClasses> classes{};  // by index into windows
};

struct AttentionClasses {
  std::vector<std::int64_t> windows;  // distinct sliding windows, ascending, 0 (global) if used
  std::vector<StageAttention> stages;  // per pipeline stage
};

/// Groups the layers of `spec` by sliding window for each of `par.pp` stages on one TP rank
/// (model::kv_layers). Throws ConfigError like kv_layers; checks that the model has at most
/// kMaxAttentionClasses windows.
AttentionClasses attention_classes(const model::ModelSpec& spec, DType kv_dtype,
                                   model::Parallelism par);

}  // namespace vramsim::cost
