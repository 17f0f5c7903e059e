// Typed access to the keys of one JSON object of a Hugging Face config.json, reporting every
// problem (missing key, wrong type, non-positive size) into a ValidationReport with the key's
// full path ("text_config.hidden_size") and the file. Used only by the hf_config*.cpp readers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"

namespace vramsim::model::detail {

/// Largest integer a config.json size or count may hold: 2^24 = 16,777,216. The largest real
/// figures are ~10^7 (max_position_embeddings of 10M-context models; vocabularies ~2.6 * 10^5,
/// widths ~5 * 10^4); anything above is a corrupt or mistyped file, and products of such sizes
/// would overflow the int64 counts downstream.
inline constexpr std::int64_t kMaxConfigInteger = std::int64_t{1} << 24;

class ConfigKeys {
 public:
  /// `object` must outlive this reader. `prefix` is prepended to key names in messages.
  ConfigKeys(const nlohmann::json& object, std::string prefix, SourceLocation where,
             ValidationReport& report);

  /// The value of `key`, or nullptr when it is absent or JSON null (HF writes null for "unset").
  const nlohmann::json* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  /// A size the model cannot be built without. Missing, non-integer or < 1 is reported
  /// (naming the key and `meaning`, what was expected) and 0 is returned.
  std::int64_t required_positive(std::string_view key, std::string_view meaning);
  /// A size that may be absent or null (then nullopt). Present but invalid is reported.
  std::optional<std::int64_t> optional_positive(std::string_view key);
  /// An integer >= 0 that may be absent (then `fallback`).
  std::int64_t non_negative_or(std::string_view key, std::int64_t fallback);
  bool boolean_or(std::string_view key, bool fallback);
  std::optional<double> number(std::string_view key);
  std::optional<std::string> string(std::string_view key);

  /// The JSON object under `key` (required: reported, naming `meaning`, when absent or not an
  /// object); its keys are reported as "key.inner".
  std::optional<ConfigKeys> object(std::string_view key, std::string_view meaning);

  /// Reports a problem on `key`.
  void error(std::string_view key, std::string message);
  /// "text_config.hidden_size" for key "hidden_size" under prefix "text_config.".
  std::string field(std::string_view key) const;
  const SourceLocation& where() const { return where_; }
  ValidationReport& report() { return *report_; }

 private:
  std::optional<std::int64_t> integer(std::string_view key, const nlohmann::json& v);

  const nlohmann::json* object_;
  std::string prefix_;
  SourceLocation where_;
  ValidationReport* report_;
};

/// JSON type name for messages ("string", "number", "array", ...), with the value when short.
std::string describe_json(const nlohmann::json& v);

}  // namespace vramsim::model::detail
