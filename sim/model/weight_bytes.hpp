// Weight bytes per device under tensor and pipeline parallelism, as vLLM lays them out.
//
//   * TP splits each tensor as weight_tensors.hpp documents (column / row / KV heads / vocab);
//     norms, routers and the biases of row-parallel layers are replicated on every TP rank.
//   * The vocab of embed_tokens and lm_head is padded to a multiple of 64 before the split
//     (vLLM DEFAULT_VOCAB_PADDING_SIZE in vocab_parallel_embedding.py), so a GPT-2 rank holds
//     50304 rows, not 50257.
//   * PP gives each stage the layers of stage_layers() (parallelism.hpp); the first stage also
//     holds the embeddings (and a vision tower), the last the final norm and lm_head. A tied
//     lm_head costs nothing extra at pp = 1 and a full copy on the last stage at pp > 1.
#pragma once

#include <cstdint>

#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/parallelism.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/model/weight_tensors.hpp"

namespace vramsim::model {

/// vLLM pads the vocabulary of embed_tokens and lm_head to a multiple of this.
inline constexpr std::int64_t kVocabPadding = 64;

/// Shape of one TP rank's shard of `t`: in x out, times copies.
struct ShardShape {
  std::int64_t in_features = 1;
  std::int64_t out_features = 1;
  std::int64_t copies = 1;
};
ShardShape shard_shape(const ModelSpec& spec, const WeightTensor& t, int tp);

/// Weight bytes of one device (any TP rank) of pipeline stage `pp_rank`. Throws ConfigError
/// when `par` cannot split the model (check_parallelism).
Bytes weight_bytes_on_stage(const ModelSpec& spec, const WeightFormat& fmt, Parallelism par,
                            int pp_rank);

/// The largest device's weight bytes over all stages. Throws ConfigError as above.
/// Llama-3.1-8B in bf16 at tp = pp = 1: 16,060,522,496 B (14.96 GiB).
Bytes weight_bytes_per_device(const ModelSpec& spec, const WeightFormat& fmt,
                              Parallelism par = {});

}  // namespace vramsim::model
