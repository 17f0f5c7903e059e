#include "sim/model/weight_bytes.hpp"

#include <algorithm>

#include "sim/core/check.hpp"

namespace vramsim::model {

ShardShape shard_shape(const ModelSpec& spec, const WeightTensor& t, int tp) {
  ShardShape s{t.in_features, t.out_features, t.copies};
  switch (t.split) {
    case TpSplit::kReplicated: break;
    case TpSplit::kColumn: s.out_features = ceil_div(t.out_features, tp); break;
    case TpSplit::kRow: s.in_features = ceil_div(t.in_features, tp); break;
    case TpSplit::kKvHeads:
      VRAMSIM_CHECK(t.out_features == spec.kv_width(), "{} is not KV-head shaped", t.name);
      s.out_features = kv_heads_per_device(spec, tp) * spec.head_dim;
      break;
    case TpSplit::kVocab: {
      // The vocab is the row count of the embedding table and the output width otherwise.
      std::int64_t& vocab = t.kind == TensorKind::kEmbedding ? s.in_features : s.out_features;
      vocab = ceil_div(ceil_div(vocab, kVocabPadding) * kVocabPadding, tp);
      break;
    }
  }
  return s;
}

Bytes weight_bytes_on_stage(const ModelSpec& spec, const WeightFormat& fmt, Parallelism par,
                            int pp_rank) {
  check_parallelism(spec, par);
  VRAMSIM_CHECK(pp_rank >= 0 && pp_rank < par.pp, "pp_rank {} outside [0, {})", pp_rank, par.pp);
  const LayerRange range = stage_layers(spec.num_layers, par.pp, pp_rank);
  const bool first = pp_rank == 0;
  const bool last = pp_rank == par.pp - 1;
  WeightFormat unquantized;
  unquantized.dtype = fmt.dtype;
  Bytes total;
  for (const WeightTensor& t : weight_tensors(spec)) {
    const bool here = t.layer == kPreLayers         ? first
                      : t.layer >= spec.num_layers ? last
                                                   : t.layer >= range.begin && t.layer < range.end;
    if (!here) continue;
    // A tied lm_head reads the embedding's storage, unless the pipeline put them apart.
    if (t.tied && par.pp == 1) continue;
    const ShardShape s = shard_shape(spec, t, par.tp);
    // A module the checkpoint lists as ignored (compressed-tensors ignore, fp8 ignored_layers)
    // is stored in the unquantized dtype; one a config group names, in that group's format.
    const WeightFormat& f = tensor_format(fmt, t, unquantized);
    total += s.copies * matrix_bytes(f, t.kind, s.in_features, s.out_features, t.in_features);
  }
  return total;
}

Bytes weight_bytes_per_device(const ModelSpec& spec, const WeightFormat& fmt, Parallelism par) {
  check_parallelism(spec, par);
  Bytes most;
  for (int rank = 0; rank < par.pp; ++rank) {
    most = max(most, weight_bytes_on_stage(spec, fmt, par, rank));
  }
  return most;
}

}  // namespace vramsim::model
