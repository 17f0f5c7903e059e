#include "sim/serving/traces/mooncake_trace.hpp"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "sim/serving/traces/trace_parsing.hpp"

namespace vramsim::serving {
namespace {

using nlohmann::json;

// An integer-valued JSON number (not a float, bool or string) that fits int64.
bool json_int64(const json& value, std::int64_t& out) {
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
    out = static_cast<std::int64_t>(u);
    return true;
  }
  if (value.is_number_integer()) {
    out = value.get<std::int64_t>();
    return true;
  }
  return false;
}

bool token_field(const json& row, const char* key, std::int64_t& out, std::string& error) {
  const auto it = row.find(key);
  if (it == row.end()) {
    error = fmt::format("missing \"{}\" (tokens)", key);
    return false;
  }
  if (!json_int64(*it, out)) {
    error = fmt::format("{}: expected an integer in [1, {}], got {}", key, kMaxTraceTokens,
                        message_excerpt(it->dump()));
    return false;
  }
  return check_token_count(out, key, error);
}

}  // namespace

MooncakeTrace::MooncakeTrace(std::string path, MalformedRowPolicy policy)
    : FileTraceSource(std::move(path), policy, Rows::kLines) {}

std::string MooncakeTrace::describe() const { return "Mooncake JSONL " + file_name(); }

bool MooncakeTrace::parse_row(std::string_view line, TraceRecord& out, std::string& error) {
  json row;
  try {
    row = json::parse(line);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e400
    error = fmt::format("not valid JSON: {}", e.what());
    return false;
  }
  if (!row.is_object()) {
    error = "expected a JSON object {\"timestamp\": ms, \"input_length\": n, ...}";
    return false;
  }
  constexpr std::int64_t kNsPerMs = 1'000'000;
  const auto ts = row.find("timestamp");
  std::int64_t ms = 0;
  if (ts == row.end() || !json_int64(*ts, ms) || ms < 0 ||
      ms > std::numeric_limits<std::int64_t>::max() / kNsPerMs) {
    error = fmt::format("timestamp: expected a non-negative integer (ms), got {}",
                        ts == row.end() ? std::string("nothing") : message_excerpt(ts->dump()));
    return false;
  }
  out.arrival = SimTime::from_nanoseconds(ms * kNsPerMs);
  if (!token_field(row, "input_length", out.prompt_tokens, error) ||
      !token_field(row, "output_length", out.output_tokens, error)) {
    return false;
  }
  // Multi-LoRA: "lora", the adapter the request names (1, 2, ...; 0 or absent: the base model).
  out.adapter = 0;
  if (const auto lora = row.find("lora"); lora != row.end()) {
    if (!lora->is_number_unsigned() ||
        lora->get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
      error = fmt::format("lora: expected an adapter number in [0, {}] (0: the base model), got {}",
                          std::numeric_limits<std::int32_t>::max(),
                          message_excerpt(lora->dump()));
      return false;
    }
    out.adapter = static_cast<std::int32_t>(lora->get<std::uint64_t>());
  }
  const auto ids = row.find("hash_ids");
  if (ids == row.end()) return true;
  if (!ids->is_array()) {
    error = fmt::format("hash_ids: expected an array of non-negative integers, got {}",
                        message_excerpt(ids->dump()));
    return false;
  }
  out.hash_ids.reserve(ids->size());
  for (const json& id : *ids) {
    if (!id.is_number_unsigned()) {
      error = fmt::format("hash_ids: expected non-negative integers, got {}",
                          message_excerpt(id.dump()));
      return false;
    }
    out.hash_ids.push_back(id.get<std::uint64_t>());
  }
  // One id per 512-token block of the prompt, the last one possibly partial: a row with more or
  // fewer ids describes blocks the prompt does not have (or leaves some without an identity), so
  // its sharing cannot be taken at face value. Both shipped traces satisfy this on every row
  // (SOURCES.md of the shared traces).
  const std::int64_t num_expected =
      (out.prompt_tokens + kMooncakeHashBlockTokens - 1) / kMooncakeHashBlockTokens;
  if (static_cast<std::int64_t>(out.hash_ids.size()) != num_expected) {
    error = fmt::format(
        "hash_ids: expected ceil(input_length / {}) = {} ids for input_length {}, got {}",
        kMooncakeHashBlockTokens, num_expected, out.prompt_tokens, out.hash_ids.size());
    return false;
  }
  out.hash_block_tokens = kMooncakeHashBlockTokens;
  return true;
}

}  // namespace vramsim::serving
