// How weights are stored: the --dtype of unquantized tensors and vLLM's --quantization method.
//
// Storage per quantized matrix of in x out weights (exact bytes; G = group_size = 128):
//
//   method   weights        scales / zeros / indices                    bits per weight
//   none     dtype          -                                           16 (bf16/fp16)
//   fp8      1 B            one fp32 scale per tensor (vLLM online fp8) 8 + 32/(in*out)
//   int8     1 B            one fp32 scale per output channel (W8A8)    8 + 32/in
//   awq      4 bit packed   fp16 scale + 4-bit zero per group of G      4 + 16/G + 4/G = 4.15625
//   gptq     4 bit packed   as AWQ, plus an int32 g_idx per input row   4.15625 + 32/out
//   mxfp4    4 bit (e2m1)   one 8-bit (e8m0) scale per 32 weights       4 + 8/32 = 4.25
//
// As in vLLM, embeddings, lm_head, norms, biases and MoE routers stay in dtype; mxfp4
// (gpt-oss) quantizes only the routed experts (attention stays in dtype, as the checkpoint's
// modules_to_not_convert says), the others quantize every linear layer of the decoder.
// Sources: AWQ (Lin et al. 2023, arXiv:2306.00978) and GPTQ (Frantar et al. 2022,
// arXiv:2210.17323) packing as in vLLM's awq.py / gptq.py; OCP Microscaling Formats (MX) v1.0
// for MXFP4.
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/core/dtype.hpp"
#include "sim/core/enum_table.hpp"
#include "sim/core/units.hpp"
#include "sim/model/weight_tensors.hpp"

namespace vramsim::model {

enum class QuantMethod { kNone, kFp8, kInt8, kAwq, kGptq, kMxfp4 };

/// The names vLLM's --quantization takes, with the kernel names it also accepts.
inline constexpr auto kQuantMethods = enum_table<QuantMethod>(
    {
        {QuantMethod::kNone, "none", "unquantized: every weight in --dtype"},
        {QuantMethod::kFp8, "fp8", "1-byte weights, one fp32 scale per tensor"},
        {QuantMethod::kInt8, "int8", "W8A8: 1-byte weights, one fp32 scale per output channel"},
        {QuantMethod::kAwq, "awq", "AWQ: 4-bit weights, fp16 scale and 4-bit zero per group"},
        {QuantMethod::kGptq, "gptq", "GPTQ: as AWQ, plus an int32 g_idx per input row"},
        {QuantMethod::kMxfp4, "mxfp4", "MXFP4 routed experts: 4-bit e2m1, e8m0 scale per 32"},
    },
    {
        {"w8a8", QuantMethod::kInt8},
        {"awq_marlin", QuantMethod::kAwq},
        {"gptq_marlin", QuantMethod::kGptq},
    });
static_assert(covers_every_enumerator(kQuantMethods) && names_are_unique(kQuantMethods));

/// Canonical name as vLLM's --quantization takes it ("none" for kNone).
std::string_view to_string(QuantMethod m);
/// The accepted --quantization names with their aliases, "none, fp8, int8 (w8a8), ...".
std::string_view quantization_names();

struct WeightFormat {
  DType dtype = DType::kBf16;  // --dtype: unquantized weights, embeddings, lm_head, norms
  QuantMethod quantization = QuantMethod::kNone;
  std::int64_t group_size = 128;  // AWQ / GPTQ quantization group along the input dim
};

/// Builds a format from --dtype and --quantization. Accepts "" and "none"; "fp8"; "int8" and
/// "w8a8"; "awq" and "awq_marlin"; "gptq" and "gptq_marlin"; "mxfp4". Any other name is a
/// ConfigError on field "quantization" listing the valid names.
WeightFormat make_weight_format(DType dtype, std::string_view quantization);

/// Whether `fmt` stores tensors of `kind` quantized (see the table above).
bool is_quantized(const WeightFormat& fmt, TensorKind kind);

/// Exact bytes of one in x out matrix (or vector, in = 1) of `kind` stored in `fmt`.
Bytes matrix_bytes(const WeightFormat& fmt, TensorKind kind, std::int64_t in, std::int64_t out);

/// Nominal bits per weight of quantized matrices, scales and zero points included, ignoring
/// the per-tensor / per-row terms (fp8: 8, int8: 8, awq/gptq: 4.15625, mxfp4: 4.25); the dtype's
/// bits for kNone. For display.
double nominal_bits_per_weight(const WeightFormat& fmt);

}  // namespace vramsim::model
