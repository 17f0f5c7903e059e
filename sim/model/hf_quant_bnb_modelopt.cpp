// bitsandbytes and NVIDIA ModelOpt checkpoints: what vLLM holds on the device for each linear
// layer of in x out weights.
//
// bitsandbytes, 4-bit (load_in_4bit; vllm/model_executor/layers/quantization/bitsandbytes.py
// BitsAndBytesLinearMethod.create_weights, model_loader/bitsandbytes_loader.py):
//   weight     uint8 [in * out / 2, 1]: two nf4 / fp4 codes per byte (quant_ratio = 16 / 8 for
//              a 16-bit model dtype); vLLM refuses any bnb_4bit_quant_storage but uint8.
//   absmax     fp32, one per block of 64 consecutive weights (bitsandbytes quantize_4bit's
//              blocksize 64, the only one transformers writes).
//   quant_map  fp32 [16], the nf4 / fp4 code book of each quantized tensor, moved to the device
//              by QuantState.from_dict (pre-quantized) or made there by quantize_4bit.
//   NOTE: bnb_4bit_use_double_quant shrinks the file, not the device: the checkpoint stores
//   absmax as uint8 with an fp32 nested_absmax per 256 blocks and a 256-entry nested_quant_map,
//   but bitsandbytes_loader.dequantize_dq ("we perform the dequantization of these constants
//   during weight loading ... at the cost of increased memory usage") turns absmax back into
//   fp32 and drops the nested state. Bytes: in * out / 2 + 4 * in * out / 64 + 64.
//   (Training through transformers keeps the double-quantized state: sim/training/lora.hpp.)
// bitsandbytes, 8-bit (load_in_8bit, LLM.int8()): weight int8 [out, in] and SCB, one fp32 absmax
//   per output row, which _apply_8bit_weight moves to the device as the MatmulLtState's SCB.
//   Bytes: in * out + 4 * out.
// Both: llm_int8_skip_modules are unquantized (is_layer_skipped_bnb: a module whose dotted
// path has the entry as one component, or starts with the entry); lm_head is a ParallelLMHead,
// not a LinearBase, and stays in the model dtype. --quantization bitsandbytes on an unquantized
// checkpoint quantizes in flight to nf4 with compress_statistics (_unquantized_generator) and
// then dequantizes the statistics the same way: the 4-bit layout above.
//
// ModelOpt (vllm/model_executor/layers/quantization/modelopt.py):
//   FP8 (ModelOptFp8LinearMethod): weight fp8 [out, in], weight_scale fp32 and input_scale fp32
//     per module (PerTensorScaleParameter, one per fused shard). Bytes: in * out + 8.
//   FP8_PER_CHANNEL_PER_TOKEN: weight fp8, weight_scale fp32 [out]; no input_scale.
//   FP8_PB_WO: weight fp8, weight_scale fp32 [out / 128, 1, in / 128, 1].
//   NVFP4 (ModelOptNvFp4LinearMethod): weight uint8 [out, in / 2] (two e2m1 codes per byte),
//     weight_scale fp8 e4m3 [out, in / 16], weight_scale_2 fp32 and input_scale fp32 per
//     module. Bytes: in * out / 2 + in * out / 16 + 8. W4A16_NVFP4 drops input_scale after
//     loading (+ 4 instead of + 8).
//   Every linear layer and the lm_head (a ParallelLMHead: get_quant_method quantizes both) is
//   quantized unless exclude_modules / ignore names it; entries are fnmatch wildcards
//   ("model.layers.0.mlp*"), matched here as regular expressions over the whole path.
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/model/hf_quant_readers.hpp"

