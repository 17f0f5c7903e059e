// Exact weight bytes from a checkpoint's safetensors headers.
//
// A .safetensors file starts with an 8-byte little-endian header length N, then N bytes of JSON:
//   {"__metadata__": {...}, "<tensor>": {"dtype": "BF16", "shape": [4096, 4096],
//                                         "data_offsets": [begin, end]}, ...}
// (https://github.com/huggingface/safetensors, "Format"). A sharded checkpoint lists its shards
// in model.safetensors.index.json ("weight_map": tensor -> file). Only headers are read: from
// the files in a local folder or cache snapshot, or from the hub with two HTTP range requests
// per shard, so a 140 GB checkpoint costs a few megabytes.
//
// Per device, each tensor goes where vLLM puts it, by name:
//   * "...layers.N." tensors belong to the pipeline stage holding layer N (stage_layers());
//     embeddings and vision tower to the first stage, final norm and lm_head to the last;
//   * column-parallel modules (q/k/v/qkv, gate/up/gate_up, fc1, query_key_value, experts' w1/w3)
//     are split tp ways (k/v by KV heads, replicated when tp > heads), every tensor of them that
//     has more than one element: weights, biases, scales, zero points;
//   * row-parallel modules (o_proj, down_proj, dense, fc2, out_proj, experts' w2) split their
//     tensors of two or more dimensions, both wider than 1, tp ways; their biases and per-
//     output-channel scales are replicated;
//   * embed_tokens and lm_head are split by vocab rows padded to 64 (kVocabPadding);
//   * everything else (norms, routers, scalars) is replicated.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/model/parallelism.hpp"

namespace vramsim::model {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;  // as written: "BF16", "F8_E4M3", "I32", ...
  std::vector<std::int64_t> shape;
  std::int64_t num_bytes = 0;  // data_offsets[1] - data_offsets[0], checked against the shape
};

/// The header length of the first 8 bytes of a .safetensors file. Throws ConfigError naming
/// `file` when fewer than 8 bytes are given or the length is 0 or over 100,000,000 (the
/// safetensors limit).
std::int64_t safetensors_header_length(std::string_view first_bytes, const std::string& file);

/// Parses a header's JSON strictly. Throws ConfigError naming `file` and the tensor when it is
/// not a JSON object, a dtype is unknown, a shape or data_offsets entry is malformed, or the
/// offsets do not span shape x dtype bytes.
std::vector<SafetensorsTensor> parse_safetensors_header(std::string_view json_text,
                                                        const std::string& file);

/// Bits per element of a safetensors dtype; nullopt when the name is unknown.
std::optional<int> safetensors_dtype_bits(std::string_view dtype);

/// Every tensor of a checkpoint, and how many files their headers came from.
struct CheckpointTensors {
  std::vector<SafetensorsTensor> tensors;
  int num_files = 0;
};

/// The tensors of the checkpoint `m` resolves to: from model.safetensors.index.json (or a
/// single model.safetensors) in its folder; else, for a hub id that may use the network
/// (hub or hub cache source, not offline), from the hub's headers by range requests. nullopt
/// when no safetensors checkpoint is available (the zoo; a folder with a config only, offline).
/// Throws ConfigError naming the file when a header or the index is malformed.
std::optional<CheckpointTensors> read_checkpoint_tensors(const ResolvedModel& m);

/// Bytes one device of pipeline stage `pp_rank` holds (TP rank 0; ranks differ only by vocab
/// padding remainders), per the rules above.
Bytes checkpoint_bytes_on_stage(const ModelSpec& spec, const CheckpointTensors& ckpt,
                                Parallelism par, int pp_rank);

}  // namespace vramsim::model
