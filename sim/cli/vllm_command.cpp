#include "sim/cli/vllm_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

namespace vramsim::cli {

namespace {

enum class Arity {
  kNone,      // a boolean (store_true, or BooleanOptionalAction with its --no- form)
  kOne,       // one value
  kOptional,  // nargs="?": a value when the next word is not a flag (--hf-token)
  kMany,      // nargs="+" or "*": the words up to the next flag
};

enum class Action { kMap, kDefault, kRefuse, kIgnore, kApprox };

struct VllmFlag {
  std::string_view name;   // "--tensor-parallel-size"
  std::string_view alias;  // "-tp"; "" when none
  Arity arity;
  Action action;
  /// kMap: the vramsim flag ("" = the same name); kDefault: the accepted values, "|"-separated;
  /// kRefuse: what it changes that is not modelled.
  std::string_view detail = {};
  bool gib = false;  // kMap: vLLM takes GiB as a bare number, vramsim a size with its unit
};

using A = Arity;
using X = Action;

constexpr std::string_view kLoraVocab =
    "LoRA's extra vocabulary (embedding and lm_head slots) is not modelled";
constexpr std::string_view kConfig =
    "it changes the model's config.json, which vramsim reads as it is; edit a copy of "
    "config.json and pass its folder as the model instead";
constexpr std::string_view kDbo = "dual-batch overlap is not modelled";
constexpr std::string_view kEplb =
    "expert-parallel load balancing (redundant experts add weights on every EP rank) is not "
    "modelled";

// vLLM 0.19's `vllm serve` flags (vllm/engine/arg_utils.py, vllm/entrypoints/openai/
// cli_args.py), grouped as argparse groups them.
constexpr std::array kFlags = {
    // ModelConfig
    VllmFlag{"--model", "", A::kOne, X::kMap},
    VllmFlag{"--revision", "", A::kOne, X::kMap},
    VllmFlag{"--dtype", "", A::kOne, X::kMap},
    VllmFlag{"--seed", "", A::kOne, X::kMap},
    VllmFlag{"--max-model-len", "", A::kOne, X::kMap},
    VllmFlag{"--quantization", "-q", A::kOne, X::kMap},
    VllmFlag{"--enforce-eager", "", A::kNone, X::kMap},
    VllmFlag{"--runner", "", A::kOne, X::kDefault, "auto|generate"},
    VllmFlag{"--convert", "", A::kOne, X::kDefault, "auto|none"},
    VllmFlag{"--task", "", A::kOne, X::kDefault, "auto|generate"},
    VllmFlag{"--rope-scaling", "", A::kOne, X::kRefuse, kConfig},
    VllmFlag{"--rope-theta", "", A::kOne, X::kRefuse, kConfig},
    VllmFlag{"--hf-overrides", "", A::kOne, X::kRefuse, kConfig},
    VllmFlag{"--hf-config-path", "", A::kOne, X::kRefuse,
             "the config is read from the model given; pass that folder as the model instead"},
    VllmFlag{"--disable-sliding-window", "", A::kNone, X::kRefuse,
             "it gives sliding-window layers full-length KV caches, which is not modelled"},
    VllmFlag{"--model-impl", "", A::kOne, X::kDefault, "auto|vllm"},
    VllmFlag{"--override-attention-dtype", "", A::kOne, X::kApprox},
    VllmFlag{"--disable-cascade-attn", "", A::kNone, X::kApprox},
    VllmFlag{"--tokenizer", "", A::kOne, X::kIgnore},
    VllmFlag{"--tokenizer-mode", "", A::kOne, X::kIgnore},
    VllmFlag{"--tokenizer-revision", "", A::kOne, X::kIgnore},
    VllmFlag{"--trust-remote-code", "", A::kNone, X::kIgnore},
    VllmFlag{"--code-revision", "", A::kOne, X::kIgnore},
    VllmFlag{"--config-format", "", A::kOne, X::kIgnore},
    VllmFlag{"--hf-token", "", A::kOptional, X::kIgnore},
    VllmFlag{"--allowed-local-media-path", "", A::kOne, X::kIgnore},
    VllmFlag{"--allowed-media-domains", "", A::kMany, X::kIgnore},
    VllmFlag{"--max-logprobs", "", A::kOne, X::kIgnore},
    VllmFlag{"--logprobs-mode", "", A::kOne, X::kIgnore},
    VllmFlag{"--skip-tokenizer-init", "", A::kNone, X::kIgnore},
    VllmFlag{"--enable-prompt-embeds", "", A::kNone, X::kIgnore},
    VllmFlag{"--served-model-name", "", A::kMany, X::kIgnore},
    VllmFlag{"--pooler-config", "", A::kOne, X::kIgnore},
    VllmFlag{"--override-pooler-config", "", A::kOne, X::kIgnore},
    VllmFlag{"--logits-processor-pattern", "", A::kOne, X::kIgnore},
    VllmFlag{"--logits-processors", "", A::kMany, X::kIgnore},
    VllmFlag{"--generation-config", "", A::kOne, X::kIgnore},
    VllmFlag{"--override-generation-config", "", A::kOne, X::kIgnore},
    VllmFlag{"--enable-sleep-mode", "", A::kNone, X::kIgnore},
    VllmFlag{"--io-processor-plugin", "", A::kOne, X::kIgnore},
    // LoadConfig
    VllmFlag{"--load-format", "", A::kOne, X::kIgnore},
    VllmFlag{"--download-dir", "", A::kOne, X::kIgnore},
    VllmFlag{"--safetensors-load-strategy", "", A::kOne, X::kIgnore},
    VllmFlag{"--model-loader-extra-config", "", A::kOne, X::kIgnore},
    VllmFlag{"--ignore-patterns", "", A::kMany, X::kIgnore},
    VllmFlag{"--use-tqdm-on-load", "", A::kNone, X::kIgnore},
    VllmFlag{"--pt-load-map-location", "", A::kOne, X::kIgnore},
    // StructuredOutputsConfig
    VllmFlag{"--reasoning-parser", "", A::kOne, X::kIgnore},
    VllmFlag{"--structured-outputs-config", "", A::kOne, X::kIgnore},
    VllmFlag{"--guided-decoding-backend", "", A::kOne, X::kIgnore},
    // ParallelConfig
    VllmFlag{"--tensor-parallel-size", "-tp", A::kOne, X::kMap, "--tp"},
    VllmFlag{"--pipeline-parallel-size", "-pp", A::kOne, X::kMap, "--pp"},
    VllmFlag{"--data-parallel-size", "-dp", A::kOne, X::kMap},
    VllmFlag{"--enable-expert-parallel", "", A::kNone, X::kMap},
    VllmFlag{"--all2all-backend", "", A::kOne, X::kMap},
    VllmFlag{"--decode-context-parallel-size", "-dcp", A::kOne, X::kDefault, "1"},
    VllmFlag{"--expert-placement-strategy", "", A::kOne, X::kDefault, "linear"},
    VllmFlag{"--enable-dbo", "", A::kNone, X::kRefuse, kDbo},
    VllmFlag{"--dbo-decode-token-threshold", "", A::kOne, X::kRefuse, kDbo},
    VllmFlag{"--dbo-prefill-token-threshold", "", A::kOne, X::kRefuse, kDbo},
    VllmFlag{"--enable-eplb", "", A::kNone, X::kRefuse, kEplb},
    VllmFlag{"--eplb-config", "", A::kOne, X::kRefuse, kEplb},
    VllmFlag{"--num-redundant-experts", "", A::kOne, X::kRefuse, kEplb},
    VllmFlag{"--eplb-window-size", "", A::kOne, X::kIgnore},
    VllmFlag{"--eplb-step-interval", "", A::kOne, X::kIgnore},
    VllmFlag{"--eplb-log-balancedness", "", A::kNone, X::kIgnore},
    VllmFlag{"--data-parallel-rank", "-dpn", A::kOne, X::kIgnore},
    VllmFlag{"--data-parallel-start-rank", "-dpr", A::kOne, X::kIgnore},
    VllmFlag{"--data-parallel-size-local", "-dpl", A::kOne, X::kIgnore},
    VllmFlag{"--data-parallel-address", "-dpa", A::kOne, X::kIgnore},
    VllmFlag{"--data-parallel-rpc-port", "-dpp", A::kOne, X::kIgnore},
    VllmFlag{"--data-parallel-backend", "-dpb", A::kOne, X::kIgnore},
    VllmFlag{"--data-parallel-hybrid-lb", "", A::kNone, X::kIgnore},
    VllmFlag{"--disable-nccl-for-dp-synchronization", "", A::kNone, X::kIgnore},
    VllmFlag{"--distributed-executor-backend", "", A::kOne, X::kIgnore},
    VllmFlag{"--max-parallel-loading-workers", "", A::kOne, X::kIgnore},
    VllmFlag{"--ray-workers-use-nsight", "", A::kNone, X::kIgnore},
    VllmFlag{"--disable-custom-all-reduce", "", A::kNone, X::kApprox},
    VllmFlag{"--worker-cls", "", A::kOne, X::kIgnore},
    VllmFlag{"--worker-extension-cls", "", A::kOne, X::kIgnore},
    // CacheConfig
    VllmFlag{"--block-size", "", A::kOne, X::kMap},
    VllmFlag{"--gpu-memory-utilization", "", A::kOne, X::kMap},
    VllmFlag{"--kv-cache-memory-bytes", "", A::kOne, X::kMap},
    VllmFlag{"--swap-space", "", A::kOne, X::kMap, "", true},
    VllmFlag{"--kv-cache-dtype", "", A::kOne, X::kMap},
    VllmFlag{"--num-gpu-blocks-override", "", A::kOne, X::kMap},
    VllmFlag{"--enable-prefix-caching", "", A::kNone, X::kMap},
    VllmFlag{"--cpu-offload-gb", "", A::kOne, X::kMap},
    VllmFlag{"--kv-offloading-size", "", A::kOne, X::kMap, "", true},
    VllmFlag{"--kv-offloading-backend", "", A::kOne, X::kMap},
    VllmFlag{"--prefix-caching-hash-algo", "", A::kOne, X::kIgnore},
    VllmFlag{"--calculate-kv-scales", "", A::kNone, X::kIgnore},
    VllmFlag{"--kv-sharing-fast-prefill", "", A::kNone, X::kApprox},
    VllmFlag{"--mamba-cache-dtype", "", A::kOne, X::kApprox},
    VllmFlag{"--mamba-ssm-cache-dtype", "", A::kOne, X::kApprox},
    VllmFlag{"--mamba-block-size", "", A::kOne, X::kApprox},
    // MultiModalConfig: the encoder's profile and inputs are not modelled (text only)
    VllmFlag{"--limit-mm-per-prompt", "", A::kOne, X::kApprox},
    VllmFlag{"--enable-mm-embeds", "", A::kNone, X::kApprox},
    VllmFlag{"--media-io-kwargs", "", A::kOne, X::kApprox},
    VllmFlag{"--mm-processor-kwargs", "", A::kOne, X::kApprox},
    VllmFlag{"--mm-processor-cache-gb", "", A::kOne, X::kApprox},
    VllmFlag{"--disable-mm-preprocessor-cache", "", A::kNone, X::kApprox},
    VllmFlag{"--mm-processor-cache-type", "", A::kOne, X::kApprox},
    VllmFlag{"--mm-shm-cache-max-object-size-mb", "", A::kOne, X::kApprox},
    VllmFlag{"--mm-encoder-tp-mode", "", A::kOne, X::kApprox},
    VllmFlag{"--mm-encoder-attn-backend", "", A::kOne, X::kApprox},
    VllmFlag{"--interleave-mm-strings", "", A::kNone, X::kApprox},
    VllmFlag{"--skip-mm-profiling", "", A::kNone, X::kApprox},
    VllmFlag{"--video-pruning-rate", "", A::kOne, X::kApprox},
    VllmFlag{"--enable-multimodal-encoder-data-parallel", "", A::kNone, X::kApprox},
    // LoRAConfig
    VllmFlag{"--enable-lora", "", A::kNone, X::kMap},
    VllmFlag{"--max-loras", "", A::kOne, X::kMap},
    VllmFlag{"--max-lora-rank", "", A::kOne, X::kMap},
    VllmFlag{"--lora-extra-vocab-size", "", A::kOne, X::kRefuse, kLoraVocab},
    VllmFlag{"--lora-dtype", "", A::kOne, X::kMap},
    VllmFlag{"--max-cpu-loras", "", A::kOne, X::kMap},
    VllmFlag{"--fully-sharded-loras", "", A::kNone, X::kMap},
    VllmFlag{"--default-mm-loras", "", A::kOne, X::kRefuse,
             "multimodal default adapters are not modelled (text only)"},
    // The adapters' names and paths; which requests use them is the workload's (a trace's
    // lora column or --num-lora-adapters), their shapes are max_lora_rank's.
    VllmFlag{"--lora-modules", "", A::kMany, X::kApprox},
    // ObservabilityConfig
    VllmFlag{"--show-hidden-metrics-for-version", "", A::kOne, X::kIgnore},
    VllmFlag{"--otlp-traces-endpoint", "", A::kOne, X::kIgnore},
    VllmFlag{"--collect-detailed-traces", "", A::kOne, X::kIgnore},
    // SchedulerConfig
    VllmFlag{"--max-num-batched-tokens", "", A::kOne, X::kMap},
    VllmFlag{"--max-num-seqs", "", A::kOne, X::kMap},
    VllmFlag{"--max-num-partial-prefills", "", A::kOne, X::kDefault, "1"},
    VllmFlag{"--max-long-partial-prefills", "", A::kOne, X::kDefault, "1"},
    VllmFlag{"--long-prefill-token-threshold", "", A::kOne, X::kMap},
    VllmFlag{"--num-lookahead-slots", "", A::kOne, X::kIgnore},
    VllmFlag{"--scheduling-policy", "", A::kOne, X::kDefault, "fcfs"},
    VllmFlag{"--enable-chunked-prefill", "", A::kNone, X::kMap},
    VllmFlag{"--disable-chunked-mm-input", "", A::kNone, X::kApprox},
    VllmFlag{"--scheduler-cls", "", A::kOne, X::kRefuse,
             "a custom scheduler class is not modelled"},
    VllmFlag{"--disable-hybrid-kv-cache-manager", "", A::kNone, X::kRefuse,
             "it gives every layer a full-length KV cache on hybrid models, which is not "
             "modelled"},
    VllmFlag{"--async-scheduling", "", A::kNone, X::kMap},
    // CompilationConfig: only the CUDA-graph estimate (outside the KV budget before 0.21)
    VllmFlag{"--cudagraph-capture-sizes", "", A::kMany, X::kApprox},
    VllmFlag{"--cuda-graph-sizes", "", A::kMany, X::kApprox},
    VllmFlag{"--max-cudagraph-capture-size", "", A::kOne, X::kApprox},
    VllmFlag{"--compilation-config", "-O", A::kOne, X::kApprox},
    // VllmConfig
    VllmFlag{"--speculative-config", "", A::kOne, X::kMap},
    // Read by lmcache_connector() below: LMCache's CPU tier is modelled, no other connector.
    VllmFlag{"--kv-transfer-config", "", A::kOne, X::kRefuse,
             "only {\"kv_connector\": \"LMCacheConnectorV1\", \"kv_role\": \"kv_both\"} "
             "is modelled (as --kv-offloading-backend lmcache, LMCache's CPU tier); other KV "
             "connectors (disaggregated prefill/decode, NIXL, ...) are not"},
    VllmFlag{"--kv-events-config", "", A::kOne, X::kIgnore},
    VllmFlag{"--additional-config", "", A::kOne, X::kIgnore},
    VllmFlag{"--disable-log-stats", "", A::kNone, X::kIgnore},
    VllmFlag{"--aggregate-engine-logging", "", A::kNone, X::kIgnore},
    VllmFlag{"--device", "", A::kOne, X::kIgnore},
    // The OpenAI server (vllm/entrypoints/openai/cli_args.py) and `vllm serve` itself
    VllmFlag{"--config", "", A::kOne, X::kRefuse,
             "vramsim does not read vLLM's YAML config files; put its settings on the command "
             "line"},
    VllmFlag{"--host", "", A::kOne, X::kIgnore},
    VllmFlag{"--port", "", A::kOne, X::kIgnore},
    VllmFlag{"--uds", "", A::kOne, X::kIgnore},
    VllmFlag{"--uvicorn-log-level", "", A::kOne, X::kIgnore},
    VllmFlag{"--disable-uvicorn-access-log", "", A::kNone, X::kIgnore},
    VllmFlag{"--allow-credentials", "", A::kNone, X::kIgnore},
    VllmFlag{"--allowed-origins", "", A::kOne, X::kIgnore},
    VllmFlag{"--allowed-methods", "", A::kOne, X::kIgnore},
    VllmFlag{"--allowed-headers", "", A::kOne, X::kIgnore},
    VllmFlag{"--api-key", "", A::kMany, X::kIgnore},
    VllmFlag{"--chat-template", "", A::kOne, X::kIgnore},
    VllmFlag{"--chat-template-content-format", "", A::kOne, X::kIgnore},
    VllmFlag{"--trust-request-chat-template", "", A::kNone, X::kIgnore},
    VllmFlag{"--default-chat-template-kwargs", "", A::kOne, X::kIgnore},
    VllmFlag{"--response-role", "", A::kOne, X::kIgnore},
    VllmFlag{"--ssl-keyfile", "", A::kOne, X::kIgnore},
    VllmFlag{"--ssl-certfile", "", A::kOne, X::kIgnore},
    VllmFlag{"--ssl-ca-certs", "", A::kOne, X::kIgnore},
    VllmFlag{"--enable-ssl-refresh", "", A::kNone, X::kIgnore},
    VllmFlag{"--ssl-cert-reqs", "", A::kOne, X::kIgnore},
    VllmFlag{"--root-path", "", A::kOne, X::kIgnore},
    VllmFlag{"--middleware", "", A::kOne, X::kIgnore},
    VllmFlag{"--return-tokens-as-token-ids", "", A::kNone, X::kIgnore},
    VllmFlag{"--disable-frontend-multiprocessing", "", A::kNone, X::kIgnore},
    VllmFlag{"--enable-request-id-headers", "", A::kNone, X::kIgnore},
    VllmFlag{"--enable-auto-tool-choice", "", A::kNone, X::kIgnore},
    VllmFlag{"--exclude-tools-when-tool-choice-none", "", A::kNone, X::kIgnore},
    VllmFlag{"--tool-call-parser", "", A::kOne, X::kIgnore},
    VllmFlag{"--tool-parser-plugin", "", A::kOne, X::kIgnore},
    VllmFlag{"--tool-server", "", A::kOne, X::kIgnore},
    VllmFlag{"--log-config-file", "", A::kOne, X::kIgnore},
    VllmFlag{"--max-log-len", "", A::kOne, X::kIgnore},
    VllmFlag{"--disable-fastapi-docs", "", A::kNone, X::kIgnore},
    VllmFlag{"--enable-prompt-tokens-details", "", A::kNone, X::kIgnore},
    VllmFlag{"--enable-server-load-tracking", "", A::kNone, X::kIgnore},
    VllmFlag{"--enable-force-include-usage", "", A::kNone, X::kIgnore},
    VllmFlag{"--enable-tokenizer-info-endpoint", "", A::kNone, X::kIgnore},
    VllmFlag{"--enable-log-outputs", "", A::kNone, X::kIgnore},
    VllmFlag{"--enable-log-requests", "", A::kNone, X::kIgnore},
    VllmFlag{"--disable-log-requests", "", A::kNone, X::kIgnore},
    VllmFlag{"--h11-max-incomplete-event-size", "", A::kOne, X::kIgnore},
    VllmFlag{"--h11-max-header-count", "", A::kOne, X::kIgnore},
    VllmFlag{"--log-error-stack", "", A::kNone, X::kIgnore},
    VllmFlag{"--tokens-only", "", A::kNone, X::kIgnore},
    VllmFlag{"--api-server-count", "-asc", A::kOne, X::kIgnore},
    VllmFlag{"--headless", "", A::kNone, X::kIgnore},
};

const VllmFlag* find_flag(std::string_view name) {
  for (const VllmFlag& f : kFlags) {
    if (f.name == name || (!f.alias.empty() && f.alias == name)) return &f;
  }
  return nullptr;
}

[[noreturn]] void fail(const std::string& message) {
  throw ConfigError("vllm command", message);
}

// The words of one string as a POSIX shell splits them: blanks separate, '...' keeps
// everything, "..." keeps all but \" and \\, a backslash escapes one character and a
// backslash-newline joins lines.
std::vector<std::string> shell_split(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] != '\n') {
        word += text[i + 1];
        in_word = true;
      }
      ++i;
    } else if (c == '\'' || c == '"') {
      const std::size_t end = text.find(c, i + 1);
      if (end == std::string_view::npos) {
        fail(fmt::format("unterminated {} quote in the pasted command", c == '\'' ? "single"
                                                                               : "double"));
      }
      for (std::size_t j = i + 1; j < end; ++j) {
        if (c == '"' && text[j] == '\\' && j + 1 < end &&
            (text[j + 1] == '"' || text[j + 1] == '\\')) {
          ++j;
        }
        word += text[j];
      }
      in_word = true;
      i = end;
    } else if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Where the vLLM arguments start in `words` (after `vllm serve`, the api_server module or the
// vllm-openai image); nullopt when there is no launcher.
std::optional<std::size_t> vllm_arguments_start(const std::vector<std::string>& words) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if ((w == "vllm" || ends_with(w, "/vllm")) && i + 1 < words.size() && words[i + 1] == "serve") {
      return i + 2;
    }
    if (w.find("vllm.entrypoints.openai.api_server") != std::string::npos) return i + 1;
    if (w.rfind("vllm/vllm-openai", 0) == 0) return i + 1;
  }
  return std::nullopt;
}

