// The transformer a simulation runs, as read from a Hugging Face config.json (hf_config.hpp).
//
// ModelSpec is a plain aggregate of the shapes every other part of vramsim needs: parameter
// counts (param_count.hpp), weight bytes per device (weight_bytes.hpp), KV-cache bytes
// (kv_cache_shape.hpp), FLOPs (flop_count.hpp), and the activation shapes the memory budget
// and the training op graph use. All sizes are element counts (int64), never bytes.
//
// Activation-relevant shapes, for one token:
//   residual stream            hidden_size
//   q projection output        q_width()   = num_attention_heads * head_dim (MLA: heads*(nope+rope))
//   k and v projection output  kv_width()  = num_kv_heads * head_dim (each)
//   MLP inner activation       intermediate_size (dense layers), moe->expert_intermediate_size
//                              per routed expert and top-k experts per token
//   logits                     vocab_size
// NOTE: head_dim is taken from the config's explicit `head_dim` key when present; Qwen3, Gemma,
// Mistral-Small-3.1 and gpt-oss have head_dim != hidden_size / num_attention_heads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/dtype.hpp"
#include "sim/core/enum_table.hpp"
#include "sim/model/quant_layout.hpp"

namespace vramsim::model {

/// The model families the reader understands (one per Hugging Face config class).
enum class ModelFamily {
  kLlama,
  kMistral,
  kMixtral,
  kQwen2,
  kQwen2Moe,
  kQwen3,
  kQwen3Moe,
  kGemma,
  kGemma2,
  kPhi,
  kPhi3,
  kGranite,
  kGptNeox,
  kOpt,
  kGpt2,
  kDeepseekV2,
  kGptOss,
  kMistral3,
  kQwen2_5Vl,
  kGemma3Text,
  kGemma3,
};

/// Name: the lower-case Hugging Face model_type; description: the config class it reads.
inline constexpr auto kModelFamilies = enum_table<ModelFamily>({
    {ModelFamily::kLlama, "llama", "LlamaForCausalLM (Llama 2/3/3.1/3.2)"},
    {ModelFamily::kMistral, "mistral", "MistralForCausalLM"},
    {ModelFamily::kMixtral, "mixtral", "MixtralForCausalLM"},
    {ModelFamily::kQwen2, "qwen2", "Qwen2ForCausalLM (Qwen2, Qwen2.5)"},
    {ModelFamily::kQwen2Moe, "qwen2_moe", "Qwen2MoeForCausalLM"},
    {ModelFamily::kQwen3, "qwen3", "Qwen3ForCausalLM"},
    {ModelFamily::kQwen3Moe, "qwen3_moe", "Qwen3MoeForCausalLM"},
    {ModelFamily::kGemma, "gemma", "GemmaForCausalLM"},
    {ModelFamily::kGemma2, "gemma2", "Gemma2ForCausalLM"},
    {ModelFamily::kPhi, "phi", "PhiForCausalLM (phi-1.5, phi-2)"},
    {ModelFamily::kPhi3, "phi3", "Phi3ForCausalLM (phi-3, phi-4; fused qkv/gate_up, same counts)"},
    {ModelFamily::kGranite, "granite", "GraniteForCausalLM"},
    {ModelFamily::kGptNeox, "gpt_neox", "GPTNeoXForCausalLM"},
    {ModelFamily::kOpt, "opt", "OPTForCausalLM"},
    {ModelFamily::kGpt2, "gpt2", "GPT2LMHeadModel"},
    {ModelFamily::kDeepseekV2, "deepseek_v2", "DeepseekV2ForCausalLM (MLA + MoE)"},
    {ModelFamily::kGptOss, "gpt_oss", "GptOssForCausalLM"},
    {ModelFamily::kMistral3, "mistral3",
     "Mistral3ForConditionalGeneration (text decoder in text_config + Pixtral)"},
    {ModelFamily::kQwen2_5Vl, "qwen2_5_vl",
     "Qwen2_5_VLForConditionalGeneration (Qwen2 decoder + Qwen2.5-VL vision transformer)"},
    {ModelFamily::kGemma3Text, "gemma3_text", "Gemma3ForCausalLM (Gemma 3 1B, text only)"},
    {ModelFamily::kGemma3, "gemma3",
     "Gemma3ForConditionalGeneration (Gemma 3 decoder in text_config + SigLIP)"},
});
static_assert(covers_every_enumerator(kModelFamilies) && names_are_unique(kModelFamilies));

/// Lower-case Hugging Face model_type of the family ("llama", "qwen3_moe", ...).
std::string_view to_string(ModelFamily f);

enum class NormKind {
  kRmsNorm,    // weight only
  kLayerNorm,  // weight and bias
};

enum class MlpKind {
  kGated,  // gate, up, down (SwiGLU / GeGLU): 3 matrices of hidden x intermediate
  kPlain,  // fc1, fc2: 2 matrices
};

/// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434 sec. 2.1).
struct MlaSpec {
  std::int64_t q_lora_rank = 0;  // 0: queries projected directly (config has null)
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

/// Mixture of experts. Routed experts are gated MLPs of expert_intermediate_size.
struct MoeSpec {
  std::int64_t num_experts = 0;          // routed experts per MoE layer
  std::int64_t num_experts_per_tok = 0;  // top-k
  std::int64_t expert_intermediate_size = 0;
  /// Inner size of the always-active shared MLP (DeepSeek: n_shared_experts *
  /// moe_intermediate_size; Qwen2-MoE: shared_expert_intermediate_size); 0 when none.
  std::int64_t shared_intermediate_size = 0;
  bool shared_expert_gate = false;  // Qwen2-MoE: a hidden x 1 sigmoid gate on the shared expert
  bool router_bias = false;         // gpt-oss
  bool expert_bias = false;         // gpt-oss: biases on every expert projection
};

/// One decoder layer's attention and MLP flavour.
struct LayerSpec {
  bool moe = false;                 // MLP is a routed mixture of experts
  std::int64_t sliding_window = 0;  // tokens attended (and kept in the KV cache); 0 = global
};

enum class VisionEncoder {
  kPixtral,    // Mistral3: Pixtral + patch merger + 2-layer projector
  kQwen2_5Vl,  // Qwen2.5-VL: windowed ViT (RMSNorm, gated SiLU MLP, biases) + MLP merger
  kSiglip,     // Gemma 3: SigLIP ViT (LayerNorm, GELU MLP, biases) + linear projector
};

/// A multimodal model's vision encoder and projector (counted, weights on the first stage).
struct VisionSpec {
  VisionEncoder encoder = VisionEncoder::kPixtral;
  std::int64_t hidden_size = 0;
  std::int64_t intermediate_size = 0;
  std::int64_t num_layers = 0;
  std::int64_t num_channels = 0;
  std::int64_t patch_size = 0;
  std::int64_t temporal_patch_size = 1;  // Qwen2.5-VL: frames per patch (Conv3d depth)
  std::int64_t spatial_merge_size = 1;
  std::int64_t out_hidden_size = 0;  // Qwen2.5-VL: the merger's output width (text hidden)
  std::int64_t image_size = 0;       // SigLIP: image side in pixels (learned positions)
  bool projector_bias = false;
};

struct ModelSpec {
  std::string name;          // Hugging Face id (`_name_or_path`) or the file it came from
  std::string architecture;  // architectures[0], e.g. "LlamaForCausalLM"
  ModelFamily family = ModelFamily::kLlama;

