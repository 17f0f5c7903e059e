#include "sim/model/hf_config_families.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/check.hpp"

namespace vramsim::model::detail {

namespace {

// The keys every family shares, under their usual names. `tie_default` is the config class's
// default for tie_word_embeddings (PretrainedConfig: true; Llama, Mistral, Qwen...: false).
FamilyResult read_core(ConfigKeys& k, ModelSpec& s, bool tie_default) {
  FamilyResult r;
  s.num_layers = k.required_positive("num_hidden_layers", "number of decoder layers");
  s.hidden_size = k.required_positive("hidden_size", "width of the residual stream");
  s.num_attention_heads = k.required_positive("num_attention_heads", "query heads per layer");
  // HF: num_key_value_heads None means multi-head attention (as many KV heads as query heads).
  s.num_kv_heads = k.optional_positive("num_key_value_heads").value_or(s.num_attention_heads);
  if (std::optional<std::int64_t> hd = k.optional_positive("head_dim")) {
    s.head_dim = *hd;
    r.explicit_head_dim = true;
  } else if (s.num_attention_heads > 0) {
    s.head_dim = s.hidden_size / s.num_attention_heads;
  }
  s.intermediate_size = k.required_positive("intermediate_size", "inner size of the MLP");
  s.vocab_size = k.required_positive("vocab_size", "number of token ids");
  s.max_position_embeddings = k.optional_positive("max_position_embeddings").value_or(0);
  s.tie_word_embeddings = k.boolean_or("tie_word_embeddings", tie_default);
  s.embed_dim = s.hidden_size;
  s.layers.assign(static_cast<std::size_t>(s.num_layers), LayerSpec{});
  return r;
}

// Llama-style `attention_bias` (q, k, v and o) and `mlp_bias` keys.
void read_llama_biases(ConfigKeys& k, ModelSpec& s, bool attention_default) {
  s.qkv_bias = s.o_bias = k.boolean_or("attention_bias", attention_default);
  s.mlp_bias = k.boolean_or("mlp_bias", false);
}

void set_window(ModelSpec& s, std::size_t layer, std::int64_t window) {
  s.layers[layer].sliding_window = window;
}

// An explicit `layer_types` list ("sliding_attention" / "full_attention"), as gpt-oss and newer
// transformers write. Returns false when the config has none.
bool windows_from_layer_types(ConfigKeys& k, ModelSpec& s) {
  const nlohmann::json* types = k.find("layer_types");
  if (types == nullptr) return false;
  if (!types->is_array() || static_cast<std::int64_t>(types->size()) != s.num_layers) {
    k.error("layer_types", fmt::format("expected a list of {} entries (one per layer, as "
                                       "num_hidden_layers), got {}",
                                       s.num_layers, describe_json(*types)));
    return true;
  }
  const std::optional<std::int64_t> window = k.optional_positive("sliding_window");
  for (std::size_t i = 0; i < types->size(); ++i) {
    const nlohmann::json& t = (*types)[i];
    if (t == "full_attention") continue;
    if (t != "sliding_attention") {
      k.error("layer_types", fmt::format("entry {} is {}; expected \"sliding_attention\" or "
                                         "\"full_attention\"",
                                         i, describe_json(t)));
      continue;
    }
    if (!window) {
      k.error("sliding_window", "missing (layer_types has sliding_attention layers; expected the "
                                "window in tokens)");
      return true;
    }
    set_window(s, i, *window);
  }
  return true;
}

// Mistral-7B-v0.1, Mixtral, phi-3: a non-null sliding_window applies to every layer.
void windows_all_layers(ConfigKeys& k, ModelSpec& s) {
  if (std::optional<std::int64_t> w = k.optional_positive("sliding_window")) {
    for (std::size_t i = 0; i < s.layers.size(); ++i) set_window(s, i, *w);
  }
}

// Qwen2/Qwen3 (dense and MoE): sliding_window is ignored unless use_sliding_window is true;
// then layers from max_window_layers on slide (HF Qwen2Attention; Qwen2Config default 28).
void windows_qwen(ConfigKeys& k, ModelSpec& s) {
  const bool use = k.boolean_or("use_sliding_window", false);
  const std::optional<std::int64_t> w = k.optional_positive("sliding_window");
  if (!use || !w) return;
  const std::int64_t first = k.non_negative_or("max_window_layers", 28);
  for (std::int64_t i = first; i < s.num_layers; ++i) set_window(s, static_cast<std::size_t>(i), *w);
}

// Gemma-2 / gpt-oss without layer_types: even layers (0, 2, ...) slide, odd layers are global
// (HF Gemma2Config: "sliding_attention" if (i + 1) % 2 else "full_attention").
void windows_alternating(ConfigKeys& k, ModelSpec& s) {
  const std::int64_t w =
      k.required_positive("sliding_window", "window of the local-attention layers in tokens");
  for (std::size_t i = 0; i < s.layers.size(); i += 2) set_window(s, i, w);
}

// Gemma 3's decoder (HF Gemma3TextConfig, transformers 4.50): Google's config.json files leave
// out the keys whose class defaults they use (gemma-3-4b-it names no head counts), so the
// defaults are the class's: vocab_size 262208, num_attention_heads 8, num_key_value_heads 4,
// head_dim 256, max_position_embeddings 131072, sliding_window 4096, sliding_window_pattern 6,
// tie_word_embeddings true. Layers carry q_norm / k_norm over head_dim and Gemma 2's four
// norms; every sliding_window_pattern-th layer is global ((i + 1) % pattern == 0), the others
// slide, unless a layer_types list says otherwise.
FamilyResult read_gemma3_text(ConfigKeys& k, ModelSpec& s) {
  FamilyResult r;
  s.num_layers = k.required_positive("num_hidden_layers", "number of decoder layers");
  s.hidden_size = k.required_positive("hidden_size", "width of the residual stream");
  s.num_attention_heads = k.optional_positive("num_attention_heads").value_or(8);
  s.num_kv_heads = k.optional_positive("num_key_value_heads").value_or(4);
  s.head_dim = k.optional_positive("head_dim").value_or(256);
  r.explicit_head_dim = true;  // Gemma's head_dim is its own, never hidden / heads
  s.intermediate_size = k.required_positive("intermediate_size", "inner size of the MLP");
  s.vocab_size = k.optional_positive("vocab_size").value_or(262'208);
  s.max_position_embeddings = k.optional_positive("max_position_embeddings").value_or(131'072);
  s.tie_word_embeddings = k.boolean_or("tie_word_embeddings", true);
  s.embed_dim = s.hidden_size;
  s.layers.assign(static_cast<std::size_t>(s.num_layers), LayerSpec{});
  s.qkv_bias = s.o_bias = k.boolean_or("attention_bias", false);
  s.qk_norm = true;
  s.norms_per_layer = 4;
  if (!windows_from_layer_types(k, s)) {
    const std::int64_t window = k.optional_positive("sliding_window").value_or(4096);
    const std::int64_t pattern = k.optional_positive("sliding_window_pattern").value_or(6);
    for (std::int64_t i = 0; i < s.num_layers; ++i) {
      if ((i + 1) % pattern != 0) set_window(s, static_cast<std::size_t>(i), window);
    }
  }
  return r;
}

void all_layers_moe(ModelSpec& s) {
  for (LayerSpec& l : s.layers) l.moe = true;
}

// Qwen2-MoE / Qwen3-MoE: num_experts, num_experts_per_tok, moe_intermediate_size,
// decoder_sparse_step, mlp_only_layers (HF Qwen3MoeDecoderLayer).
void read_qwen_moe(ConfigKeys& k, ModelSpec& s, bool shared) {
  MoeSpec m;
  m.num_experts = k.required_positive("num_experts", "routed experts per MoE layer");
  m.num_experts_per_tok = k.required_positive("num_experts_per_tok", "experts per token");
  m.expert_intermediate_size =
      k.required_positive("moe_intermediate_size", "inner size of each routed expert");
  if (shared) {
    m.shared_intermediate_size = k.non_negative_or("shared_expert_intermediate_size", 0);
    m.shared_expert_gate = m.shared_intermediate_size > 0;
  }
  const std::int64_t step = k.optional_positive("decoder_sparse_step").value_or(1);
  for (std::int64_t i = 0; i < s.num_layers; ++i) {
    s.layers[static_cast<std::size_t>(i)].moe = (i + 1) % step == 0;
  }
  if (const nlohmann::json* only = k.find("mlp_only_layers")) {
    if (!only->is_array()) {
      k.error("mlp_only_layers", fmt::format("expected a list of layer indices, got {}",
                                             describe_json(*only)));
    } else {
      for (const nlohmann::json& v : *only) {
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
            v.get<std::int64_t>() >= s.num_layers) {
          k.error("mlp_only_layers", fmt::format("entry {} is not a layer index in [0, {})",
                                                 describe_json(v), s.num_layers));
          continue;
        }
        s.layers[v.get<std::size_t>()].moe = false;
      }
    }
  }
  s.moe = m;
}

void read_deepseek_v2(ConfigKeys& k, ModelSpec& s) {
  if (k.boolean_or("attention_bias", false)) {
    k.error("attention_bias", "true is not supported for deepseek_v2 (expected false, as in "
                              "every released DeepSeek-V2 config)");
  }
  MlaSpec m;
  m.q_lora_rank = k.optional_positive("q_lora_rank").value_or(0);  // null: no query LoRA
  m.kv_lora_rank = k.required_positive("kv_lora_rank", "rank of the compressed KV latent");
  m.qk_nope_head_dim = k.required_positive("qk_nope_head_dim", "non-rotary q/k head dim");
  m.qk_rope_head_dim = k.required_positive("qk_rope_head_dim", "rotary q/k head dim");
  m.v_head_dim = k.required_positive("v_head_dim", "value head dim");
  s.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  s.mla = m;
  if (std::optional<std::int64_t> experts = k.optional_positive("n_routed_experts")) {
    MoeSpec moe;
    moe.num_experts = *experts;
    moe.num_experts_per_tok = k.required_positive("num_experts_per_tok", "experts per token");
    moe.expert_intermediate_size =
        k.required_positive("moe_intermediate_size", "inner size of each routed expert");
    moe.shared_intermediate_size =
        k.non_negative_or("n_shared_experts", 0) * moe.expert_intermediate_size;
    const std::int64_t first_dense = k.non_negative_or("first_k_dense_replace", 0);
    const std::int64_t freq = k.optional_positive("moe_layer_freq").value_or(1);
    for (std::int64_t i = 0; i < s.num_layers; ++i) {
      s.layers[static_cast<std::size_t>(i)].moe = i >= first_dense && i % freq == 0;
    }
    s.moe = moe;
  }
}

void read_gpt_oss(ConfigKeys& k, ModelSpec& s) {
  read_llama_biases(k, s, /*attention_default=*/true);
  s.attention_sinks = true;
  MoeSpec m;
  m.num_experts = k.required_positive("num_local_experts", "routed experts per layer");
  const std::optional<std::int64_t> a = k.optional_positive("num_experts_per_tok");
  const std::optional<std::int64_t> b = k.optional_positive("experts_per_token");
  if (a && b && *a != *b) {
    k.error("experts_per_token", fmt::format("disagrees with num_experts_per_tok ({} vs {})",
                                             *b, *a));
  }
  if (a || b) {
    m.num_experts_per_tok = a ? *a : *b;
  } else {
    k.error("num_experts_per_tok",
            "missing required field (expected a positive integer: experts per token; gpt-oss "
            "also accepts experts_per_token)");
  }
  m.expert_intermediate_size = s.intermediate_size;
  m.router_bias = true;
  m.expert_bias = true;
  s.moe = m;
  all_layers_moe(s);
}

// GPT-2: n_embd, n_layer, n_head, n_inner (null: 4 * n_embd), n_positions (HF GPT2Config).
FamilyResult read_gpt2(ConfigKeys& k, ModelSpec& s) {
  FamilyResult r;
  r.heads_key = "n_head";
  r.kv_heads_key = "n_head";
  r.layers_key = "n_layer";
  s.num_layers = k.required_positive("n_layer", "number of decoder layers");
  s.hidden_size = k.required_positive("n_embd", "width of the residual stream");
  s.num_attention_heads = k.required_positive("n_head", "attention heads per layer");
  s.num_kv_heads = s.num_attention_heads;
  if (s.num_attention_heads > 0) s.head_dim = s.hidden_size / s.num_attention_heads;
  s.intermediate_size = k.optional_positive("n_inner").value_or(4 * s.hidden_size);
  s.vocab_size = k.required_positive("vocab_size", "number of token ids");
  s.learned_positions = k.required_positive("n_positions", "rows of the learned position table");
  s.max_position_embeddings = s.learned_positions;
  s.tie_word_embeddings = k.boolean_or("tie_word_embeddings", true);
  s.embed_dim = s.hidden_size;
  s.layers.assign(static_cast<std::size_t>(s.num_layers), LayerSpec{});
  s.norm = NormKind::kLayerNorm;
  s.mlp = MlpKind::kPlain;
  s.qkv_bias = s.o_bias = s.mlp_bias = true;
  return r;
}

// OPT: ffn_dim instead of intermediate_size, learned positions with an offset of 2
// (HF OPTLearnedPositionalEmbedding), optional word_embed_proj_dim with project_in/out.
FamilyResult read_opt(ConfigKeys& k, ModelSpec& s) {
  FamilyResult r;
  s.num_layers = k.required_positive("num_hidden_layers", "number of decoder layers");
  s.hidden_size = k.required_positive("hidden_size", "width of the residual stream");
  s.num_attention_heads = k.required_positive("num_attention_heads", "attention heads per layer");
  s.num_kv_heads = s.num_attention_heads;
  if (s.num_attention_heads > 0) s.head_dim = s.hidden_size / s.num_attention_heads;
  s.intermediate_size = k.required_positive("ffn_dim", "inner size of the MLP");
  s.vocab_size = k.required_positive("vocab_size", "number of token ids");
  s.max_position_embeddings =
      k.required_positive("max_position_embeddings", "rows of the learned position table");
  s.learned_positions = s.max_position_embeddings + 2;
  s.embed_dim = k.optional_positive("word_embed_proj_dim").value_or(s.hidden_size);
  s.tie_word_embeddings = k.boolean_or("tie_word_embeddings", true);
  s.layers.assign(static_cast<std::size_t>(s.num_layers), LayerSpec{});
  s.norm = NormKind::kLayerNorm;
  s.mlp = MlpKind::kPlain;
  s.qkv_bias = s.o_bias = s.mlp_bias = k.boolean_or("enable_bias", true);
  s.final_norm = k.boolean_or("do_layer_norm_before", true) &&
                 !k.boolean_or("_remove_final_layer_norm", false);
  return r;
}

}  // namespace

FamilyResult read_family(ConfigKeys& k, ModelSpec& s) {
  FamilyResult r;
  switch (s.family) {
    case ModelFamily::kLlama:
    case ModelFamily::kGranite:  // embedding/residual/logits multipliers: no parameters
      r = read_core(k, s, false);
      read_llama_biases(k, s, false);
      break;
    case ModelFamily::kMistral:
    case ModelFamily::kMistral3:
      r = read_core(k, s, false);
      break;
    case ModelFamily::kMixtral:
      r = read_core(k, s, false);
      s.moe = MoeSpec{k.required_positive("num_local_experts", "routed experts per layer"),
                      k.required_positive("num_experts_per_tok", "experts per token"),
                      s.intermediate_size};
      all_layers_moe(s);
      break;
    case ModelFamily::kQwen2:
    case ModelFamily::kQwen2Moe:
    case ModelFamily::kQwen2_5Vl:  // its language model is a Qwen2 decoder
      r = read_core(k, s, false);
      s.qkv_bias = true;  // HF Qwen2Attention: q/k/v bias=True, o_proj bias=False
      if (s.family == ModelFamily::kQwen2Moe) read_qwen_moe(k, s, /*shared=*/true);
      break;
    case ModelFamily::kQwen3:
    case ModelFamily::kQwen3Moe:
      r = read_core(k, s, false);
      s.qkv_bias = s.o_bias = k.boolean_or("attention_bias", false);
      s.qk_norm = true;  // q_norm / k_norm RMSNorm over head_dim
      if (s.family == ModelFamily::kQwen3Moe) read_qwen_moe(k, s, /*shared=*/false);
      break;
    case ModelFamily::kGemma3Text:
    case ModelFamily::kGemma3:
      r = read_gemma3_text(k, s);
      break;
    case ModelFamily::kGemma:
    case ModelFamily::kGemma2:
      // NOTE: Gemma configs omit tie_word_embeddings; GemmaConfig's default is True.
      r = read_core(k, s, true);
      s.qkv_bias = s.o_bias = k.boolean_or("attention_bias", false);
      if (s.family == ModelFamily::kGemma2) s.norms_per_layer = 4;
      break;
    case ModelFamily::kPhi:
      r = read_core(k, s, false);
      s.norm = NormKind::kLayerNorm;
      s.norms_per_layer = 1;  // attention and MLP share input_layernorm (parallel block)
      s.parallel_residual = true;
      s.mlp = MlpKind::kPlain;
      s.qkv_bias = s.o_bias = s.mlp_bias = s.lm_head_bias = true;
      s.qk_norm = k.boolean_or("qk_layernorm", false);
      s.partial_rotary_factor = k.number("partial_rotary_factor").value_or(0.5);
      break;
    case ModelFamily::kPhi3:
      r = read_core(k, s, false);
      break;
    case ModelFamily::kGptNeox:
      r = read_core(k, s, false);
      s.norm = NormKind::kLayerNorm;
      s.mlp = MlpKind::kPlain;
      s.qkv_bias = s.o_bias = k.boolean_or("attention_bias", true);
      s.mlp_bias = true;
      s.parallel_residual = k.boolean_or("use_parallel_residual", true);
      s.partial_rotary_factor = k.number("rotary_pct").value_or(0.25);
      break;
    case ModelFamily::kOpt:
      r = read_opt(k, s);
      break;
    case ModelFamily::kGpt2:
      r = read_gpt2(k, s);
      break;
    case ModelFamily::kDeepseekV2:
      r = read_core(k, s, false);
      read_deepseek_v2(k, s);
      break;
    case ModelFamily::kGptOss:
      r = read_core(k, s, false);
      read_gpt_oss(k, s);
      break;
  }
  if (s.moe && s.moe->num_experts_per_tok > s.moe->num_experts) {
    k.error("num_experts_per_tok", fmt::format("must not exceed the number of experts ({}), got {}",
                                               s.moe->num_experts, s.moe->num_experts_per_tok));
  }
  if (windows_from_layer_types(k, s)) return r;
  switch (s.family) {
    case ModelFamily::kMistral:
    case ModelFamily::kMistral3:
    case ModelFamily::kMixtral:
    case ModelFamily::kPhi3: windows_all_layers(k, s); break;
    case ModelFamily::kQwen2:
    case ModelFamily::kQwen2Moe:
    case ModelFamily::kQwen2_5Vl:
    case ModelFamily::kQwen3:
    case ModelFamily::kQwen3Moe: windows_qwen(k, s); break;
    case ModelFamily::kGemma2:
    case ModelFamily::kGptOss: windows_alternating(k, s); break;
    case ModelFamily::kGemma3Text:
    case ModelFamily::kGemma3: break;  // read with the decoder (read_gemma3_text)
    case ModelFamily::kLlama:
    case ModelFamily::kGranite:
    case ModelFamily::kGemma:
    case ModelFamily::kPhi:
    case ModelFamily::kGptNeox:
    case ModelFamily::kOpt:
    case ModelFamily::kGpt2:
    case ModelFamily::kDeepseekV2: break;
  }
  return r;
}

void read_mistral3_vision(ConfigKeys& top, ModelSpec& s) {
  std::optional<ConfigKeys> v = top.object("vision_config", "the Pixtral vision encoder config");
  if (!v) return;
  if (std::optional<std::string> type = v->string("model_type"); type && *type != "pixtral") {
    v->error("model_type", fmt::format("unsupported vision encoder '{}' (expected pixtral)", *type));
  }
  VisionSpec vs;
  vs.hidden_size = v->required_positive("hidden_size", "vision encoder width");
  vs.intermediate_size = v->required_positive("intermediate_size", "vision MLP inner size");
  vs.num_layers = v->required_positive("num_hidden_layers", "vision encoder layers");
  vs.num_channels = v->optional_positive("num_channels").value_or(3);
  vs.patch_size = v->required_positive("patch_size", "image patch side in pixels");
  vs.spatial_merge_size = top.optional_positive("spatial_merge_size").value_or(2);
  vs.projector_bias = top.boolean_or("multimodal_projector_bias", false);
  s.vision = vs;
}

// HF Qwen2_5_VLVisionConfig (configuration_qwen2_5_vl.py): depth, hidden_size,
// intermediate_size, in_chans (newer: in_channels), patch_size, temporal_patch_size,
// spatial_merge_size, out_hidden_size; num_heads, window_size and fullatt_block_indexes change
// no weight.
void read_qwen2_5_vl_vision(ConfigKeys& top, ModelSpec& s) {
  std::optional<ConfigKeys> v = top.object("vision_config", "the Qwen2.5-VL vision encoder config");
  if (!v) {
    top.error("vision_config", "missing (Qwen2_5_VLForConditionalGeneration has a vision encoder)");
    return;
  }
  if (std::optional<std::string> type = v->string("model_type");
      type && *type != "qwen2_5_vl" && *type != "qwen2_5_vl_vision") {
    v->error("model_type",
             fmt::format("unsupported vision encoder '{}' (expected qwen2_5_vl)", *type));
  }
  VisionSpec vs;
  vs.encoder = VisionEncoder::kQwen2_5Vl;
  vs.hidden_size = v->required_positive("hidden_size", "vision encoder width");
  vs.intermediate_size = v->required_positive("intermediate_size", "vision MLP inner size");
  vs.num_layers = v->required_positive("depth", "vision encoder blocks");
  vs.num_channels = v->optional_positive(v->has("in_channels") ? "in_channels" : "in_chans")
                        .value_or(3);
  vs.patch_size = v->required_positive("patch_size", "image patch side in pixels");
  vs.temporal_patch_size = v->optional_positive("temporal_patch_size").value_or(2);
  vs.spatial_merge_size = v->optional_positive("spatial_merge_size").value_or(2);
  vs.out_hidden_size = v->optional_positive("out_hidden_size").value_or(s.hidden_size);
  if (s.hidden_size > 0 && vs.out_hidden_size != s.hidden_size) {
    v->error("out_hidden_size",
             fmt::format("{} differs from the text decoder's hidden_size {}: the merger feeds "
                         "the decoder",
                         vs.out_hidden_size, s.hidden_size));
  }
  s.vision = vs;
}

// HF SiglipVisionConfig as Gemma 3 writes it (model_type siglip_vision_model): hidden_size,
// intermediate_size, num_hidden_layers, patch_size, image_size, num_channels (default 3);
// vision_use_head must be false (Gemma 3 has no pooling head).
void read_gemma3_vision(ConfigKeys& top, ModelSpec& s) {
  std::optional<ConfigKeys> v = top.object("vision_config", "the SigLIP vision encoder config");
  if (!v) {
    top.error("vision_config", "missing (Gemma3ForConditionalGeneration has a vision encoder)");
    return;
  }
  if (std::optional<std::string> type = v->string("model_type");
      type && *type != "siglip_vision_model") {
    v->error("model_type",
             fmt::format("unsupported vision encoder '{}' (expected siglip_vision_model)", *type));
  }
  if (v->boolean_or("vision_use_head", false)) {
    v->error("vision_use_head", "true: Gemma 3's SigLIP has no pooling head (expected false)");
  }
  VisionSpec vs;
  vs.encoder = VisionEncoder::kSiglip;
  vs.hidden_size = v->required_positive("hidden_size", "vision encoder width");
  vs.intermediate_size = v->required_positive("intermediate_size", "vision MLP inner size");
  vs.num_layers = v->required_positive("num_hidden_layers", "vision encoder layers");
  vs.num_channels = v->optional_positive("num_channels").value_or(3);
  vs.patch_size = v->required_positive("patch_size", "image patch side in pixels");
  vs.image_size = v->required_positive("image_size", "image side in pixels");
  if (vs.patch_size > 0 && vs.image_size % vs.patch_size != 0) {
    v->error("image_size", fmt::format("{} is not a multiple of patch_size {}", vs.image_size,
                                       vs.patch_size));
  }
  s.vision = vs;
}

}  // namespace vramsim::model::detail

