#include "sim/serving/speculative.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>
#include <cmath>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"

namespace vramsim::serving {

std::string_view to_string(SpeculativeMethod m) { return name_of(kSpeculativeMethods, m); }
std::optional<SpeculativeMethod> speculative_method_from_string(std::string_view text) {
  return parse_name(kSpeculativeMethods, text);
}

namespace {

// vLLM caps num_speculative_tokens nowhere explicitly; past 32 no published drafter helps, and
// the bound keeps k + 1 tokens per sequence far inside the token budget's int32.
constexpr std::int64_t kMaxSpeculativeTokens = 32;

constexpr std::string_view kKeys[] = {"method",
                                      "model",
                                      "num_speculative_tokens",
                                      "draft_tensor_parallel_size",
                                      "prompt_lookup_min",
                                      "prompt_lookup_max"};
constexpr std::string_view kKnownKeys =
    "method, model, num_speculative_tokens, draft_tensor_parallel_size, prompt_lookup_min, "
    "prompt_lookup_max";

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::int64_t> read_int(const nlohmann::json& j, const std::string& key,
                                     const std::string& field, std::int64_t min_value,
                                     std::int64_t max_value, ValidationReport& report) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) {
    report.error(field + "." + key, fmt::format("must be an integer, got {}", it->dump()));
    return std::nullopt;
  }
  const auto v = it->get<std::int64_t>();
  if (v < min_value || v > max_value) {
    report.error(field + "." + key,
                 fmt::format("must be in [{}, {}], got {}", min_value, max_value, v));
    return std::nullopt;
  }
  return v;
}

}  // namespace

double expected_tokens_per_step(std::span<const double> rates) {
  double e = 1.0;
  double p = 1.0;
  for (const double a : rates) {
    VRAMSIM_CHECK(a >= 0.0 && a <= 1.0, "acceptance rate {} outside [0, 1]", a);
    p *= a;
    e += p;
  }
  return e;
}

double SpeculativeConfig::expected_tokens_per_step() const {
  return serving::expected_tokens_per_step(acceptance_rates);
}

SpeculativeConfig parse_speculative_config(std::string_view json, const std::string& field) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(field, fmt::format("not valid JSON ({}); expected an object such as "
                                         "'{{\"method\": \"eagle3\", \"model\": \"...\", "
                                         "\"num_speculative_tokens\": 3}}'",
                                         e.what()));
  }
  if (!j.is_object()) {
    throw ConfigError(field, fmt::format("must be a JSON object, got {}", j.dump()));
  }
  ValidationReport report;
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      report.error(field + "." + key,
                   fmt::format("unknown key (not modelled, so refused rather than ignored); "
                               "known: {}",
                               kKnownKeys));
    }
  }
  SpeculativeConfig c;
  const auto string_of = [&](const std::string& key) -> std::optional<std::string> {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_string() || it->get<std::string>().empty()) {
      report.error(field + "." + key, fmt::format("must be a non-empty string, got {}", it->dump()));
      return std::nullopt;
    }
    return it->get<std::string>();
  };
  const std::optional<std::string> model = string_of("model");
  if (model) c.model = *model;
  if (const std::optional<std::string> method = string_of("method")) {
    if (const auto m = speculative_method_from_string(*method)) {
      c.method = *m;
    } else {
      report.error(field + ".method",
                   fmt::format("unknown method '{}'; valid: {}", *method,
                               names_list<kSpeculativeMethods>()));
    }
  } else if (model) {
    // vLLM's SpeculativeConfig.__post_init__ names the method from the model when it is unset.
    const std::string name = lower(*model);
    c.method = name.find("eagle3") != std::string::npos  ? SpeculativeMethod::kEagle3
               : name.find("eagle") != std::string::npos ? SpeculativeMethod::kEagle
               : name.find("ngram") != std::string::npos ? SpeculativeMethod::kNgram
                                                         : SpeculativeMethod::kDraftModel;
    if (c.method == SpeculativeMethod::kNgram) c.model.clear();
  } else if (report.ok()) {
    report.error(field + ".method",
                 fmt::format("required (or a model to name it from); valid: {}",
                             names_list<kSpeculativeMethods>()));
  }
  const std::optional<std::int64_t> k =
      read_int(j, "num_speculative_tokens", field, 1, kMaxSpeculativeTokens, report);
  if (k) {
    c.num_speculative_tokens = *k;
  } else if (!j.contains("num_speculative_tokens")) {
    report.error(field + ".num_speculative_tokens",
                 "required: the draft tokens proposed per sequence and step");
  }
  c.draft_tensor_parallel_size =
      read_int(j, "draft_tensor_parallel_size", field, 1, 4096, report);
  c.prompt_lookup_min = read_int(j, "prompt_lookup_min", field, 1, 1 << 20, report);
  c.prompt_lookup_max = read_int(j, "prompt_lookup_max", field, 1, 1 << 20, report);
  const bool needs_model =
      c.method == SpeculativeMethod::kDraftModel || c.method == SpeculativeMethod::kEagle ||
      c.method == SpeculativeMethod::kEagle3;
  if (report.ok() && needs_model && c.model.empty()) {
    report.error(field + ".model",
                 fmt::format("required by method '{}': the draft's config.json path or zoo id",
                             to_string(c.method)));
  }
  if (report.ok() && c.method == SpeculativeMethod::kNgram && model) {
    report.error(field + ".model", "ngram has no draft model; leave model out");
  }
  if (report.ok() && c.method != SpeculativeMethod::kNgram &&
      (c.prompt_lookup_min || c.prompt_lookup_max)) {
    report.error(field + (c.prompt_lookup_min ? ".prompt_lookup_min" : ".prompt_lookup_max"),
                 fmt::format("an ngram setting, ignored by method '{}'", to_string(c.method)));
  }
  throw_if_errors(report);
  return c;
}

