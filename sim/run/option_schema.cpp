#include "sim/run/option_schema.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

#include "sim/core/text.hpp"

namespace vramsim::run {

namespace {

/// `value` relative to `base_dir` under `rule`.
std::string relative_to(const std::string& value, PathRule rule,
                        const std::filesystem::path& base_dir) {
  const std::filesystem::path p(value);
  switch (rule) {
    case PathRule::kNone: return value;
    case PathRule::kFileOrId:
      if (!p.has_parent_path() && p.extension() != ".toml") return value;  // an id
      break;
    case PathRule::kModel: {
      if (value.empty() || p.is_absolute() || base_dir.empty()) return value;
      const bool dotted = value.rfind("./", 0) == 0 || value.rfind("../", 0) == 0;
      std::error_code ec;
      if (p.extension() != ".json" && !dotted && !std::filesystem::exists(base_dir / p, ec)) {
        return value;  // a model id
      }
      break;
    }
    case PathRule::kFile: break;
  }
  return p.is_relative() && !value.empty() ? (base_dir / p).string() : value;
}

std::string_view origin_text(OriginKind k) {
  switch (k) {
    case OriginKind::kDefault: return "default";
    case OriginKind::kScenario: return "scenario";
    case OriginKind::kFlag: return "flag";
  }
  return "default";
}

}  // namespace

Origin ResolvedOrigins::origin(std::string_view path) const {
  const auto it = origins.find(path);
  return it == origins.end() ? Origin{} : it->second;
}

namespace detail {

std::optional<RawValue> read_raw(io::TomlReader& r, std::string_view path, ValueKind kind,
                                 PathRule rule, const std::filesystem::path& base_dir) {
  switch (kind) {
    case ValueKind::kString:
      if (auto x = r.optional_string(path)) return relative_to(*x, rule, base_dir);
      return std::nullopt;
    case ValueKind::kBytes:
      if (auto x = r.optional_bytes(path)) return exact_bytes_text(*x);
      return std::nullopt;
    case ValueKind::kDuration:
      if (auto x = r.optional_duration(path)) return exact_duration_text(*x);
      return std::nullopt;
    case ValueKind::kInt:
      if (auto x = r.optional_int64(path)) return *x;
      return std::nullopt;
    case ValueKind::kDouble:
      if (auto x = r.optional_double(path)) return *x;
      return std::nullopt;
    case ValueKind::kBool:
      if (auto x = r.optional_bool(path)) return *x;
      return std::nullopt;
  }
  return std::nullopt;
}

void declare_tables(io::TomlReader& r, const std::vector<std::string_view>& paths) {
  std::vector<std::string_view> tables;
  for (std::string_view path : paths) {
    const std::size_t dot = path.find('.');
    if (dot == std::string_view::npos) continue;  // a top-level key ("seed")
    const std::string_view table = path.substr(0, dot);
    if (std::find(tables.begin(), tables.end(), table) == tables.end()) {
      r.optional_table(table);
      tables.push_back(table);
    }
  }
  r.optional_string("description");
}

std::string default_note(const RawValue& v, ValueKind kind, std::string_view help) {
  // A boolean flag is off unless given; a help that says its default, and a setting whose
  // default is "unset" or empty, print nothing.
  if (kind == ValueKind::kBool || help.find("(default") != std::string_view::npos) return "";
  if (std::holds_alternative<std::monostate>(v)) return "";
  if (const auto* s = std::get_if<std::string>(&v); s != nullptr && s->empty()) return "";
  return std::visit(
      [](const auto& x) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) {
          return "";
        } else {
          return fmt::format(" (default: {})", x);
        }
      },
      v);
}

std::optional<std::string> bound_problem(const RawValue& v, ValueKind kind,
                                        std::int64_t max_int) {
  switch (kind) {
    case ValueKind::kInt:
      if (const auto* n = std::get_if<std::int64_t>(&v); n != nullptr && *n > max_int) {
        return fmt::format("must be at most {}, got {}", max_int, *n);
      }
      return std::nullopt;
    case ValueKind::kDouble:
      if (const auto* x = std::get_if<double>(&v); x != nullptr && !std::isfinite(*x)) {
        return fmt::format("must be a finite number, got {}", *x);
      }
      return std::nullopt;
    case ValueKind::kBytes:
      if (const auto* text = std::get_if<std::string>(&v)) {
        try {
          if (parse_bytes(*text) > Bytes(kMaxBytes)) {
            return fmt::format("must be at most {} (1 PiB), got '{}'", exact_bytes_text(
                                   Bytes(kMaxBytes)), *text);
          }
        } catch (const std::exception&) {
          return std::nullopt;  // the row's setter names the parse problem
        }
      }
      return std::nullopt;
    case ValueKind::kString:
      // "" is never a value: a flag given an unset shell variable ("--trace $TRACE") would
      // otherwise silently mean "not given".
      if (const auto* text = std::get_if<std::string>(&v); text != nullptr && text->empty()) {
        return "must not be empty (an unset shell variable?); leave the setting out instead";
      }
      return std::nullopt;
    case ValueKind::kBool:
    case ValueKind::kDuration: return std::nullopt;
  }
  return std::nullopt;
}

