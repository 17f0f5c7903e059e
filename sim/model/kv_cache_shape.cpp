#include "sim/model/kv_cache_shape.hpp"

#include <algorithm>

#include "sim/core/check.hpp"

namespace vramsim::model {

Bytes LayerKv::bytes_for_tokens(std::int64_t tokens) const {
  VRAMSIM_CHECK(tokens >= 0, "negative token count {}", tokens);
  const std::int64_t held = sliding_window > 0 ? std::min(tokens, sliding_window) : tokens;
  return held * bytes_per_token;
}

std::vector<LayerKv> kv_layers(const ModelSpec& spec, DType kv_dtype, Parallelism par,
                               int pp_rank) {
  check_parallelism(spec, par);
  VRAMSIM_CHECK(pp_rank >= 0 && pp_rank < par.pp, "pp_rank {} outside [0, {})", pp_rank, par.pp);
  const std::int64_t values_per_token =
      spec.mla ? spec.mla->kv_lora_rank + spec.mla->qk_rope_head_dim
               : 2 * kv_heads_per_device(spec, par.tp) * spec.head_dim;
  const Bytes per_token(ceil_div(values_per_token * bits_of(kv_dtype), 8));
  const LayerRange range = stage_layers(spec.num_layers, par.pp, pp_rank);
  std::vector<LayerKv> out;
  out.reserve(static_cast<std::size_t>(range.size()));
  for (std::int64_t i = range.begin; i < range.end; ++i) {
    out.push_back({i, per_token, spec.layers[static_cast<std::size_t>(i)].sliding_window});
  }
  return out;
}

namespace {

template <typename PerLayer>
Bytes largest_stage(const ModelSpec& spec, DType kv_dtype, Parallelism par, PerLayer bytes) {
  Bytes most;
  for (int rank = 0; rank < par.pp; ++rank) {
    Bytes stage;
    for (const LayerKv& l : kv_layers(spec, kv_dtype, par, rank)) stage += bytes(l);
    most = max(most, stage);
  }
  return most;
}

}  // namespace

Bytes kv_bytes_per_token(const ModelSpec& spec, DType kv_dtype, Parallelism par) {
  check_parallelism(spec, par);
  return largest_stage(spec, kv_dtype, par, [](const LayerKv& l) { return l.bytes_per_token; });
}

Bytes kv_bytes_for_tokens(const ModelSpec& spec, DType kv_dtype, Parallelism par,
                          std::int64_t tokens) {
  check_parallelism(spec, par);
  VRAMSIM_CHECK(tokens >= 0, "negative token count {}", tokens);
  return largest_stage(spec, kv_dtype, par,
                       [tokens](const LayerKv& l) { return l.bytes_for_tokens(tokens); });
}

}  // namespace vramsim::model