std::vector<double> parse_acceptance_rates(std::string_view text, std::int64_t k,
                                           const std::string& field) {
  std::vector<double> rates;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    double v = 0.0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() ||
        !std::isfinite(v)) {
      throw ConfigError(field, fmt::format("expected a rate in [0, 1] or a comma-separated list "
                                           "of {} (one per draft position), got '{}'",
                                           k, text));
    }
    if (v < 0.0 || v > 1.0) {
      throw ConfigError(field, fmt::format("each acceptance rate must be in [0, 1], got {}", v));
    }
    rates.push_back(v);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (rates.size() == 1) {
    rates.assign(static_cast<std::size_t>(k), rates.front());
  } else if (static_cast<std::int64_t>(rates.size()) != k) {
    throw ConfigError(field, fmt::format("{} rates for num_speculative_tokens = {}: give one "
                                         "rate, or exactly one per draft position",
                                         rates.size(), k));
  }
  return rates;
}

BatchShape verification_shape(const BatchShape& batch, std::int64_t k) {
  VRAMSIM_CHECK(k >= 1, "verification with {} draft tokens", k);
  BatchShape v;
  v.prefills = batch.prefills;
  const std::int64_t d = batch.num_decodes;
  if (d == 0) return v;
  // decode_context_tokens counts each decode's new token; the chunk's context excludes it.
  const std::int64_t context = batch.decode_context_tokens - d;
  VRAMSIM_CHECK(context >= 0, "{} decodes attending {} tokens", d, batch.decode_context_tokens);
  const std::int64_t each = context / d;
  const std::int64_t extra = context % d;
  v.prefills.reserve(v.prefills.size() + static_cast<std::size_t>(d));
  for (std::int64_t i = 0; i < d; ++i) {
    v.prefills.push_back({k + 1, each + (i < extra ? 1 : 0)});
  }
  return v;
}

SpeculativeTimeModel::SpeculativeTimeModel(const ExecutionTimeModel& target,
                                           const ExecutionTimeModel* draft,
                                           std::int64_t num_speculative_tokens,
                                           std::string method_name)
    : target_(target), draft_(draft), k_(num_speculative_tokens), method_(std::move(method_name)) {
  VRAMSIM_CHECK(k_ >= 1, "speculative decoding with {} draft tokens", k_);
}

namespace {
/// Adds `times` draft passes of `t` to `to`: their GPU work only. The host's per-step work
/// (scheduling, input preparation, sampling: the overhead part) is the target's, once per step:
/// vLLM schedules once and runs the drafter's passes inside the same engine step.
void add_draft_passes(StepTime& to, const StepTime& t, std::int64_t times) {
  const Duration gpu = t.linear + t.attention + t.communication + t.kernel_gaps;
  to.linear += times * t.linear;
  to.attention += times * t.attention;
  to.communication += times * t.communication;
  to.kernel_gaps += times * t.kernel_gaps;
  to.total += times * gpu;
  to.stage_interval += times * gpu;
}
}  // namespace

StepTime SpeculativeTimeModel::step_time(const BatchShape& batch) const {
  VRAMSIM_CHECK(!batch.empty(), "step_time of an empty batch");
  if (batch.num_decodes == 0) {
    StepTime t = target_.step_time(batch);
    if (draft_ != nullptr) add_draft_passes(t, draft_->step_time(batch), 1);
    return t;
  }
  const BatchShape verify = verification_shape(batch, k_);
  StepTime t = target_.step_time(verify);
  if (draft_ == nullptr) return t;
  add_draft_passes(t, draft_->step_time(verify), 1);
  if (k_ > 1) {
    BatchShape next;
    next.num_decodes = batch.num_decodes;
    next.decode_context_tokens = batch.decode_context_tokens;
    add_draft_passes(t, draft_->step_time(next), k_ - 1);
  }
  return t;
}

std::string SpeculativeTimeModel::describe() const {
  return fmt::format("{}; speculative {} k={} (draft: {})", target_.describe(), method_, k_,
                     draft_ != nullptr ? draft_->describe() : "CPU, no GPU time");
}

}  // namespace vramsim::serving