namespace vramsim::model::detail {

namespace {

// bitsandbytes 4-bit: weights per absmax (bitsandbytes quantize_4bit blocksize default 64).
constexpr std::int64_t kBnb4BitBlock = 64;
// fp32 [16]: the code book (quant_map) of one 4-bit quantized tensor.
constexpr std::int64_t kBnbQuantMapBytes = 16 * 4;
// NVFP4: e2m1 weights per fp8 e4m3 scale (NVIDIA's NVFP4; modelopt.py group_size 16).
constexpr std::int64_t kNvfp4Group = 16;

// An llm_int8_skip_modules entry as the regular expression of vLLM's is_layer_skipped_bnb:
// "lm_head" skips every module with a path component "lm_head"; "model.layers.0.mlp" skips
// the module of that path and everything under it.
std::string bnb_skip_pattern(const std::string& entry) {
  const std::string e = regex_escape(entry);
  if (entry.find('.') == std::string::npos) return "re:(.*\\.)?" + e + "(\\..*)?$";
  return "re:" + e + "(\\..*)?$";
}

// A ModelOpt exclude_modules wildcard ("*.mlp.gate", "model.layers.0.self_attn*") as a
// regular expression over the whole path (fnmatch); plain names stay names.
std::string modelopt_exclude_pattern(const std::string& entry) {
  if (entry.find_first_of("*?") == std::string::npos) return entry;
  std::string out = "re:";
  for (char ch : entry) {
    if (ch == '*') {
      out += ".*";
    } else if (ch == '?') {
      out += '.';
    } else {
      out += regex_escape(std::string_view(&ch, 1));
    }
  }
  return out + "$";
}

}  // namespace

void read_bitsandbytes(ConfigKeys& q, CheckpointQuant& c) {
  c.method = QuantMethod::kBitsAndBytes;
  QuantLayout& l = c.layout;
  l = QuantLayout{};
  // vLLM BitsAndBytesConfig.from_config: load_in_8bit defaults to false, load_in_4bit to true.
  const bool eight = q.boolean_or("load_in_8bit", false);
  const bool four = q.boolean_or("load_in_4bit", !eight);
  if (eight && four) {
    q.error("load_in_8bit", "load_in_4bit and load_in_8bit are both true; a checkpoint is one or "
                            "the other (transformers' BitsAndBytesConfig refuses both)");
  }
  if (eight) {
    l.weight_bits = 8;
    l.granularity = ScaleGranularity::kChannel;  // SCB: one fp32 absmax per output row
    l.scale_bytes = 4;
  } else {
    string_in(q, "bnb_4bit_quant_type", {"nf4", "fp4"}, false);  // the same bytes either way
    q.boolean_or("bnb_4bit_use_double_quant", false);  // dequantized at load: see above
    if (q.has("bnb_4bit_quant_storage")) {
      const std::optional<std::string> storage = q.string("bnb_4bit_quant_storage");
      if (storage && *storage != "uint8") {
        q.error("bnb_4bit_quant_storage",
                fmt::format("'{}' is not supported by vLLM (BitsAndBytesConfig takes uint8 only)",
                            *storage));
      }
    }
    l.weight_bits = 4;
    l.granularity = ScaleGranularity::kGroup;
    l.group_size = kBnb4BitBlock;
    l.scale_bytes = 4;
    l.extra_bytes = kBnbQuantMapBytes;
  }
  for (const std::string& entry : string_list(q, "llm_int8_skip_modules")) {
    l.ignore.push_back(bnb_skip_pattern(entry));
  }
}

void read_modelopt(ConfigKeys& q, CheckpointQuant& c) {
  // The ModelOpt block (hf_quant_config.json, older config.json) nests its keys under
  // "quantization"; newer config.json writes them flat, compressed-tensors style
  // (ModelOptQuantConfigBase.from_config).
  std::optional<ConfigKeys> nested;
  if (q.has("quantization")) {
    nested = q.object("quantization", "ModelOpt's quant_algo, exclude_modules, group_size");
    if (!nested) return;
  }
  ConfigKeys& k = nested ? *nested : q;
  const std::string_view exclude_key = nested ? "exclude_modules" : "ignore";
  const std::optional<std::string> algo = k.string("quant_algo");
  if (!k.has("quant_algo")) {
    k.error("quant_algo", "missing required field (FP8, FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO, "
                          "NVFP4 or W4A16_NVFP4)");
  }
  if (!algo) return;
  std::string upper = *algo;  // vLLM upper-cases it ("ModelOpt may emit lowercase")
  for (char& ch : upper) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);

  QuantLayout& l = c.layout;
  l = QuantLayout{};
  l.lm_head = true;
  if (upper == "FP8" || upper == "FP8_PER_CHANNEL_PER_TOKEN" || upper == "FP8_PB_WO") {
    c.method = QuantMethod::kModelOpt;
    c.quant_method = "modelopt";
    l.weight_bits = 8;
    l.scale_bytes = 4;
    if (upper == "FP8") {
      l.granularity = ScaleGranularity::kTensor;
      l.extra_bytes = 4;  // input_scale
    } else if (upper == "FP8_PER_CHANNEL_PER_TOKEN") {
      l.granularity = ScaleGranularity::kChannel;
    } else {
      l.granularity = ScaleGranularity::kBlock;  // ModelOptFp8PbWoLinearMethod: 128 x 128
      l.block_out = 128;
      l.block_in = 128;
    }
  } else if (upper == "NVFP4" || upper == "W4A16_NVFP4") {
    c.method = QuantMethod::kModelOptFp4;
    c.quant_method = "modelopt_fp4";
    l.weight_bits = 4;
    l.granularity = ScaleGranularity::kGroup;
    l.group_size = int_in(k, "group_size", {kNvfp4Group}, false,
                          "weights per fp8 scale; NVFP4 scales every 16")
                       .value_or(kNvfp4Group);
    l.scale_bytes = 1;                          // fp8 e4m3
    l.extra_bytes = upper == "NVFP4" ? 8 : 4;   // weight_scale_2 (+ input_scale)
  } else {
    k.error("quant_algo", fmt::format("'{}' is not modelled; vramsim reads FP8, "
                                      "FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO, NVFP4 and "
                                      "W4A16_NVFP4",
                                      *algo));
    return;
  }
  for (const std::string& entry : string_list(k, exclude_key)) {
    l.ignore.push_back(modelopt_exclude_pattern(entry));
  }
  if (nested) {
    if (const nlohmann::json* kv = k.find("kv_cache_quant_algo")) {
      const std::optional<std::string> kv_algo =
          kv->is_string() ? std::optional<std::string>(kv->get<std::string>()) : std::nullopt;
      if (kv_algo == "FP8" || kv_algo == "fp8") {
        c.kv_cache_bits = 8;
      } else if (kv_algo == "NVFP4" || kv_algo == "nvfp4") {
        c.kv_cache_bits = 4;
      } else {
        k.error("kv_cache_quant_algo",
                fmt::format("expected FP8, NVFP4 or null, got {}", describe_json(*kv)));
      }
    }
  } else if (const nlohmann::json* kv = k.find("kv_cache_scheme")) {
    if (!kv->is_object()) {
      k.error("kv_cache_scheme",
              fmt::format("expected a JSON object or null, got {}", describe_json(*kv)));
    } else {
      std::optional<ConfigKeys> kvk = k.object("kv_cache_scheme", "the KV-cache scales");
      c.kv_cache_bits = static_cast<int>(
          int_in(*kvk, "num_bits", {4, 8}, true, "bits of a KV-cache element").value_or(8));
    }
  }
}

}  // namespace vramsim::model::detail
