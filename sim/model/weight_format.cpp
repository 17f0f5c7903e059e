#include "sim/model/weight_format.hpp"

#include <fmt/format.h>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"

namespace vramsim::model {

namespace {

constexpr std::int64_t kFp32Bytes = 4;
constexpr std::int64_t kFp16Bytes = 2;
constexpr std::int64_t kInt32Bytes = 4;
constexpr std::int64_t kMxBlock = 32;  // OCP MX v1.0: one shared e8m0 scale per 32 elements

// Bytes of n elements of `bits` bits each, rounded up to whole bytes.
std::int64_t packed_bytes(std::int64_t n, std::int64_t bits) { return ceil_div(n * bits, 8); }

}  // namespace

std::string_view to_string(QuantMethod m) { return name_of(kQuantMethods, m); }

std::string_view quantization_names() {
  static const std::string names = join_names_with_aliases(kQuantMethods);
  return names;
}

WeightFormat make_weight_format(DType dtype, std::string_view q) {
  WeightFormat f;
  f.dtype = dtype;
  const std::optional<QuantMethod> method =
      q.empty() ? QuantMethod::kNone : parse_name(kQuantMethods, q);
  if (!method) {
    throw ConfigError("quantization", fmt::format("unknown quantization method '{}'; valid: {}", q,
                                                  quantization_names()));
  }
  f.quantization = *method;
  return f;
}

bool is_quantized(const WeightFormat& fmt, TensorKind kind) {
  const bool decoder_linear = kind == TensorKind::kLinear || kind == TensorKind::kExpertLinear;
  switch (fmt.quantization) {
    case QuantMethod::kNone: return false;
    case QuantMethod::kFp8:
    case QuantMethod::kInt8:
    case QuantMethod::kAwq:
    case QuantMethod::kGptq: return decoder_linear;
    case QuantMethod::kMxfp4: return kind == TensorKind::kExpertLinear;
  }
  VRAMSIM_UNREACHABLE("invalid QuantMethod");
}

Bytes matrix_bytes(const WeightFormat& fmt, TensorKind kind, std::int64_t in, std::int64_t out) {
  const std::int64_t n = in * out;
  if (!is_quantized(fmt, kind)) return Bytes(packed_bytes(n, bits_of(fmt.dtype)));
  switch (fmt.quantization) {
    case QuantMethod::kNone: break;
    case QuantMethod::kFp8: return Bytes(n + kFp32Bytes);
    case QuantMethod::kInt8: return Bytes(n + out * kFp32Bytes);
    case QuantMethod::kAwq:
    case QuantMethod::kGptq: {
      const std::int64_t groups = ceil_div(in, fmt.group_size);
      std::int64_t bytes = packed_bytes(n, 4)                    // qweight: 8 values per int32
                           + groups * out * kFp16Bytes           // scales
                           + packed_bytes(groups * out, 4);      // qzeros: 8 per int32
      if (fmt.quantization == QuantMethod::kGptq) bytes += in * kInt32Bytes;  // g_idx
      return Bytes(bytes);
    }
    case QuantMethod::kMxfp4:
      return Bytes(packed_bytes(n, 4) + ceil_div(in, kMxBlock) * out);  // e8m0 scales, 1 B
  }
  VRAMSIM_UNREACHABLE("unquantized format reached the quantized branch");
}

double nominal_bits_per_weight(const WeightFormat& fmt) {
  switch (fmt.quantization) {
    case QuantMethod::kNone: return bits_of(fmt.dtype);
    case QuantMethod::kFp8:
    case QuantMethod::kInt8: return 8.0;
    case QuantMethod::kAwq:
    case QuantMethod::kGptq:
      return 4.0 + 20.0 / static_cast<double>(fmt.group_size);
    case QuantMethod::kMxfp4: return 4.25;
  }
  VRAMSIM_UNREACHABLE("invalid QuantMethod");
}

}  // namespace vramsim::model
