// Numeric formats of weights, activations and the KV cache, with their storage size.
// A closed choice: enum + exhaustive switches (no default:), to_string/from_string.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vramsim {

enum class DType {
  kFp32,
  kFp16,
  kBf16,
  kFp8,   // e4m3 / e5m2: one byte
  kInt8,
  kInt4,  // two values per byte
};

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