// "--max_model_len=8k" -> "--max-model-len", with "=8k" split off into `value`.
std::string normalized_flag(const std::string& word, std::optional<std::string>& value) {
  std::string key = word;
  if (const std::size_t eq = word.find('='); eq != std::string::npos && word.rfind("--", 0) == 0) {
    key = word.substr(0, eq);
    value = word.substr(eq + 1);
  }
  if (key.rfind("--", 0) == 0) std::replace(key.begin() + 2, key.end(), '_', '-');
  return key;
}

std::string closest_vllm_flags(std::string_view typed) {
  std::vector<std::pair<std::size_t, std::string_view>> near;
  const std::size_t limit = std::max<std::size_t>(2, typed.size() / 4);
  for (const VllmFlag& f : kFlags) {
    for (std::string_view name : {f.name, f.alias}) {
      if (name.empty()) continue;
      const std::size_t d = edit_distance(typed, name);
      if (d <= limit) near.emplace_back(d, name);
    }
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (near.empty()) return "";
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < near.size() && i < 3; ++i) names.push_back(near[i].second);
  return fmt::format("; did you mean {}?", fmt::join(names, " or "));
}

// Whether a --kv-transfer-config JSON is LMCache's connector as vLLM's own --kv-offloading-backend
// lmcache sets it (vllm/config/vllm.py, _post_init_kv_transfer_config: LMCacheConnectorV1,
// kv_role kv_both): no other key, or an empty kv_connector_extra_config.
bool lmcache_connector(const std::string& json_text) {
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  for (const auto& [key, value] : j.items()) {
    if (key == "kv_connector") {
      if (value != "LMCacheConnectorV1") return false;
    } else if (key == "kv_role") {
      if (value != "kv_both") return false;
    } else if (key != "kv_connector_extra_config" || !value.empty()) {
      return false;
    }
  }
  return j.contains("kv_connector") && j.contains("kv_role");
}

