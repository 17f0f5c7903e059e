#include "sim/model/safetensors_header.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/model/hub_client.hpp"
#include "sim/model/weight_bytes.hpp"

namespace vramsim::model {

namespace {

// The safetensors reader refuses larger headers (safetensors/src/tensor.rs, MAX_HEADER_SIZE).
constexpr std::int64_t kMaxHeaderBytes = 100'000'000;

struct DtypeRow {
  std::string_view name;
  int bits;
};
// safetensors/src/tensor.rs, enum Dtype (F4 is float4 e2m1, two per byte; F6 packed 4 per 3 B).
constexpr std::array<DtypeRow, 20> kDtypes{{
    {"BOOL", 8},    {"U8", 8},       {"I8", 8},       {"F8_E5M2", 8}, {"F8_E4M3", 8},
    {"F8_E8M0", 8}, {"I16", 16},     {"U16", 16},     {"F16", 16},    {"BF16", 16},
    {"I32", 32},    {"U32", 32},     {"F32", 32},     {"F64", 64},    {"I64", 64},
    {"U64", 64},    {"F4", 4},       {"F6_E2M3", 6},  {"F6_E3M2", 6}, {"C64", 64},
}};

ConfigError header_error(const std::string& file, const std::string& message) {
  return ConfigError("", message, SourceLocation{file, 0});
}

std::vector<SafetensorsTensor> header_of_bytes(std::string_view first8, std::string_view json,
                                               const std::string& file) {
  const std::int64_t n = safetensors_header_length(first8, file);
  if (static_cast<std::int64_t>(json.size()) < n) {
    throw header_error(file, fmt::format("truncated safetensors header: {} bytes announced, {} "
                                         "present",
                                         n, json.size()));
  }
  return parse_safetensors_header(json.substr(0, static_cast<std::size_t>(n)), file);
}

std::vector<SafetensorsTensor> read_local_header(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw header_error(file.string(), "cannot open the safetensors file");
  std::string first(8, '\0');
  in.read(first.data(), 8);
  first.resize(static_cast<std::size_t>(in.gcount()));
  const std::int64_t n = safetensors_header_length(first, file.string());
  std::string json(static_cast<std::size_t>(n), '\0');
  in.read(json.data(), n);
  json.resize(static_cast<std::size_t>(in.gcount()));
  std::vector<SafetensorsTensor> tensors = header_of_bytes(first, json, file.string());
  std::int64_t data = 0;
  for (const SafetensorsTensor& t : tensors) data += t.num_bytes;
  std::error_code ec;
  const auto size = static_cast<std::int64_t>(std::filesystem::file_size(file, ec));
  if (!ec && size < 8 + n + data) {
    throw header_error(file.string(),
                       fmt::format("the header describes {} bytes of tensors after its {} + 8 "
                                   "bytes, but the file has {} bytes",
                                   data, n, size));
  }
  return tensors;
}

// The shard files of an index, sorted and unique.
std::vector<std::string> shards_of_index(const std::filesystem::path& index) {
  std::ifstream in(index);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object()) {
    throw header_error(index.string(), "expected a JSON object with a \"weight_map\" object "
                                       "(tensor name -> shard file)");
  }
  std::set<std::string> files;
  for (const auto& [tensor, file] : j["weight_map"].items()) {
    if (!file.is_string() || file.get<std::string>().empty() ||
        file.get<std::string>().find("..") != std::string::npos) {
      throw header_error(index.string(),
                         fmt::format("weight_map.{}: expected a shard file name", tensor));
    }
    files.insert(file.get<std::string>());
  }
  if (files.empty()) throw header_error(index.string(), "weight_map is empty");
  return {files.begin(), files.end()};
}

std::optional<CheckpointTensors> from_folder(const std::filesystem::path& folder) {
  std::error_code ec;
  std::vector<std::string> files;
  const std::filesystem::path index = folder / "model.safetensors.index.json";
  if (std::filesystem::is_regular_file(index, ec)) {
    files = shards_of_index(index);
  } else if (std::filesystem::is_regular_file(folder / "model.safetensors", ec)) {
    files = {"model.safetensors"};
  } else {
    return std::nullopt;
  }
  for (const std::string& f : files) {
    if (!std::filesystem::is_regular_file(folder / f, ec)) return std::nullopt;  // not fetched
  }
  CheckpointTensors out;
  for (const std::string& f : files) {
    std::vector<SafetensorsTensor> t = read_local_header(folder / f);
    out.tensors.insert(out.tensors.end(), t.begin(), t.end());
    ++out.num_files;
  }
  return out;
}

std::vector<SafetensorsTensor> hub_header(HubClient& client, const ResolvedModel& m,
                                          const std::string& file) {
  const std::string where = fmt::format("{}/{} ({})", m.repo_id, file, m.hub.endpoint);
  const std::optional<std::string> first = client.fetch_range(m.repo_id, m.revision, file, {0, 7});
  if (!first) throw header_error(where, "listed by the index but absent on the hub");
  const std::int64_t n = safetensors_header_length(*first, where);
  const std::optional<std::string> json =
      client.fetch_range(m.repo_id, m.revision, file, {8, 8 + n - 1});
  return header_of_bytes(*first, json.value_or(""), where);
}

std::optional<CheckpointTensors> from_hub(const ResolvedModel& m) {
  HubClient client(m.hub);
  std::vector<std::string> files;
  if (std::optional<std::filesystem::path> index =
          client.download(m.repo_id, m.revision, "model.safetensors.index.json")) {
    files = shards_of_index(*index);
  } else if (client.fetch_range(m.repo_id, m.revision, "model.safetensors", {0, 0})) {
    files = {"model.safetensors"};
  } else {
    return std::nullopt;
  }
  CheckpointTensors out;
  for (const std::string& f : files) {
    std::vector<SafetensorsTensor> t = hub_header(client, m, f);
    out.tensors.insert(out.tensors.end(), t.begin(), t.end());
    ++out.num_files;
  }
  return out;
}

// ---- placement ------------------------------------------------------------------------------

enum class Split { kReplicated, kColumn, kKvHeads, kRow, kVocab };

std::vector<std::string_view> parts_of(std::string_view name) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    out.push_back(name.substr(start, dot == std::string_view::npos ? name.npos : dot - start));
    if (dot == std::string_view::npos) return out;
    start = dot + 1;
  }
}

