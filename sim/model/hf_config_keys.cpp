#include "sim/model/hf_config_keys.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace vramsim::model::detail {

ConfigKeys::ConfigKeys(const nlohmann::json& object, std::string prefix, SourceLocation where,
                       ValidationReport& report)
    : object_(&object), prefix_(std::move(prefix)), where_(std::move(where)), report_(&report) {}

const nlohmann::json* ConfigKeys::find(std::string_view key) const {
  if (!object_->is_object()) return nullptr;
  auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

std::string ConfigKeys::field(std::string_view key) const {
  return prefix_ + std::string(key);
}

void ConfigKeys::error(std::string_view key, std::string message) {
  report_->error(field(key), std::move(message), where_);
}

std::string describe_json(const nlohmann::json& v) {
  std::string dump = v.dump();
  if (dump.size() > 40) dump = dump.substr(0, 37) + "...";
  return fmt::format("{} {}", v.type_name(), dump);
}

std::optional<std::int64_t> ConfigKeys::integer(std::string_view key, const nlohmann::json& v) {
  std::optional<std::int64_t> n;
  if (v.is_number_unsigned()) {
    // Above int64's range get<std::int64_t>() would wrap; the cap below rejects it anyway.
    const auto u = v.get<std::uint64_t>();
    n = u > static_cast<std::uint64_t>(kMaxConfigInteger) ? kMaxConfigInteger + 1
                                                          : static_cast<std::int64_t>(u);
  } else if (v.is_number_integer()) {
    n = v.get<std::int64_t>();
  } else if (v.is_number_float()) {
    // NOTE: some re-saved configs write sizes as 4096.0; an integral float is the same size.
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
      n = static_cast<std::int64_t>(d);
    }
  }
  if (!n) {
    error(key, fmt::format("expected an integer, got {}", describe_json(v)));
    return std::nullopt;
  }
  if (*n > kMaxConfigInteger) {
    error(key, fmt::format("expected at most {} (larger than any model's size; a corrupt or "
                           "mistyped file?), got {}",
                           kMaxConfigInteger, describe_json(v)));
    return std::nullopt;
  }
  return n;
}

std::int64_t ConfigKeys::required_positive(std::string_view key, std::string_view meaning) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) {
    error(key, fmt::format("missing required field (expected a positive integer: {})", meaning));
    return 0;
  }
  std::optional<std::int64_t> n = integer(key, *v);
  if (!n) return 0;
  if (*n < 1) {
    error(key, fmt::format("must be a positive integer ({}), got {}", meaning, *n));
    return 0;
  }
  return *n;
}

std::optional<std::int64_t> ConfigKeys::optional_positive(std::string_view key) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  std::optional<std::int64_t> n = integer(key, *v);
  if (!n) return std::nullopt;
  if (*n < 1) {
    error(key, fmt::format("must be a positive integer or null, got {}", *n));
    return std::nullopt;
  }
  return n;
}

std::int64_t ConfigKeys::non_negative_or(std::string_view key, std::int64_t fallback) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return fallback;
  std::optional<std::int64_t> n = integer(key, *v);
  if (!n) return fallback;
  if (*n < 0) {
    error(key, fmt::format("must be an integer >= 0, got {}", *n));
    return fallback;
  }
  return *n;
}

bool ConfigKeys::boolean_or(std::string_view key, bool fallback) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) {
    error(key, fmt::format("expected true or false, got {}", describe_json(*v)));
    return fallback;
  }
  return v->get<bool>();
}

std::optional<double> ConfigKeys::number(std::string_view key) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) {
    error(key, fmt::format("expected a number, got {}", describe_json(*v)));
    return std::nullopt;
  }
  return v->get<double>();
}

std::optional<std::string> ConfigKeys::string(std::string_view key) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    error(key, fmt::format("expected a string, got {}", describe_json(*v)));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<ConfigKeys> ConfigKeys::object(std::string_view key, std::string_view meaning) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) {
    error(key, fmt::format("missing required field (expected a JSON object: {})", meaning));
    return std::nullopt;
  }
  if (!v->is_object()) {
    error(key, fmt::format("expected a JSON object, got {}", describe_json(*v)));
    return std::nullopt;
  }
  return ConfigKeys(*v, field(key) + ".", where_, *report_);
}

}  // namespace vramsim::model::detail
