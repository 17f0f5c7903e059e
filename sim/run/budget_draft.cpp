#include "sim/run/budget_draft.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "sim/core/error.hpp"
#include "sim/model/kv_cache_shape.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/model/weight_bytes.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/model/weight_tensors.hpp"

namespace vramsim::run {
namespace {

using serving::SpeculativeMethod;
constexpr std::string_view kField = "engine.speculative_config";

/// The head's own config.json when `model` names a local file or folder; nullopt otherwise.
std::optional<nlohmann::json> local_head_config(const std::string& model) {
  std::error_code ec;
  std::filesystem::path p(model);
  if (std::filesystem::is_directory(p, ec)) p /= "config.json";
  if (!std::filesystem::is_regular_file(p, ec)) return std::nullopt;
  std::ifstream in(p);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(std::string(kField) + ".model",
                      fmt::format("{}: not valid JSON ({})", p.string(), e.what()));
  }
}

/// num_nextn_predict_layers of the target's config.json (the file `id_or_path` names, or its
/// zoo file), 0 when absent. NOTE: read here rather than by the model reader because only the
/// mtp drafter needs it (ModelSpec describes the decoder the target runs).
std::int64_t mtp_layer_count(const std::string& id_or_path, const std::filesystem::path& zoo_dir) {
  std::error_code ec;
  std::filesystem::path p(id_or_path);
  if (std::filesystem::is_directory(p, ec)) p /= "config.json";
  if (!std::filesystem::is_regular_file(p, ec)) {
    const std::optional<std::filesystem::path> zoo = model::find_zoo_model(id_or_path, zoo_dir);
    if (!zoo) return 0;
    p = *zoo;
  }
  std::ifstream in(p);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return 0;  // the model reader has already refused a bad file
  const auto it = j.find("num_nextn_predict_layers");
  if (it == j.end() || !it->is_number_integer()) return 0;
  const auto n = it->get<std::int64_t>();
  if (n < 0 || n > 64) {
    throw ConfigError(std::string(kField) + ".method",
                      fmt::format("{}: num_nextn_predict_layers must be in [0, 64], got {}",
                                  p.string(), n));
  }
  return n;
}

/// `key` of a head's config as a positive integer (nullopt when absent or null).
std::optional<std::int64_t> head_int(const nlohmann::json& j, const char* key,
                                     const std::string& model) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<std::int64_t>() <= 0 ||
      it->get<std::int64_t>() > (std::int64_t{1} << 24)) {
    throw ConfigError(std::string(kField) + ".model",
                      fmt::format("{}: {} must be a positive integer, got {}", model, key,
                                  it->dump()));
  }
  return it->get<std::int64_t>();
}

/// One device's bytes of `spec`'s tensors that `keep` selects, TP-sharded.
template <class Keep>
Bytes tensor_bytes(const model::ModelSpec& spec, const model::WeightFormat& fmt, int tp,
                   Keep keep) {
  Bytes total;
  for (const model::WeightTensor& t : model::weight_tensors(spec)) {
    if (t.tied || !keep(t)) continue;
    const model::ShardShape s = model::shard_shape(spec, t, tp);
    total += s.copies * model::matrix_bytes(fmt, t.kind, s.in_features, s.out_features);
  }
  return total;
}

/// The target reshaped into `num_layers` decoder layers like its last one (a head's layer).
model::ModelSpec head_of(const model::ModelSpec& target, std::int64_t num_layers, bool dense) {
  model::ModelSpec h = target;
  h.num_layers = num_layers;
  model::LayerSpec layer = target.layers.empty() ? model::LayerSpec{} : target.layers.back();
  layer.sliding_window = 0;
  if (dense) {
    layer.moe = false;
    h.moe.reset();
  }
  h.layers.assign(static_cast<std::size_t>(num_layers), layer);
  h.vision.reset();
  return h;
}

}  // namespace

