#include "sim/model/weight_tensors.hpp"

#include "sim/core/check.hpp"

namespace vramsim::model {

namespace {

// Appends tensors of one layer to the inventory.
class LayerBuilder {
 public:
  LayerBuilder(const ModelSpec& spec, std::vector<WeightTensor>& out, std::int64_t layer)
      : spec_(spec), out_(out), layer_(layer) {}

  void linear(std::string_view name, std::int64_t in, std::int64_t out, TpSplit split,
              TensorKind kind = TensorKind::kLinear) {
    out_.push_back({name, layer_, in, out, copies_, active_, kind, split, true, false});
  }
  void vector(std::string_view name, std::int64_t n, TpSplit split) {
    out_.push_back({name, layer_, 1, n, copies_, active_, vector_kind_, split, false, false});
  }
  // A normalisation over n features: weight, plus bias for LayerNorm.
  void norm(std::string_view weight_name, std::string_view bias_name, std::int64_t n) {
    vector(weight_name, n, TpSplit::kReplicated);
    if (spec_.norm == NormKind::kLayerNorm) vector(bias_name, n, TpSplit::kReplicated);
  }
  // Tensors added until reset_copies() stand for `copies` same-shaped modules, `active` of which
  // one token uses.
  void set_copies(std::int64_t copies, std::int64_t active) {
    copies_ = copies;
    active_ = active;
  }
  void reset_copies() { set_copies(1, 1); }
  void set_vector_kind(TensorKind k) { vector_kind_ = k; }

