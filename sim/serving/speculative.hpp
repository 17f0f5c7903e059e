// Speculative decoding as vLLM runs it (--speculative-config): a drafter proposes k tokens per
// decoding sequence, the target verifies them in one forward pass over k + 1 tokens, and the
// accepted prefix plus one token of the target's own is emitted.
//
//   drafter        draft_model (a smaller model), eagle / eagle3 (one decoder layer + fc fed
//                  with the target's hidden states), mtp (the checkpoint's own
//                  multi-token-prediction layers), ngram (prompt lookup on the CPU: no weights)
//   acceptance     an input (it depends on the data): a constant rate a, or one rate per draft
//                  position a_1..a_k, each the probability that position i is accepted given
//                  that positions before it were
//   tokens / step  E = sum_{i=0..k} prod_{j=1..i} a_j   (a_0 term = 1: the target's own token)
//                  constant a: E = (1 - a^(k+1)) / (1 - a); a = 1: E = k + 1
//
// The scheduler emits E tokens per decoding sequence and step in expectation, deterministically:
// each request carries a fractional credit, adds E every decode step and emits floor(credit)
// tokens (never past its output length), so a request of n tokens takes about (n - 1) / E steps
// after its first token and every run is bit-identical without drawing random numbers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/enum_table.hpp"
#include "sim/serving/execution_time_model.hpp"

namespace vramsim::serving {

enum class SpeculativeMethod { kDraftModel, kEagle, kEagle3, kMtp, kNgram };
inline constexpr auto kSpeculativeMethods = enum_table<SpeculativeMethod>(
    {
        {SpeculativeMethod::kDraftModel, "draft_model",
         "a smaller model of the same vocabulary drafts autoregressively (its weights and KV)"},
        {SpeculativeMethod::kEagle, "eagle",
         "EAGLE head: fc(2h -> h) and one decoder layer on the target's last hidden state"},
        {SpeculativeMethod::kEagle3, "eagle3",
         "EAGLE-3 head: fc(3h -> h) over three of the target's layers, one decoder layer"},
        {SpeculativeMethod::kMtp, "mtp",
         "the checkpoint's multi-token-prediction layers (config.json num_nextn_predict_layers)"},
        {SpeculativeMethod::kNgram, "ngram",
         "prompt lookup on the CPU: no weights, no KV, no GPU time"},
    },
    {{"deepseek_mtp", SpeculativeMethod::kMtp}, {"draft", SpeculativeMethod::kDraftModel}});
static_assert(covers_every_enumerator(kSpeculativeMethods) &&
              names_are_unique(kSpeculativeMethods));
std::string_view to_string(SpeculativeMethod m);
std::optional<SpeculativeMethod> speculative_method_from_string(std::string_view text);

/// vLLM's --speculative-config, the keys this simulator reads.
struct SpeculativeConfig {
  SpeculativeMethod method = SpeculativeMethod::kNgram;
  /// The draft model or head: a config.json path or a zoo id; "" for ngram (and mtp, whose
  /// layers are the target's own).
  std::string model;
  std::int64_t num_speculative_tokens = 0;  // k, in [1, 32]
  /// draft_tensor_parallel_size when given (vLLM: the target's TP by default).
  std::optional<std::int64_t> draft_tensor_parallel_size;
  /// ngram's n-gram window (vLLM's prompt_lookup_min/max): they shape the acceptance rate
  /// only, which is an input here; kept so the resolved setting records them.
  std::optional<std::int64_t> prompt_lookup_min;
  std::optional<std::int64_t> prompt_lookup_max;
  /// Acceptance rate per draft position (size k); from --spec-acceptance-rate.
  std::vector<double> acceptance_rates;

  /// E, the expected tokens emitted per decoding sequence and step (see the file comment).
  double expected_tokens_per_step() const;
  /// Whether the drafter runs on the GPU (every method but ngram).
  bool has_draft_model() const { return method != SpeculativeMethod::kNgram; }
};

/// Parses vLLM's --speculative-config JSON object ('{"method": "eagle3", "model": "...",
/// "num_speculative_tokens": 3}'). Without "method", vLLM's rule names it from the model:
/// "eagle3" in the name -> eagle3, "eagle" -> eagle, "ngram" -> ngram, otherwise draft_model.
/// Throws ConfigError naming `field` + "." + the key ("engine.speculative_config.method") for
/// bad JSON, an unknown key or method, a missing or out-of-range value.
SpeculativeConfig parse_speculative_config(std::string_view json, const std::string& field);

/// Parses --spec-acceptance-rate: one rate for every position ("0.7") or one per position
/// ("0.8,0.6,0.5", exactly k of them), each in [0, 1]. Throws ConfigError on `field`.
std::vector<double> parse_acceptance_rates(std::string_view text, std::int64_t k,
                                           const std::string& field);

/// E for per-position rates: 1 + a_1 + a_1 a_2 + ... + a_1 ... a_k.
double expected_tokens_per_step(std::span<const double> rates);

/// The target's verification pass of `batch`: every decode becomes a chunk of k + 1 tokens (its
/// sampled token and k drafts) after its context (the decodes' total context is split evenly,
/// the remainder one token each to the first ones); prefill chunks are kept.
BatchShape verification_shape(const BatchShape& batch, std::int64_t k);

/// The step time of a replica that speculates: with decodes in the batch, the target's
/// verification pass (verification_shape) plus k draft passes, the first over the verification
/// shape (EAGLE and draft models run over every scheduled token to fill their own KV), the
/// other k - 1 over one token per decoding sequence; without decodes, the target's pass plus
/// one draft pass over the prompt tokens. ngram (no draft model) adds nothing. A draft pass
/// adds its GPU work (linear, attention, communication) to the target's parts, so they still
/// sum to total; the host's per-step overhead is the target's alone (vLLM schedules once per
/// step). Needs pp = 1 (stage_interval = total).
class SpeculativeTimeModel final : public ExecutionTimeModel {
 public:
  /// `target` and `draft` (null for ngram) must outlive this model.
  SpeculativeTimeModel(const ExecutionTimeModel& target, const ExecutionTimeModel* draft,
                       std::int64_t num_speculative_tokens, std::string method_name);
  StepTime step_time(const BatchShape& batch) const override;
  std::string describe() const override;

 private:
  const ExecutionTimeModel& target_;
  const ExecutionTimeModel* draft_;
  std::int64_t k_;
  std::string method_;
};

}  // namespace vramsim::serving
