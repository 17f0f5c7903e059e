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

std::string_view to_string(DType d) { return name_of(kDTypes, d); }
std::optional<DType> dtype_from_string(std::string_view s) { return parse_name(kDTypes, s); }
std::string_view dtype_names() { return names_list<kDTypes>(); }

}  // namespace vramsim