  std::int64_t num_layers = 0;
  std::int64_t hidden_size = 0;
  std::int64_t num_attention_heads = 0;
  std::int64_t num_kv_heads = 0;  // == num_attention_heads for MHA; MLA: nominal, unused for KV
  std::int64_t head_dim = 0;      // MLA: qk_nope_head_dim + qk_rope_head_dim
  std::int64_t intermediate_size = 0;  // dense MLP inner size (MoE models: dense layers)
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;  // 0 when the config does not say
  /// vLLM's derived_max_model_len: max_position_embeddings scaled by rope_scaling /
  /// rope_parameters (YaRN: original_max_position_embeddings * factor; linear, dynamic:
  /// * factor; llama3, longrope: unscaled), the longest max_model_len vLLM accepts
  /// (hf_config_rope.hpp). 0: as max_position_embeddings (a spec not read from a config).
  std::int64_t derived_max_model_len = 0;
  /// The max_model_len vLLM takes when none is given: derived_max_model_len, except LongRoPE's
  /// original_max_position_embeddings. 0: as derived_max_model_len.
  std::int64_t default_max_model_len = 0;
  /// Rows of vLLM's rotary cos/sin cache (hf_config_rope.hpp). 0: max_position_embeddings.
  std::int64_t rotary_cache_positions = 0;
  /// Width of the token embedding and lm_head; == hidden_size except OPT's word_embed_proj_dim
  /// (then project_in / project_out matrices map between the two).
  std::int64_t embed_dim = 0;
  /// Rows of a learned absolute position table (GPT-2 n_positions; OPT
  /// max_position_embeddings + 2); 0 for rotary models.
  std::int64_t learned_positions = 0;
  double partial_rotary_factor = 1.0;  // phi-2 0.4, GPT-NeoX rotary_pct