bool is_number(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool starts_vision(std::string_view name) {
  for (std::string_view p : {"vision_tower", "visual", "multi_modal_projector", "vision_model"}) {
    if (name.find(p) != std::string_view::npos) return true;
  }
  return false;
}

/// The decoder layer of a tensor ("model.layers.12.mlp..." -> 12), or -1.
std::int64_t layer_of(const std::vector<std::string_view>& parts) {
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if ((parts[i] == "layers" || parts[i] == "h" || parts[i] == "blocks") &&
        is_number(parts[i + 1])) {
      return std::stoll(std::string(parts[i + 1]));
    }
  }
  return -1;
}

Split split_of(const std::vector<std::string_view>& parts) {
  static const std::set<std::string_view> kColumn{
      "q_proj", "qkv_proj", "gate_proj", "up_proj", "gate_up_proj", "fc1", "query_key_value",
      "w1", "w3", "c_attn", "c_fc", "dense_h_to_4h", "q_b_proj", "kv_b_proj", "Wqkv"};
  static const std::set<std::string_view> kKv{"k_proj", "v_proj"};
  static const std::set<std::string_view> kRow{"o_proj", "down_proj", "dense", "fc2",
                                               "out_proj", "w2", "c_proj", "dense_4h_to_h"};
  static const std::set<std::string_view> kVocab{"embed_tokens", "lm_head", "wte",
                                                 "word_embeddings", "embed_in", "embed_out"};
  for (std::string_view p : parts) {
    if (kVocab.count(p) != 0) return Split::kVocab;
  }
  // The module is the last name before the parameter ("...self_attn.q_proj.weight_scale").
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (kKv.count(*it) != 0) return Split::kKvHeads;
    if (kColumn.count(*it) != 0) return Split::kColumn;
    if (kRow.count(*it) != 0) return Split::kRow;
  }
  return Split::kReplicated;
}

std::int64_t numel(const SafetensorsTensor& t) {
  std::int64_t n = 1;
  for (std::int64_t d : t.shape) n *= d;
  return n;
}

// ceil(bytes * num / den) without overflow for checkpoint-sized values.
std::int64_t scaled(std::int64_t bytes, std::int64_t num, std::int64_t den) {
  return (bytes / den) * num + ((bytes % den) * num + den - 1) / den;
}

std::int64_t device_bytes(const ModelSpec& spec, const SafetensorsTensor& t, Split s, int tp) {
  switch (s) {
    case Split::kReplicated:
      return t.num_bytes;
    case Split::kColumn:
      return numel(t) > 1 ? scaled(t.num_bytes, 1, tp) : t.num_bytes;
    case Split::kKvHeads: {
      if (numel(t) <= 1) return t.num_bytes;
      const std::int64_t heads = std::max<std::int64_t>(spec.num_kv_heads, 1);
      return scaled(t.num_bytes, kv_heads_per_device(spec, tp), heads);
    }
    case Split::kRow: {
      const bool wide = t.shape.size() >= 2 &&
                        std::all_of(t.shape.begin(), t.shape.end(),
                                    [](std::int64_t d) { return d > 1; });
      return wide ? scaled(t.num_bytes, 1, tp) : t.num_bytes;
    }
    case Split::kVocab: {
      if (t.shape.empty() || t.shape[0] <= 1) return t.num_bytes;
      const std::int64_t rows = t.shape[0];
      const std::int64_t padded = (rows + kVocabPadding - 1) / kVocabPadding * kVocabPadding;
      return scaled(t.num_bytes, (padded + tp - 1) / tp, rows);
    }
  }
  VRAMSIM_UNREACHABLE("invalid Split");
}

}  // namespace

std::optional<int> safetensors_dtype_bits(std::string_view dtype) {
  for (const DtypeRow& r : kDtypes) {
    if (r.name == dtype) return r.bits;
  }
  return std::nullopt;
}