std::string bound_note(ValueKind kind, std::int64_t max_int) {
  switch (kind) {
    case ValueKind::kInt:
      return max_int == kNoIntBound ? "" : fmt::format(" [at most {}]", max_int);
    case ValueKind::kBytes: return " [at most 1PiB]";
    case ValueKind::kDouble: return " [finite]";
    case ValueKind::kString:
    case ValueKind::kBool:
    case ValueKind::kDuration: return "";
  }
  return "";
}

nlohmann::ordered_json inputs_entry(const RawValue& v, const Origin& at,
                                    std::string_view default_source) {
  nlohmann::ordered_json entry;
  std::visit(
      [&](const auto& x) {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) {
          entry["value"] = nullptr;
        } else {
          entry["value"] = x;
        }
      },
      v);
  entry["origin"] = origin_text(at.kind);
  switch (at.kind) {
    case OriginKind::kDefault: entry["source"] = default_source; break;
    case OriginKind::kScenario:
      entry["source"] = fmt::format("{}:{}", at.where.file, at.where.line);
      break;
    case OriginKind::kFlag: entry["source"] = at.flag; break;
  }
  return entry;
}

}  // namespace detail

std::optional<RawValue> raw_from_text(std::string_view text, ValueKind kind) {
  switch (kind) {
    case ValueKind::kString:
    case ValueKind::kBytes:
    case ValueKind::kDuration: return RawValue(std::string(text));
    case ValueKind::kInt: {
      // vLLM's human-readable integers: "32k" = 32000, "32K" = 32768.
      const std::optional<std::int64_t> n = parse_human_readable_int(text);
      if (!n) return std::nullopt;
      return RawValue(*n);
    }
    case ValueKind::kDouble: {
      try {
        std::size_t used = 0;
        const double x = std::stod(std::string(text), &used);
        if (used != text.size()) return std::nullopt;
        return RawValue(x);
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    case ValueKind::kBool:
      if (text == "true") return RawValue(true);
      if (text == "false") return RawValue(false);
      return std::nullopt;
  }
  return std::nullopt;
}

std::string raw_to_toml(const RawValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return nlohmann::json(x).dump();  // a TOML basic string: JSON's escapes are TOML's
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          std::string s = fmt::format("{}", x);
          if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // stays a float
          return s;
        } else {
          return fmt::format("{}", x);
        }
      },
      v);
}

Problem problem_at(const ResolvedOrigins& o, std::string_view path, std::string message) {
  const Origin at = o.origin(path);
  return {std::string(path), std::move(message),
          at.kind == OriginKind::kScenario ? at.where : SourceLocation{}};
}

std::optional<std::string> parse_bytes_at_least(const RawValue& v, Bytes min_bytes, Bytes& out) {
  const std::string& text = std::get<std::string>(v);
  try {
    const Bytes b = parse_bytes(text);
    if (b < min_bytes) return fmt::format("must be >= {}, got '{}'", format_bytes(min_bytes), text);
    out = b;
    return std::nullopt;
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string exact_bytes_text(Bytes b) {
  const std::int64_t n = b.count();
  for (const auto& [unit, size] : {std::pair{"GiB", std::int64_t{1} << 30},
                                   std::pair{"MiB", std::int64_t{1} << 20},
                                   std::pair{"KiB", std::int64_t{1} << 10}}) {
    if (n != 0 && n % size == 0) return fmt::format("{}{}", n / size, unit);
  }
  return fmt::format("{}B", n);
}

std::optional<std::string> parse_duration_value(const RawValue& v, Duration& out) {
  const std::string& text = std::get<std::string>(v);
  try {
    const Duration d = parse_duration(text);
    if (d < Duration::zero()) return fmt::format("must be >= 0, got '{}'", text);
    out = d;
    return std::nullopt;
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string exact_duration_text(Duration d) {
  const std::int64_t n = d.nanoseconds();
  for (const auto& [unit, size] : {std::pair{"s", std::int64_t{1'000'000'000}},
                                   std::pair{"ms", std::int64_t{1'000'000}},
                                   std::pair{"us", std::int64_t{1'000}}}) {
    if (n != 0 && n % size == 0) return fmt::format("{}{}", n / size, unit);
  }
  return n == 0 ? "0s" : fmt::format("{}ns", n);
}

}  // namespace vramsim::run