bool is_plain_number(std::string_view v) {
  if (v.empty()) return false;
  bool digit = false;
  for (char c : v) {
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      digit = true;
    } else if (c != '.') {
      return false;
    }
  }
  return digit;
}

}  // namespace

std::optional<PastedVllm> translate_pasted_vllm(const std::vector<std::string>& argv,
                                                const AcceptsFlag& accepts) {
  const auto dash = std::find(argv.begin(), argv.end(), "--");
  if (dash == argv.end()) return std::nullopt;
  std::vector<std::string> words(dash + 1, argv.end());
  // The whole command quoted as one word: split it as the shell would have.
  if (words.size() == 1 && words[0].find_first_of(" \t\n") != std::string::npos) {
    words = shell_split(words[0]);
  }
  const std::optional<std::size_t> start = vllm_arguments_start(words);
  if (!start) return std::nullopt;

  std::vector<std::string> mapped;   // vramsim flags and values
  std::vector<std::string> ignored;  // as typed
  std::vector<std::string> approx;
  std::vector<std::string> refused;
  std::optional<std::string> model;
  for (std::size_t i = *start; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.empty() || word[0] != '-' || word == "-") {
      if (model) {
        fail(fmt::format("unexpected word '{}' in the pasted vLLM command (the model is already "
                         "'{}'; a value without its flag?)",
                         word, *model));
      }
      model = word;
      continue;
    }
    std::optional<std::string> value;
    std::string key = normalized_flag(word, value);
    // -O3, -O.level=3: the compilation level glued to its short flag.
    if (key.rfind("-O", 0) == 0 && key.size() > 2 && key[2] != '-') {
      approx.push_back(word);
      continue;
    }
    bool negated = false;
    const VllmFlag* flag = find_flag(key);
    if (flag == nullptr && key.rfind("--no-", 0) == 0) {
      const VllmFlag* positive = find_flag("--" + key.substr(5));
      if (positive != nullptr && positive->arity == Arity::kNone) {
        flag = positive;
        negated = true;
      }
    }
    if (flag == nullptr) {
      const std::string near = closest_vllm_flags(key);
      fail(fmt::format("'{}' is not a flag of `vllm serve` (vLLM 0.19's flags){}", word,
                       near.empty() ? "; if your vLLM takes it, leave it out of the pasted "
                                      "command"
                                    : near));
    }
    // Its values, as argparse takes them.
    std::vector<std::string> values;
    if (value) {
      if (flag->arity == Arity::kNone) {
        fail(fmt::format("'{}': {} takes no value", word, flag->name));
      }
      values.push_back(*value);
    } else if (flag->arity == Arity::kOne) {
      if (i + 1 >= words.size() || words[i + 1].rfind("--", 0) == 0) {
        fail(fmt::format("{} needs a value", word));
      }
      values.push_back(words[++i]);
    } else if (flag->arity == Arity::kOptional || flag->arity == Arity::kMany) {
      while (i + 1 < words.size() && !(words[i + 1].size() > 1 && words[i + 1][0] == '-')) {
        values.push_back(words[++i]);
        if (flag->arity == Arity::kOptional) break;
      }
      if (flag->arity == Arity::kMany && values.empty()) {
        fail(fmt::format("{} needs at least one value", word));
      }
    }
    const std::string as_typed =
        values.empty() ? word : fmt::format("{} {}", word, fmt::join(values, " "));
    switch (flag->action) {
      case Action::kMap: {
        if (flag->name == "--model") {
          if (model && *model != values[0]) {
            fail(fmt::format("the model is given twice: '{}' and --model {}", *model, values[0]));
          }
          model = values[0];
          break;
        }
        const std::string target(flag->detail.empty() ? flag->name : flag->detail);
        if (!accepts(target)) {
          ignored.push_back(as_typed);
          break;
        }
        if (flag->arity == Arity::kNone) {
          mapped.push_back(negated ? "--no-" + target.substr(2) : target);
        } else {
          std::string v = values[0];
          if (flag->gib && is_plain_number(v)) v += "GiB";
          mapped.push_back(target);
          mapped.push_back(v);
        }
        break;
      }
      case Action::kDefault: {
        std::vector<std::string_view> allowed;
        std::string_view rest = flag->detail;
        while (!rest.empty()) {
          const std::size_t bar = rest.find('|');
          allowed.push_back(rest.substr(0, bar));
          rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
        }
        if (std::find(allowed.begin(), allowed.end(), values[0]) == allowed.end()) {
          refused.push_back(fmt::format("{}: only vLLM's default ({}) is modelled", as_typed,
                                        fmt::join(allowed, " or ")));
        }
        break;
      }
      case Action::kRefuse:
        if (flag->name == "--kv-transfer-config" && lmcache_connector(values[0])) {
          if (accepts("--kv-offloading-backend")) {
            mapped.insert(mapped.end(), {"--kv-offloading-backend", "lmcache"});
          } else {
            ignored.push_back(as_typed);
          }
          break;
        }
        // The negative form of a refused boolean ("--no-enable-lora") asks for the default.
        if (!negated) refused.push_back(fmt::format("{}: {}", as_typed, flag->detail));
        break;
      case Action::kIgnore: ignored.push_back(as_typed); break;
      case Action::kApprox: approx.push_back(as_typed); break;
    }
  }
  if (!refused.empty()) {
    ValidationReport report;
    for (const std::string& r : refused) {
      report.error("vllm command", fmt::format("{}; remove it from the pasted command to "
                                               "simulate without it",
                                               r));
    }
    throw ConfigError(std::move(report));
  }
  if (!model) {
    fail("the pasted vLLM command names no model (vllm serve MODEL, or --model MODEL)");
  }

  PastedVllm out;
  out.argv.assign(argv.begin(), dash);
  std::vector<std::string> own(out.argv.begin(), out.argv.end());
  // The words before "--" after the command itself are the user's vramsim flags: they go last.
  std::size_t command_words = 2;
  if (argv.size() > 2 && (argv[1] == "compare" || argv[1] == "capacity")) command_words = 3;
  command_words = std::min(command_words, out.argv.size());
  out.argv.resize(command_words);
  const std::vector<std::string> translated = [&] {
    std::vector<std::string> t{"--model", *model};
    t.insert(t.end(), mapped.begin(), mapped.end());
    return t;
  }();
  out.argv.insert(out.argv.end(), translated.begin(), translated.end());
  out.argv.insert(out.argv.end(), own.begin() + static_cast<std::ptrdiff_t>(command_words),
                  own.end());
  out.notes.push_back(fmt::format("the pasted vLLM command reads as: {}",
                                  fmt::join(translated, " ")));
  if (!ignored.empty()) {
    out.notes.push_back(fmt::format("ignored, as they change neither memory nor time here: {}",
                                    fmt::join(ignored, ", ")));
  }
  if (!approx.empty()) {
    out.notes.push_back(fmt::format("not modelled, answered as with vLLM's defaults (they change "
                                    "time or the CUDA-graph estimate only): {}",
                                    fmt::join(approx, ", ")));
  }
  return out;
}

bool takes_pasted_vllm(const std::vector<std::string>& argv) {
  if (argv.size() < 2) return false;
  if (argv[1] == "budget" || argv[1] == "serve") return true;
  return (argv[1] == "compare" || argv[1] == "capacity") && argv.size() > 2 && argv[2] == "serve";
}

bool command_accepts(const CLI::App& app, const std::vector<std::string>& argv,
                     const std::string& flag) {
  if (!takes_pasted_vllm(argv)) return false;
  const auto child = [](const CLI::App* parent, const std::string& name) -> const CLI::App* {
    if (parent == nullptr) return nullptr;
    const std::vector<const CLI::App*> found = parent->get_subcommands(
        [&](const CLI::App* sub) { return sub->get_name() == name; });
    return found.empty() ? nullptr : found.front();
  };
  const CLI::App* cmd = child(&app, argv[1]);
  if (argv[1] != "budget" && argv[1] != "serve") cmd = child(cmd, argv[2]);
  return cmd != nullptr && cmd->get_option_no_throw(flag) != nullptr;
}

}  // namespace vramsim::cli
