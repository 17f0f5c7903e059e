#include "sim/run/lmcache_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace vramsim::run {
namespace {

constexpr std::string_view kField = "engine.lmcache_config";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// YAML 1.1 as PyYAML's safe_load reads a plain scalar: null and booleans.
bool is_null(std::string_view v) {
  const std::string l = lower(v);
  return v.empty() || v == "~" || l == "null";
}
std::optional<bool> as_bool(std::string_view v) {
  const std::string l = lower(v);
  if (l == "true" || l == "yes" || l == "on") return true;
  if (l == "false" || l == "no" || l == "off") return false;
  return std::nullopt;
}
std::optional<double> as_number(std::string_view v) {
  double x = 0.0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(x)) return std::nullopt;
  return x;
}
std::optional<std::int64_t> as_int(std::string_view v) {
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return x;
}

// A key accepted at LMCache's default only: what another value changes that is not modelled.
struct DefaultOnly {
  std::string_view key;
  std::string_view default_text;  // "false", "null", "LRU"
  std::string_view why;
};
constexpr std::array kDefaultOnly = {
    DefaultOnly{"local_cpu", "true",
                "LMCache without its CPU tier (disk or remote only) is not modelled"},
    DefaultOnly{"save_unfull_chunk", "false",
                "storing a prompt's last partial chunk is not modelled (only whole chunks hit)"},
    DefaultOnly{"use_layerwise", "false",
                "layer-by-layer store and retrieve, overlapped with the forward, is not modelled"},
    DefaultOnly{"save_decode_cache", "false", "storing decode tokens is not modelled"},
    DefaultOnly{"enable_async_loading", "false", "asynchronous retrieval is not modelled"},
    DefaultOnly{"enable_blending", "false", "CacheBlend (non-prefix reuse) is not modelled"},
    DefaultOnly{"enable_p2p", "false", "peer-to-peer sharing between instances is not modelled"},
    DefaultOnly{"enable_pd", "false", "disaggregated prefill/decode through LMCache is not "
                                      "modelled"},
    DefaultOnly{"cache_policy", "LRU", "only LMCache's default LRU eviction is modelled"},
    DefaultOnly{"remote_url", "null", "a remote KV store is not modelled"},
};

bool is_default(const DefaultOnly& d, std::string_view v) {
  if (d.default_text == "null") return is_null(v);
  if (d.default_text == "LRU") return lower(v) == "lru";
  const std::optional<bool> b = as_bool(v);
  return b && *b == (d.default_text == "true");
}

}  // namespace

Bytes lmcache_gib(double gib) {
  return Bytes(static_cast<std::int64_t>(gib * static_cast<double>(std::int64_t{1} << 30)));
}