std::int64_t safetensors_header_length(std::string_view first_bytes, const std::string& file) {
  if (first_bytes.size() < 8) {
    throw header_error(file, fmt::format("not a safetensors file: {} bytes, fewer than the 8 of "
                                         "the header length",
                                         first_bytes.size()));
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) {
    n = (n << 8) | static_cast<unsigned char>(first_bytes[static_cast<std::size_t>(i)]);
  }
  if (n == 0 || n > static_cast<std::uint64_t>(kMaxHeaderBytes)) {
    throw header_error(file, fmt::format("bad safetensors header length {} (expected 1 to {} "
                                         "bytes, little-endian u64)",
                                         n, kMaxHeaderBytes));
  }
  return static_cast<std::int64_t>(n);
}

std::vector<SafetensorsTensor> parse_safetensors_header(std::string_view json_text,
                                                        const std::string& file) {
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    throw header_error(file, "the safetensors header is not a JSON object (truncated or "
                             "corrupt)");
  }
  std::vector<SafetensorsTensor> out;
  for (const auto& [name, v] : j.items()) {
    if (name == "__metadata__") continue;
    const std::string at = fmt::format("tensor '{}'", name);
    if (!v.is_object() || !v.contains("dtype") || !v["dtype"].is_string() ||
        !v.contains("shape") || !v["shape"].is_array() || !v.contains("data_offsets") ||
        !v["data_offsets"].is_array() || v["data_offsets"].size() != 2) {
      throw header_error(file, fmt::format("{}: expected {{\"dtype\": str, \"shape\": [ints], "
                                           "\"data_offsets\": [begin, end]}}",
                                           at));
    }
    SafetensorsTensor t;
    t.name = name;
    t.dtype = v["dtype"].get<std::string>();
    const std::optional<int> bits = safetensors_dtype_bits(t.dtype);
    if (!bits) throw header_error(file, fmt::format("{}: unknown dtype '{}'", at, t.dtype));
    std::int64_t n = 1;
    for (const nlohmann::json& d : v["shape"]) {
      if (!d.is_number_unsigned()) {
        throw header_error(file, fmt::format("{}: shape entries must be non-negative integers",
                                             at));
      }
      t.shape.push_back(d.get<std::int64_t>());
      n *= t.shape.back();
    }
    const nlohmann::json& off = v["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned() ||
        off[1].get<std::int64_t>() < off[0].get<std::int64_t>()) {
      throw header_error(file, fmt::format("{}: data_offsets must be [begin, end] with "
                                           "0 <= begin <= end",
                                           at));
    }
    t.num_bytes = off[1].get<std::int64_t>() - off[0].get<std::int64_t>();
    const std::int64_t expected = (n * *bits + 7) / 8;
    if (t.num_bytes != expected) {
      throw header_error(file, fmt::format("{}: data_offsets span {} bytes, but shape {} of {} "
                                           "takes {}",
                                           at, t.num_bytes, v["shape"].dump(), t.dtype,
                                           expected));
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::optional<CheckpointTensors> read_checkpoint_tensors(const ResolvedModel& m) {
  if (m.folder) {
    if (std::optional<CheckpointTensors> local = from_folder(*m.folder)) return local;
  }
  const bool hub_source = m.source == ModelSource::kHub || m.source == ModelSource::kHubCache;
  if (!hub_source || m.hub.offline || m.repo_id.empty()) return std::nullopt;
  return from_hub(m);
}

Bytes checkpoint_bytes_on_stage(const ModelSpec& spec, const CheckpointTensors& ckpt,
                                Parallelism par, int pp_rank) {
  const LayerRange range = stage_layers(spec.num_layers, par.pp, pp_rank);
  const bool first = pp_rank == 0;
  const bool last = pp_rank == par.pp - 1;
  std::int64_t total = 0;
  std::int64_t embed_bytes = 0;
  bool has_lm_head = false;
  for (const SafetensorsTensor& t : ckpt.tensors) {
    const std::vector<std::string_view> parts = parts_of(t.name);
    const Split s = split_of(parts);
    const bool lm_head = t.name.find("lm_head") != std::string::npos ||
                         t.name.find("embed_out") != std::string::npos;
    has_lm_head = has_lm_head || lm_head;
    bool here = false;
    if (starts_vision(t.name)) {
      here = first;
    } else if (const std::int64_t layer = layer_of(parts); layer >= 0) {
      here = layer >= range.begin && layer < range.end;
    } else if (s == Split::kVocab && !lm_head) {
      here = first;  // the token (and learned position) embeddings
      embed_bytes += device_bytes(spec, t, s, par.tp);
    } else if (t.name.find("embed") != std::string::npos ||
               t.name.find("wpe") != std::string::npos) {
      here = first;
    } else {
      here = last;  // final norm, lm_head
    }
    if (here) total += device_bytes(spec, t, s, par.tp);
  }
  // A tied lm_head is stored once; the last of several stages holds its own copy.
  if (spec.tie_word_embeddings && !has_lm_head && par.pp > 1 && last) total += embed_bytes;
  return Bytes(total);
}

}  // namespace vramsim::model