SpeculativeDraft make_speculative_draft(const serving::SpeculativeConfig& config,
                                        const model::ModelSpec& target,
                                        const std::string& target_id,
                                        const memory::EngineConfig& engine,
                                        const std::filesystem::path& zoo_dir,
                                        std::vector<std::string>& notes) {
  SpeculativeDraft d;
  d.config = config;
  if (engine.pp > 1) {
    throw ConfigError(std::string(kField),
                      fmt::format("speculative decoding with pipeline parallelism (engine.pp = "
                                  "{}) is not modelled; use pp = 1",
                                  engine.pp));
  }
  if (config.draft_tensor_parallel_size && *config.draft_tensor_parallel_size != engine.tp) {
    throw ConfigError(std::string(kField) + ".draft_tensor_parallel_size",
                      fmt::format("{} differs from the target's tp ({}): only a drafter split "
                                  "like the target is modelled",
                                  *config.draft_tensor_parallel_size, engine.tp));
  }
  if (!config.has_draft_model()) return d;
  const int tp = engine.tp;
  const std::int64_t h = target.hidden_size;
  memory::DraftMemory mem;
  mem.label = config.model.empty() ? std::string(serving::to_string(config.method))
                                   : fmt::format("{} {}", serving::to_string(config.method),
                                                 config.model);
  model::ModelSpec pass;
  model::WeightFormat fmt = model::make_weight_format(engine.dtype, "none");
  std::vector<model::LayerKv> kv;
  switch (config.method) {
    case SpeculativeMethod::kDraftModel: {
      model::ModelSpec draft = [&] {
        try {
          return model::load_model(config.model, zoo_dir);
        } catch (const ConfigError& e) {
          ValidationReport r;
          for (const Problem& p : e.report().problems()) {
            r.error(std::string(kField) + ".model", p.message, p.where);
          }
          throw ConfigError(r);
        }
      }();
      if (draft.vocab_size != target.vocab_size) {
        throw ConfigError(std::string(kField) + ".model",
                          fmt::format("the draft's vocab_size {} differs from the target's {}: "
                                      "drafts are verified token id by token id",
                                      draft.vocab_size, target.vocab_size));
      }
      const std::string quant =
          draft.checkpoint_quantization.empty() ? "none" : draft.checkpoint_quantization;
      fmt = model::make_weight_format(engine.dtype, quant, draft);
      mem.weights = model::weight_bytes_per_device(draft, fmt, model::Parallelism{tp, 1});
      kv = model::kv_layers(draft, engine.kv_cache_dtype, model::Parallelism{tp, 1}, 0);
      pass = draft;
      break;
    }
    case SpeculativeMethod::kEagle:
    case SpeculativeMethod::kEagle3: {
      const bool e3 = config.method == SpeculativeMethod::kEagle3;
      model::ModelSpec head = head_of(target, 1, /*dense=*/true);
      head.name = config.model;
      head.architecture = e3 ? "Eagle3LlamaForCausalLM" : "EagleLlamaForCausalLM";
      if (const std::optional<nlohmann::json> j = local_head_config(config.model)) {
        const auto set = [&](const char* key, std::int64_t& out) {
          if (auto v = head_int(*j, key, config.model)) out = *v;
        };
        set("num_hidden_layers", head.num_layers);
        set("hidden_size", head.hidden_size);
        set("intermediate_size", head.intermediate_size);
        set("num_attention_heads", head.num_attention_heads);
        set("num_key_value_heads", head.num_kv_heads);
        if (auto hd = head_int(*j, "head_dim", config.model)) {
          head.head_dim = *hd;
        } else if (j->contains("hidden_size") || j->contains("num_attention_heads")) {
          head.head_dim = head.hidden_size / head.num_attention_heads;
        }
        if (e3) set("draft_vocab_size", head.vocab_size);
        head.layers.assign(static_cast<std::size_t>(head.num_layers), head.layers.front());
        head.embed_dim = head.hidden_size;
      } else {
        notes.push_back(fmt::format(
            "speculative {}: '{}' is not a local config.json, so the head takes the target's "
            "shapes{} (give the head's config.json path for its own)",
            serving::to_string(config.method), config.model,
            e3 ? " and its full vocabulary for the draft lm_head" : ""));
      }
      head.tie_word_embeddings = false;
      // The decoder layer(s) and final norm; embed_tokens shared; lm_head shared by EAGLE,
      // EAGLE-3's own (over draft_vocab_size).
      mem.weights = tensor_bytes(head, fmt, tp, [&](const model::WeightTensor& t) {
        if (t.kind == model::TensorKind::kEmbedding) return false;
        if (t.kind == model::TensorKind::kLmHead) return e3;
        return true;
      });
      // fc: 2h (EAGLE) or 3h (EAGLE-3: three target layers' features) -> the head's width,
      // replicated on every rank; EAGLE-3's first qkv_proj reads 2h (embedding and fused
      // features), column-parallel: h more inputs for its q, k and v outputs.
      mem.weights += model::matrix_bytes(fmt, model::TensorKind::kLinear, (e3 ? 3 : 2) * h,
                                         head.hidden_size);
      if (e3) {
        const std::int64_t qkv_out = (head.q_width() + 2 * head.kv_width()) / tp;
        mem.weights += model::matrix_bytes(fmt, model::TensorKind::kLinear, head.hidden_size,
                                           qkv_out);
      }
      kv = model::kv_layers(head, engine.kv_cache_dtype, model::Parallelism{tp, 1}, 0);
      pass = head;
      break;
    }
    case SpeculativeMethod::kMtp: {
      if (!config.model.empty() && config.model != target_id && config.model != target.name) {
        throw ConfigError(std::string(kField) + ".model",
                          fmt::format("mtp drafts with the target's own layers; '{}' is not the "
                                      "target ({}): leave model out",
                                      config.model, target_id));
      }
      const std::int64_t n = mtp_layer_count(target_id, zoo_dir);
      if (n <= 0) {
        throw ConfigError(std::string(kField) + ".method",
                          fmt::format("mtp needs the model's multi-token-prediction layers, but "
                                      "{}'s config.json has no num_nextn_predict_layers",
                                      target.name));
      }
      fmt = engine.weights;  // the checkpoint's own layers, stored like the rest
      const model::ModelSpec layers = head_of(target, n, /*dense=*/false);
      mem.weights = tensor_bytes(layers, fmt, tp, [&](const model::WeightTensor& t) {
        return t.layer >= 0 && t.layer < layers.num_layers;  // not embeddings, norm, lm_head
      });
      // eh_proj (2h -> h, replicated) and enorm/hnorm per MTP layer.
      mem.weights += n * (model::matrix_bytes(fmt, model::TensorKind::kLinear, 2 * h, h) +
                          2 * model::matrix_bytes(fmt, model::TensorKind::kVector, 1, h));
      kv = model::kv_layers(layers, engine.kv_cache_dtype, model::Parallelism{tp, 1}, 0);
      pass = head_of(target, 1, /*dense=*/false);  // each draft pass runs one MTP layer
      pass.name = target.name + " (MTP layer)";
      break;
    }
    case SpeculativeMethod::kNgram: return d;
  }
  mem.kv_layers = std::move(kv);
  d.memory = std::move(mem);
  d.pass_model = std::move(pass);
  d.pass_weights = fmt;
  return d;
}

}  // namespace vramsim::run