  bool tie_word_embeddings = false;
  NormKind norm = NormKind::kRmsNorm;
  int norms_per_layer = 2;  // Gemma-2: 4 (pre/post around both blocks); phi-2: 1 (parallel)
  bool final_norm = true;   // OPT with do_layer_norm_before=false has none
  bool qk_norm = false;     // Qwen3 q_norm/k_norm over head_dim (phi qk_layernorm)
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  bool lm_head_bias = false;      // phi-2
  bool attention_sinks = false;   // gpt-oss: one learned logit per head and layer
  bool parallel_residual = false; // GPT-NeoX, phi-2: attention and MLP read the same input
  MlpKind mlp = MlpKind::kGated;

  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  std::optional<VisionSpec> vision;
  std::vector<LayerSpec> layers;  // size num_layers

  /// quantization_config.quant_method of the checkpoint ("mxfp4" for gpt-oss); "" when none.
  std::string checkpoint_quantization;
  /// The storage quantization_config describes (hf_quant_config.hpp); nullopt when none.
  std::optional<CheckpointQuant> checkpoint_quant;
  /// torch_dtype / dtype as written. Informational only: granite-3.1 says float32 while its
  /// weights are bf16, so byte counts always take the dtype from the caller.
  std::optional<DType> checkpoint_dtype;

  /// The longest max_model_len vLLM accepts (derived_max_model_len); 0 when unknown.
  std::int64_t max_model_len_limit() const {
    return derived_max_model_len > 0 ? derived_max_model_len : max_position_embeddings;
  }
  /// The max_model_len vLLM takes when none is given; 0 when unknown.
  std::int64_t max_model_len_default() const {
    return default_max_model_len > 0 ? default_max_model_len : max_model_len_limit();
  }
  /// Rows of the rotary cos/sin cache; 0 when unknown.
  std::int64_t rotary_positions() const {
    return rotary_cache_positions > 0 ? rotary_cache_positions : max_position_embeddings;
  }

  /// Width of the query projection output.
  std::int64_t q_width() const { return num_attention_heads * head_dim; }
  /// Width of each of the k and v projection outputs (standard attention).
  std::int64_t kv_width() const { return num_kv_heads * head_dim; }
  /// Whether any layer routes its MLP through experts.
  bool is_moe() const { return moe.has_value(); }
  /// Whether any layer attends through a sliding window.
  bool has_sliding_window() const;
  /// Number of layers whose MLP is a mixture of experts.
  std::int64_t num_moe_layers() const;
};

}  // namespace vramsim::model
