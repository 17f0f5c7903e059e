// The typed key readers shared by the quantization_config readers, and one reader per format
// family. Not a public API: hf_quant_config.cpp dispatches on quant_method and calls these.
//
//   hf_quant_config.cpp            gptq, awq, fp8, mxfp4, the dispatch, hf_quant_config.json
//   hf_quant_compressed_tensors.cpp compressed-tensors (llm-compressor)
//   hf_quant_bnb_modelopt.cpp      bitsandbytes, NVIDIA ModelOpt (modelopt, modelopt_fp4)
//
// Each reader fills a CheckpointQuant (quant_layout.hpp) and reports a malformed value on its
// full key ("quantization_config.bnb_4bit_quant_storage") in the file the keys came from.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/model/hf_config_keys.hpp"
#include "sim/model/quant_layout.hpp"

namespace vramsim::model::detail {

/// An integer key; `allowed` lists the accepted values (empty: any). Reports and returns nullopt
/// when absent (if `required`), not an integer, or not in `allowed`.
std::optional<std::int64_t> int_in(ConfigKeys& k, std::string_view key,
                                   const std::vector<std::int64_t>& allowed, bool required,
                                   std::string_view meaning);

/// A quantization group size: a positive integer, or -1 for one group per output column.
std::optional<std::int64_t> group_size(ConfigKeys& k, std::string_view key, bool required);

/// A list of strings (module names or "re:" patterns, checked to compile); absent is empty.
std::vector<std::string> string_list(ConfigKeys& k, std::string_view key);

/// A string key that must be one of `allowed`.
std::optional<std::string> string_in(ConfigKeys& k, std::string_view key,
                                     const std::vector<std::string_view>& allowed, bool required);

/// The first of `keys` present, for formats that renamed a key (AWQ's w_bit -> bits).
std::string_view first_present(const ConfigKeys& k, std::initializer_list<std::string_view> keys);

/// A [n, k] block shape (fp8 weight_block_size, compressed-tensors block_structure) into
/// l.granularity / block_out / block_in; false when absent or malformed (reported).
bool read_block(ConfigKeys& k, std::string_view key, QuantLayout& l);

/// `text` with every regular-expression metacharacter escaped.
std::string regex_escape(std::string_view text);

void read_compressed_tensors(ConfigKeys& q, CheckpointQuant& c);

/// bitsandbytes (load_in_4bit / load_in_8bit, llm_int8_skip_modules).
void read_bitsandbytes(ConfigKeys& q, CheckpointQuant& c);

/// NVIDIA ModelOpt, from config.json's quantization_config (quant_method modelopt or
/// modelopt_fp4; quant_algo flat or under "quantization") or from hf_quant_config.json
/// ({"producer": {"name": "modelopt"}, "quantization": {...}}). Sets c.method and
/// c.quant_method from quant_algo, as vLLM does.
void read_modelopt(ConfigKeys& q, CheckpointQuant& c);

}  // namespace vramsim::model::detail
