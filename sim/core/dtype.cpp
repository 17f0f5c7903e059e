#include "sim/core/dtype.hpp"

#include "sim/core/check.hpp"

namespace vramsim {

int bits_of(DType d) {
  switch (d) {
    case DType::kFp32: return 32;
    case DType::kFp16: return 16;
    case DType::kBf16: return 16;
    case DType::kFp8: return 8;
    case DType::kInt8: return 8;
    case DType::kInt4: return 4;
  }
  VRAMSIM_UNREACHABLE("invalid DType");
}

std::string_view to_string(DType d) {
  switch (d) {
    case DType::kFp32: return "fp32";
    case DType::kFp16: return "fp16";
    case DType::kBf16: return "bf16";
    case DType::kFp8: return "fp8";
    case DType::kInt8: return "int8";
    case DType::kInt4: return "int4";
  }
  VRAMSIM_UNREACHABLE("invalid DType");
}

std::optional<DType> dtype_from_string(std::string_view s) {
  if (s == "fp32" || s == "float32" || s == "float") return DType::kFp32;
  if (s == "fp16" || s == "float16" || s == "half") return DType::kFp16;
  if (s == "bf16" || s == "bfloat16") return DType::kBf16;
  if (s == "fp8" || s == "fp8_e4m3" || s == "fp8_e5m2" || s == "float8_e4m3fn") return DType::kFp8;
  if (s == "int8") return DType::kInt8;
  if (s == "int4") return DType::kInt4;
  return std::nullopt;
}

std::string_view dtype_names() { return "fp32, fp16, bf16, fp8, int8, int4"; }

}  // namespace vramsim