 private:
  const ModelSpec& spec_;
  std::vector<WeightTensor>& out_;
  std::int64_t layer_;
  std::int64_t copies_ = 1;
  std::int64_t active_ = 1;
  TensorKind vector_kind_ = TensorKind::kVector;
};

void add_standard_attention(const ModelSpec& s, LayerBuilder& b) {
  const std::int64_t h = s.hidden_size;
  b.linear("q_proj", h, s.q_width(), TpSplit::kColumn);
  b.linear("k_proj", h, s.kv_width(), TpSplit::kKvHeads);
  b.linear("v_proj", h, s.kv_width(), TpSplit::kKvHeads);
  if (s.qkv_bias) {
    b.vector("q_proj.bias", s.q_width(), TpSplit::kColumn);
    b.vector("k_proj.bias", s.kv_width(), TpSplit::kKvHeads);
    b.vector("v_proj.bias", s.kv_width(), TpSplit::kKvHeads);
  }
  b.linear("o_proj", s.q_width(), h, TpSplit::kRow);
  if (s.o_bias) b.vector("o_proj.bias", h, TpSplit::kReplicated);
  if (s.qk_norm) {
    b.norm("q_norm", "q_norm.bias", s.head_dim);
    b.norm("k_norm", "k_norm.bias", s.head_dim);
  }
}

// DeepSeek-V2 MLA (modeling_deepseek.py DeepseekV2Attention; vLLM deepseek_v2.py).
void add_mla_attention(const ModelSpec& s, LayerBuilder& b) {
  const MlaSpec& m = *s.mla;
  const std::int64_t h = s.hidden_size;
  const std::int64_t heads = s.num_attention_heads;
  const std::int64_t qk_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  if (m.q_lora_rank > 0) {
    b.linear("q_a_proj", h, m.q_lora_rank, TpSplit::kReplicated);
    b.vector("q_a_layernorm", m.q_lora_rank, TpSplit::kReplicated);
    b.linear("q_b_proj", m.q_lora_rank, heads * qk_dim, TpSplit::kColumn);
  } else {
    b.linear("q_proj", h, heads * qk_dim, TpSplit::kColumn);
  }
  b.linear("kv_a_proj_with_mqa", h, m.kv_lora_rank + m.qk_rope_head_dim, TpSplit::kReplicated);
  b.vector("kv_a_layernorm", m.kv_lora_rank, TpSplit::kReplicated);
  b.linear("kv_b_proj", m.kv_lora_rank, heads * (m.qk_nope_head_dim + m.v_head_dim),
           TpSplit::kColumn);
  b.linear("o_proj", heads * m.v_head_dim, h, TpSplit::kRow);
  if (s.o_bias) b.vector("o_proj.bias", h, TpSplit::kReplicated);
}

// A dense MLP of inner size `inner`; `prefix` distinguishes shared experts.
void add_dense_mlp(const ModelSpec& s, LayerBuilder& b, std::int64_t inner, bool shared,
                   TensorKind kind = TensorKind::kLinear, bool bias = false) {
  const std::int64_t h = s.hidden_size;
  if (s.mlp == MlpKind::kGated || shared || kind == TensorKind::kExpertLinear) {
    b.linear(shared ? "shared_expert.gate_proj" : "gate_proj", h, inner, TpSplit::kColumn, kind);
    b.linear(shared ? "shared_expert.up_proj" : "up_proj", h, inner, TpSplit::kColumn, kind);
    b.linear(shared ? "shared_expert.down_proj" : "down_proj", inner, h, TpSplit::kRow, kind);
    if (bias) {
      b.vector("gate_proj.bias", inner, TpSplit::kColumn);
      b.vector("up_proj.bias", inner, TpSplit::kColumn);
      b.vector("down_proj.bias", h, TpSplit::kReplicated);
    }
  } else {
    b.linear("fc1", h, inner, TpSplit::kColumn, kind);
    if (bias) b.vector("fc1.bias", inner, TpSplit::kColumn);
    b.linear("fc2", inner, h, TpSplit::kRow, kind);
    if (bias) b.vector("fc2.bias", h, TpSplit::kReplicated);
  }
}

void add_moe(const ModelSpec& s, LayerBuilder& b) {
  const MoeSpec& m = *s.moe;
  const std::int64_t h = s.hidden_size;
  b.linear("router", h, m.num_experts, TpSplit::kReplicated, TensorKind::kRouter);
  if (m.router_bias) b.vector("router.bias", m.num_experts, TpSplit::kReplicated);
  b.set_copies(m.num_experts, m.num_experts_per_tok);
  add_dense_mlp(s, b, m.expert_intermediate_size, false, TensorKind::kExpertLinear,
                m.expert_bias);
  b.reset_copies();
  if (m.shared_intermediate_size > 0) {
    add_dense_mlp(s, b, m.shared_intermediate_size, true);
  }
  if (m.shared_expert_gate) {
    b.linear("shared_expert_gate", h, 1, TpSplit::kReplicated, TensorKind::kRouter);
  }
}

void add_decoder_layer(const ModelSpec& s, std::vector<WeightTensor>& out, std::int64_t i) {
  LayerBuilder b(s, out, i);
  const std::int64_t h = s.hidden_size;
  b.norm("input_layernorm", "input_layernorm.bias", h);
  if (s.mla) {
    add_mla_attention(s, b);
  } else {
    add_standard_attention(s, b);
  }
  if (s.attention_sinks) b.vector("sinks", s.num_attention_heads, TpSplit::kColumn);
  // Norms beyond the first: post_attention_layernorm (2), Gemma-2's post_attention /
  // pre_feedforward / post_feedforward (4).
  static constexpr std::string_view kExtraNorms[] = {"post_attention_layernorm",
                                                     "pre_feedforward_layernorm",
                                                     "post_feedforward_layernorm"};
  static constexpr std::string_view kExtraBiases[] = {"post_attention_layernorm.bias",
                                                      "pre_feedforward_layernorm.bias",
                                                      "post_feedforward_layernorm.bias"};
  for (int n = 1; n < s.norms_per_layer; ++n) {
    b.norm(kExtraNorms[n - 1], kExtraBiases[n - 1], h);
  }
  if (s.layers[static_cast<std::size_t>(i)].moe) {
    add_moe(s, b);
  } else {
    add_dense_mlp(s, b, s.intermediate_size, false, TensorKind::kLinear, s.mlp_bias);
  }
}

// Qwen2.5-VL's vision transformer and patch merger (HF modeling_qwen2_5_vl.py):
// patch_embed Conv3d(in_channels, hidden, (temporal_patch, patch, patch), bias=False); per
// block norm1 / norm2 (RMSNorm), attn.qkv and attn.proj with biases, a gated SiLU MLP
// (gate_proj, up_proj, down_proj) with biases; merger ln_q (RMSNorm), then
// Linear(hidden * m^2, hidden * m^2) + GELU + Linear(hidden * m^2, out_hidden), both with bias.
// vLLM shards the blocks' linears over TP as the decoder's (qkv column, proj row).
void add_qwen2_5_vl_vision(const ModelSpec& s, std::vector<WeightTensor>& out) {
  const VisionSpec& v = *s.vision;
  LayerBuilder b(s, out, kPreLayers);
  b.set_vector_kind(TensorKind::kVision);
  const TensorKind k = TensorKind::kVision;
  const std::int64_t hv = v.hidden_size;
  const std::int64_t merged = hv * v.spatial_merge_size * v.spatial_merge_size;
  b.linear("visual.patch_embed.proj",
           v.num_channels * v.temporal_patch_size * v.patch_size * v.patch_size, hv,
           TpSplit::kReplicated, k);
  b.set_copies(v.num_layers, v.num_layers);
  b.vector("visual.blocks.norm1", hv, TpSplit::kReplicated);
  b.vector("visual.blocks.norm2", hv, TpSplit::kReplicated);
  b.linear("visual.blocks.attn.qkv", hv, 3 * hv, TpSplit::kColumn, k);
  b.vector("visual.blocks.attn.qkv.bias", 3 * hv, TpSplit::kColumn);
  b.linear("visual.blocks.attn.proj", hv, hv, TpSplit::kRow, k);
  b.vector("visual.blocks.attn.proj.bias", hv, TpSplit::kReplicated);
  for (std::string_view n : {"visual.blocks.mlp.gate_proj", "visual.blocks.mlp.up_proj"}) {
    b.linear(n, hv, v.intermediate_size, TpSplit::kColumn, k);
  }
  b.vector("visual.blocks.mlp.gate_proj.bias", v.intermediate_size, TpSplit::kColumn);
  b.vector("visual.blocks.mlp.up_proj.bias", v.intermediate_size, TpSplit::kColumn);
  b.linear("visual.blocks.mlp.down_proj", v.intermediate_size, hv, TpSplit::kRow, k);
  b.vector("visual.blocks.mlp.down_proj.bias", hv, TpSplit::kReplicated);
  b.reset_copies();
  b.vector("visual.merger.ln_q", hv, TpSplit::kReplicated);
  b.linear("visual.merger.mlp.0", merged, merged, TpSplit::kColumn, k);
  b.vector("visual.merger.mlp.0.bias", merged, TpSplit::kColumn);
  b.linear("visual.merger.mlp.2", merged, v.out_hidden_size, TpSplit::kRow, k);
  b.vector("visual.merger.mlp.2.bias", v.out_hidden_size, TpSplit::kReplicated);
}

// Gemma 3's SigLIP encoder and projector (HF modeling_siglip.py, modeling_gemma3.py):
// patch_embedding Conv2d with bias, position_embedding (image_size / patch_size)^2 rows; per
// layer layer_norm1 / layer_norm2 (weight and bias), q, k, v, out_proj and fc1, fc2 with biases;
// post_layernorm; the projector's mm_soft_emb_norm (RMSNorm) and mm_input_projection_weight
// [vision hidden, text hidden] (the average pool to mm_tokens_per_image has no weights).
void add_siglip_vision(const ModelSpec& s, std::vector<WeightTensor>& out) {
  const VisionSpec& v = *s.vision;
  LayerBuilder b(s, out, kPreLayers);
  b.set_vector_kind(TensorKind::kVision);
  const TensorKind k = TensorKind::kVision;
  const std::int64_t hv = v.hidden_size;
  const std::int64_t side = v.image_size / v.patch_size;
  b.linear("vision.patch_embedding", v.num_channels * v.patch_size * v.patch_size, hv,
           TpSplit::kReplicated, k);
  b.vector("vision.patch_embedding.bias", hv, TpSplit::kReplicated);
  b.vector("vision.position_embedding", side * side * hv, TpSplit::kReplicated);
  b.set_copies(v.num_layers, v.num_layers);
  b.vector("vision.layer_norm1", 2 * hv, TpSplit::kReplicated);  // weight and bias
  b.vector("vision.layer_norm2", 2 * hv, TpSplit::kReplicated);
  for (std::string_view n : {"vision.q_proj", "vision.k_proj", "vision.v_proj"}) {
    b.linear(n, hv, hv, TpSplit::kColumn, k);
  }
  b.vector("vision.qkv.bias", 3 * hv, TpSplit::kColumn);
  b.linear("vision.out_proj", hv, hv, TpSplit::kRow, k);
  b.vector("vision.out_proj.bias", hv, TpSplit::kReplicated);
  b.linear("vision.fc1", hv, v.intermediate_size, TpSplit::kColumn, k);
  b.vector("vision.fc1.bias", v.intermediate_size, TpSplit::kColumn);
  b.linear("vision.fc2", v.intermediate_size, hv, TpSplit::kRow, k);
  b.vector("vision.fc2.bias", hv, TpSplit::kReplicated);
  b.reset_copies();
  b.vector("vision.post_layernorm", 2 * hv, TpSplit::kReplicated);
  b.vector("projector.mm_soft_emb_norm", hv, TpSplit::kReplicated);
  b.linear("projector.mm_input_projection", hv, s.hidden_size, TpSplit::kReplicated, k);
}

// Pixtral encoder + Mistral3 projector (HF modeling_pixtral.py, modeling_mistral3.py).
void add_vision(const ModelSpec& s, std::vector<WeightTensor>& out) {
  const VisionSpec& v = *s.vision;
  if (v.encoder == VisionEncoder::kQwen2_5Vl) {
    add_qwen2_5_vl_vision(s, out);
    return;
  }
  if (v.encoder == VisionEncoder::kSiglip) {
    add_siglip_vision(s, out);
    return;
  }
  LayerBuilder b(s, out, kPreLayers);
  b.set_vector_kind(TensorKind::kVision);
  const TensorKind k = TensorKind::kVision;
  const std::int64_t hv = v.hidden_size;
  b.linear("vision.patch_conv", v.num_channels * v.patch_size * v.patch_size, hv,
           TpSplit::kReplicated, k);
  b.vector("vision.ln_pre", hv, TpSplit::kReplicated);
  b.set_copies(v.num_layers, v.num_layers);
  b.vector("vision.attention_norm", hv, TpSplit::kReplicated);
  for (std::string_view n : {"vision.q_proj", "vision.k_proj", "vision.v_proj"}) {
    b.linear(n, hv, hv, TpSplit::kColumn, k);
  }
  b.linear("vision.o_proj", hv, hv, TpSplit::kRow, k);
  b.vector("vision.ffn_norm", hv, TpSplit::kReplicated);
  b.linear("vision.gate_proj", hv, v.intermediate_size, TpSplit::kColumn, k);
  b.linear("vision.up_proj", hv, v.intermediate_size, TpSplit::kColumn, k);
  b.linear("vision.down_proj", v.intermediate_size, hv, TpSplit::kRow, k);
  b.reset_copies();
  b.vector("projector.norm", hv, TpSplit::kReplicated);
  b.linear("projector.merging_layer", hv * v.spatial_merge_size * v.spatial_merge_size, hv,
           TpSplit::kReplicated, k);
  b.linear("projector.linear_1", hv, s.hidden_size, TpSplit::kColumn, k);
  if (v.projector_bias) b.vector("projector.linear_1.bias", s.hidden_size, TpSplit::kColumn);
  b.linear("projector.linear_2", s.hidden_size, s.hidden_size, TpSplit::kRow, k);
  if (v.projector_bias) b.vector("projector.linear_2.bias", s.hidden_size, TpSplit::kReplicated);
}

}  // namespace

std::vector<WeightTensor> weight_tensors(const ModelSpec& s) {
  VRAMSIM_CHECK(static_cast<std::int64_t>(s.layers.size()) == s.num_layers,
                "ModelSpec '{}' has {} layer entries for {} layers", s.name, s.layers.size(),
                s.num_layers);
  std::vector<WeightTensor> out;
  out.reserve(static_cast<std::size_t>(s.num_layers) * 24 + 32);
  const std::int64_t h = s.hidden_size;
  const std::int64_t post = s.num_layers;

  out.push_back({"embed_tokens", kPreLayers, s.vocab_size, s.embed_dim, 1, 1,
                 TensorKind::kEmbedding, TpSplit::kVocab, false, false});
  if (s.learned_positions > 0) {
    out.push_back({"embed_positions", kPreLayers, s.learned_positions, h, 1, 1,
                   TensorKind::kPositionEmbedding, TpSplit::kReplicated, false, false});
  }
  if (s.embed_dim != h) {
    out.push_back({"project_in", kPreLayers, s.embed_dim, h, 1, 1, TensorKind::kLinear,
                   TpSplit::kReplicated, true, false});
  }
  if (s.vision) add_vision(s, out);

  for (std::int64_t i = 0; i < s.num_layers; ++i) add_decoder_layer(s, out, i);

  LayerBuilder tail(s, out, post);
  if (s.final_norm) tail.norm("norm", "norm.bias", h);
  if (s.embed_dim != h) {
    out.push_back({"project_out", post, h, s.embed_dim, 1, 1, TensorKind::kLinear,
                   TpSplit::kReplicated, true, false});
  }
  out.push_back({"lm_head", post, s.embed_dim, s.vocab_size, 1, 1, TensorKind::kLmHead,
                 TpSplit::kVocab, true, s.tie_word_embeddings});
  if (s.lm_head_bias) tail.vector("lm_head.bias", s.vocab_size, TpSplit::kVocab);
  return out;
}

}  // namespace vramsim::model
