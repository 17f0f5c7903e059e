// Numeric formats of weights, activations and the KV cache, with their storage size.
// A closed choice: enum + exhaustive switches (no default:); its names come from kDTypes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sim/core/enum_table.hpp"

namespace vramsim {

enum class DType {
  kFp32,
  kFp16,
  kBf16,
  kFp8,   // e4m3 / e5m2: one byte
  kInt8,
  kInt4,  // two values per byte
};

/// The names users write, with the common aliases of vLLM / Hugging Face.
inline constexpr auto kDTypes = enum_table<DType>(
    {
        {DType::kFp32, "fp32", "IEEE single precision, 4 bytes"},
        {DType::kFp16, "fp16", "IEEE half precision, 2 bytes"},
        {DType::kBf16, "bf16", "bfloat16, 2 bytes"},
        {DType::kFp8, "fp8", "8-bit float (e4m3 / e5m2), 1 byte"},
        {DType::kInt8, "int8", "8-bit integer, 1 byte"},
        {DType::kInt4, "int4", "4-bit integer, two values per byte"},
    },
    {
        {"float32", DType::kFp32},
        {"float", DType::kFp32},
        {"float16", DType::kFp16},
        {"half", DType::kFp16},
        {"bfloat16", DType::kBf16},
        {"fp8_e4m3", DType::kFp8},
        {"fp8_e5m2", DType::kFp8},
        {"float8_e4m3fn", DType::kFp8},
    });
static_assert(covers_every_enumerator(kDTypes) && names_are_unique(kDTypes));

/// Storage bits per element (int4 = 4).
int bits_of(DType d);
/// Lower-case name as users write it: "fp32", "fp16", "bf16", "fp8", "int8", "int4".
std::string_view to_string(DType d);
/// Accepts the canonical names and the common aliases of vLLM / Hugging Face:
/// "float32"/"float", "float16"/"half", "bfloat16", "fp8_e4m3"/"fp8_e5m2", ...
std::optional<DType> dtype_from_string(std::string_view s);
/// The accepted canonical names, comma-separated, for error messages.
std::string_view dtype_names();

}  // namespace vramsim