LmcacheSettings parse_lmcache_config(std::string_view text, const std::string& file) {
  LmcacheSettings s;
  s.file = file;
  ValidationReport report;
  const auto error = [&](int line, const std::string& message) {
    report.error(std::string(kField), message, {file, line});
  };
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM
  std::set<std::string> seen;
  int line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view body = trim(line);
    if (body.empty() || body.front() == '#') continue;
    if (body == "---" || body == "...") {
      if (seen.empty() && body == "---") continue;  // an opening document marker
      error(line_no, "several YAML documents are not read: give one flat `key: value` list");
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') {
      error(line_no, "an indented line (nested YAML) is not read: LMCache's settings are flat "
                     "`key: value` lines");
      continue;
    }
    if (body.front() == '-') {
      error(line_no, "a YAML list is not read: give flat `key: value` lines");
      continue;
    }
    const std::size_t colon = body.find(':');
    if (colon == std::string_view::npos) {
      error(line_no, fmt::format("'{}' is not a `key: value` line", body));
      continue;
    }
    const std::string key(trim(body.substr(0, colon)));
    std::string_view value = trim(body.substr(colon + 1));
    // A comment after the value (not inside quotes).
    if (!value.empty() && value.front() != '"' && value.front() != '\'') {
      if (const std::size_t hash = value.find(" #"); hash != std::string_view::npos) {
        value = trim(value.substr(0, hash));
      }
    }
    std::string unquoted;
    bool quoted = false;
    if (!value.empty() && (value.front() == '"' || value.front() == '\'')) {
      const char q = value.front();
      const std::size_t end = value.find(q, 1);
      const std::string_view after =
          end == std::string_view::npos ? std::string_view() : trim(value.substr(end + 1));
      if (end == std::string_view::npos || !(after.empty() || after.front() == '#')) {
        error(line_no, fmt::format("{}: unterminated or trailing text after the quoted value",
                                   key));
        continue;
      }
      unquoted = std::string(value.substr(1, end - 1));
      quoted = true;
    } else {
      if (!value.empty() && std::string_view("[{&*|>!%@`").find(value.front()) !=
                                std::string_view::npos) {
        error(line_no, fmt::format("{}: '{}' is YAML beyond a plain `key: value` (flow "
                                   "collections, anchors, tags and block scalars are not read)",
                                   key, value));
        continue;
      }
      unquoted = std::string(value);
    }
    const std::string_view v = unquoted;
    if (!seen.insert(key).second) {
      error(line_no, fmt::format("{} is given twice", key));
      continue;
    }
    if (key == "chunk_size") {
      std::optional<std::int64_t> n;
      if (!quoted) n = as_int(v);
      if (!n || *n <= 0) {
        error(line_no, fmt::format("chunk_size must be a positive whole number of tokens, got "
                                   "'{}'",
                                   v));
      } else {
        s.chunk_size = *n;
      }
    } else if (key == "max_local_cpu_size" || key == "max_local_disk_size") {
      std::optional<double> x;
      if (!quoted) x = as_number(v);
      const bool cpu = key == "max_local_cpu_size";
      if (!x || *x < 0.0 || (cpu && *x == 0.0)) {
        error(line_no, fmt::format("{} must be a {} number of GiB per worker (LMCache reads it "
                                   "as GiB: size * 1024**3 bytes), got '{}'",
                                   key, cpu ? "positive" : "non-negative", v));
      } else if (cpu) {
        s.max_local_cpu_size = *x;
      } else {
        s.max_local_disk_size = *x;
      }
    } else if (key == "local_disk") {
      if (!quoted && is_null(v)) {
        s.local_disk.reset();
      } else if (v.empty()) {
        error(line_no, "local_disk must be a path such as \"file:///mnt/lmcache/\", or null");
      } else {
        s.local_disk = std::string(v);
      }
    } else {
      const auto d = std::find_if(kDefaultOnly.begin(), kDefaultOnly.end(),
                                  [&](const DefaultOnly& x) { return x.key == key; });
      if (d == kDefaultOnly.end()) {
        error(line_no, fmt::format("{} is not read by vramsim: only chunk_size, local_cpu, "
                                   "max_local_cpu_size, local_disk, max_local_disk_size and "
                                   "LMCache's defaults of save_unfull_chunk, use_layerwise, "
                                   "save_decode_cache, enable_async_loading, enable_blending, "
                                   "enable_p2p, enable_pd, cache_policy, remote_url are; remove "
                                   "it from a copy of the file to simulate without it",
                                   key));
      } else if (!is_default(*d, v)) {
        error(line_no, fmt::format("{}: {} ({} is LMCache's default, the only value modelled), "
                                   "got '{}'",
                                   key, d->why, d->default_text, v));
      }
    }
  }
  if (s.local_disk && s.max_local_disk_size == 0.0) {
    error(0, "local_disk needs max_local_disk_size > 0 (GiB per worker) to hold anything");
  }
  if (!s.local_disk && s.max_local_disk_size > 0.0) {
    error(0, "max_local_disk_size is for the disk tier: give local_disk too");
  }
  throw_if_errors(report);
  return s;
}

LmcacheSettings read_lmcache_config(const std::filesystem::path& file) {
  if (file.empty()) return LmcacheSettings{};
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw ConfigError(std::string(kField), "no such file (LMCache's YAML configuration)",
                      {file.string(), 0});
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_lmcache_config(text.str(), file.string());
}

}  // namespace vramsim::run
