#include "sim/model/flop_count.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/model/weight_tensors.hpp"

namespace vramsim::model {

namespace {

// Matmul FLOPs of each decoder layer, the OPT projections, and the lm_head, for one token.
struct LinearFlops {
  std::vector<double> per_layer;
  double outside_layers = 0;  // project_in / project_out
  double lm_head = 0;
};

LinearFlops linear_flops(const ModelSpec& spec) {
  LinearFlops f;
  f.per_layer.assign(static_cast<std::size_t>(spec.num_layers), 0.0);
  for (const WeightTensor& t : weight_tensors(spec)) {
    if (!t.matmul || t.kind == TensorKind::kVision) continue;
    // A tied lm_head has no parameters of its own but still multiplies.
    const double macs = static_cast<double>(t.in_features * t.out_features * t.active_copies);
    if (t.kind == TensorKind::kLmHead) {
      f.lm_head += 2.0 * macs;
    } else if (t.layer >= 0 && t.layer < spec.num_layers) {
      f.per_layer[static_cast<std::size_t>(t.layer)] += 2.0 * macs;
    } else {
      f.outside_layers += 2.0 * macs;
    }
  }
  return f;
}

std::int64_t attended(const LayerSpec& l, std::int64_t position) {
  const std::int64_t n = position + 1;
  return l.sliding_window > 0 ? std::min(n, l.sliding_window) : n;
}

// sum_{t = a}^{b} min(t, w) for 1 <= a <= b (w = 0: no cap).
double sum_capped(std::int64_t a, std::int64_t b, std::int64_t w) {
  auto sum_range = [](std::int64_t lo, std::int64_t hi) {  // lo + ... + hi
    return hi < lo ? 0.0 : static_cast<double>(hi - lo + 1) * static_cast<double>(lo + hi) / 2.0;
  };
  if (w <= 0 || b <= w) return sum_range(a, b);
  if (a > w) return static_cast<double>(b - a + 1) * static_cast<double>(w);
  return sum_range(a, w) + static_cast<double>(b - w) * static_cast<double>(w);
}

}  // namespace

double attention_flops_per_attended_token(const ModelSpec& spec, ForwardMode mode) {
  const auto heads = static_cast<double>(spec.num_attention_heads);
  if (!spec.mla) return 4.0 * heads * static_cast<double>(spec.head_dim);
  const MlaSpec& m = *spec.mla;
  switch (mode) {
    case ForwardMode::kPrefill:
      return 2.0 * heads * static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim) +
             2.0 * heads * static_cast<double>(m.v_head_dim);
    case ForwardMode::kDecode:
      return 2.0 * heads * static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) +
             2.0 * heads * static_cast<double>(m.kv_lora_rank);
  }
  VRAMSIM_UNREACHABLE("invalid ForwardMode");
}

std::vector<LayerFlops> layer_flops(const ModelSpec& spec, std::int64_t position,
                                    ForwardMode mode) {
  VRAMSIM_CHECK(position >= 0, "negative position {}", position);
  const LinearFlops lin = linear_flops(spec);
  const double per_token = attention_flops_per_attended_token(spec, mode);
  std::vector<LayerFlops> out;
  out.reserve(spec.layers.size());
  for (std::size_t i = 0; i < spec.layers.size(); ++i) {
    const auto n = static_cast<double>(attended(spec.layers[i], position));
    out.push_back({static_cast<std::int64_t>(i), Flops(lin.per_layer[i]), Flops(per_token * n)});
  }
  return out;
}

TokenFlops flops_per_token(const ModelSpec& spec, std::int64_t position, ForwardMode mode) {
  TokenFlops t;
  for (const LayerFlops& l : layer_flops(spec, position, mode)) {
    t.linear += l.linear;
    t.attention += l.attention;
  }
  const LinearFlops lin = linear_flops(spec);
  t.linear += Flops(lin.outside_layers);
  t.lm_head = Flops(lin.lm_head);
  return t;
}

Flops prefill_flops(const ModelSpec& spec, std::int64_t num_tokens, std::int64_t num_cached,
                    bool all_logits) {
  VRAMSIM_CHECK(num_tokens >= 0 && num_cached >= 0, "negative token counts {} / {}", num_tokens,
                num_cached);
  if (num_tokens == 0) return Flops(0.0);
  const LinearFlops lin = linear_flops(spec);
  double linear = lin.outside_layers;
  for (double f : lin.per_layer) linear += f;
  const double per_token = attention_flops_per_attended_token(spec, ForwardMode::kPrefill);
  double attention = 0.0;
  for (const LayerSpec& l : spec.layers) {
    // Token at position p attends p + 1 tokens: positions num_cached .. num_cached + n - 1.
    attention += per_token * sum_capped(num_cached + 1, num_cached + num_tokens, l.sliding_window);
  }
  const double logits = all_logits ? static_cast<double>(num_tokens) : 1.0;
  return Flops(static_cast<double>(num_tokens) * linear + attention + logits * lin.lm_head);
}

Flops decode_flops(const ModelSpec& spec, std::int64_t context_len) {
  VRAMSIM_CHECK(context_len >= 1, "a decode step needs a context of at least 1, got {}",
                context_len);
  return flops_per_token(spec, context_len - 1, ForwardMode::kDecode).total();
}

}  // namespace vramsim::model
