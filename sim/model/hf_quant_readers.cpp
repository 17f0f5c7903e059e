#include "sim/model/hf_quant_readers.hpp"

#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace vramsim::model::detail {

// An integer key; `allowed` lists the accepted values for the message. Reports and returns
// nullopt when absent (if `required`), not an integer, or not in `allowed`.
std::optional<std::int64_t> int_in(ConfigKeys& k, std::string_view key,
                                   const std::vector<std::int64_t>& allowed, bool required,
                                   std::string_view meaning) {
  const nlohmann::json* v = k.find(key);
  if (v == nullptr) {
    if (required) k.error(key, fmt::format("missing required field ({})", meaning));
    return std::nullopt;
  }
  if (!v->is_number_integer()) {
    k.error(key, fmt::format("expected an integer ({}), got {}", meaning, describe_json(*v)));
    return std::nullopt;
  }
  const std::int64_t n = v->get<std::int64_t>();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
    std::string list;
    for (std::int64_t a : allowed) list += (list.empty() ? "" : ", ") + std::to_string(a);
    k.error(key, fmt::format("expected one of {} ({}), got {}", list, meaning, n));
    return std::nullopt;
  }
  return n;
}

// A quantization group size: a positive integer, or -1 for one group per output column.
std::optional<std::int64_t> group_size(ConfigKeys& k, std::string_view key, bool required) {
  const nlohmann::json* v = k.find(key);
  if (v == nullptr) {
    if (required) k.error(key, "missing required field (input rows per scale, or -1)");
    return std::nullopt;
  }
  if (!v->is_number_integer() || (v->get<std::int64_t>() < 1 && v->get<std::int64_t>() != -1) ||
      v->get<std::int64_t>() > kMaxConfigInteger) {
    k.error(key, fmt::format("expected a positive integer (input rows per scale) or -1 (one "
                             "group per column), got {}",
                             describe_json(*v)));
    return std::nullopt;
  }
  return v->get<std::int64_t>();
}

// A list of strings (module names or "re:" patterns); absent is empty.
std::vector<std::string> string_list(ConfigKeys& k, std::string_view key) {
  std::vector<std::string> out;
  const nlohmann::json* v = k.find(key);
  if (v == nullptr) return out;
  if (!v->is_array() || !std::all_of(v->begin(), v->end(),
                                     [](const nlohmann::json& e) { return e.is_string(); })) {
    k.error(key, fmt::format("expected a list of module names, got {}", describe_json(*v)));
    return out;
  }
  for (const nlohmann::json& e : *v) {
    std::string entry = e.get<std::string>();
    if (entry.rfind("re:", 0) == 0) {
      try {
        std::regex check(entry.substr(3));
      } catch (const std::regex_error& err) {
        k.error(key, fmt::format("'{}' is not a valid regular expression: {}", entry,
                                 err.what()));
        continue;
      }
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// A string key that must be one of `allowed`.
std::optional<std::string> string_in(ConfigKeys& k, std::string_view key,
                                     const std::vector<std::string_view>& allowed,
                                     bool required) {
  const nlohmann::json* v = k.find(key);
  if (v == nullptr) {
    if (required) {
      k.error(key, fmt::format("missing required field (one of {})", fmt::join(allowed, ", ")));
    }
    return std::nullopt;
  }
  std::optional<std::string> s = k.string(key);
  if (!s) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *s) == allowed.end()) {
    k.error(key, fmt::format("expected one of {}, got '{}'", fmt::join(allowed, ", "), *s));
    return std::nullopt;
  }
  return s;
}

// The first of `keys` present, for formats that renamed a key (AWQ's w_bit -> bits).
std::string_view first_present(const ConfigKeys& k, std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    if (k.has(key)) return key;
  }
  return *keys.begin();
}

// A [n, k] block shape (fp8 weight_block_size, compressed-tensors block_structure).
bool read_block(ConfigKeys& k, std::string_view key, QuantLayout& l) {
  const nlohmann::json* v = k.find(key);
  if (v == nullptr) return false;
  const bool ok = v->is_array() && v->size() == 2 && (*v)[0].is_number_integer() &&
                  (*v)[1].is_number_integer() && (*v)[0].get<std::int64_t>() >= 1 &&
                  (*v)[1].get<std::int64_t>() >= 1 &&
                  (*v)[0].get<std::int64_t>() <= kMaxConfigInteger &&
                  (*v)[1].get<std::int64_t>() <= kMaxConfigInteger;
  if (!ok) {
    k.error(key, fmt::format("expected [output rows, input columns] per scale, e.g. [128, 128], "
                             "got {}",
                             describe_json(*v)));
    return false;
  }
  l.granularity = ScaleGranularity::kBlock;
  l.block_out = (*v)[0].get<std::int64_t>();
  l.block_in = (*v)[1].get<std::int64_t>();
  return true;
}

std::string regex_escape(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (std::string_view("\\^$.|?*+()[]{}").find(ch) != std::string_view::npos) out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace vramsim::model::detail
