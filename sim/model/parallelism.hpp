// How a model is split over devices for inference the way vLLM does it: tensor parallelism
// (tp) inside each pipeline stage, pipeline parallelism (pp) over contiguous layer ranges.
#pragma once

#include <cstdint>

#include "sim/core/error.hpp"
#include "sim/model/model_spec.hpp"

namespace vramsim::model {

struct Parallelism {
  int tp = 1;  // --tensor-parallel-size
  int pp = 1;  // --pipeline-parallel-size
};

/// Every reason `par` cannot split `spec` as vLLM would, each on field "tp" or "pp" with the
/// model field it clashes with in the message: tp must divide num_attention_heads; KV heads are
/// split when tp <= num_key_value_heads (tp must divide them) and replicated when tp is larger
/// (then num_key_value_heads must divide tp); tp must divide each MLP inner size; pp must not
/// exceed num_hidden_layers. Empty when the split is valid.
ValidationReport validate_parallelism(const ModelSpec& spec, Parallelism par);

/// Throws ConfigError with every problem of validate_parallelism.
void check_parallelism(const ModelSpec& spec, Parallelism par);

/// Decoder layers [begin, end) of pipeline stage `rank`.
struct LayerRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end - begin; }
};

/// vLLM's get_pp_indices (vllm/distributed/utils.py): num_layers / pp layers per stage, and the
/// remainder given one each to the stages just before the last (the last stage also runs the
/// final norm, lm_head and sampling). 22 layers over 4 stages: 5, 6, 6, 5. Requires
/// 1 <= pp <= num_layers and 0 <= rank < pp.
LayerRange stage_layers(std::int64_t num_layers, int pp, int rank);

/// KV heads one TP rank holds: num_kv_heads / tp, or 1 (replicated) when tp > num_kv_heads.
std::int64_t kv_heads_per_device(const ModelSpec& spec, int tp);

}  // namespace vramsim::model
