#include "sim/model/model_spec.hpp"

#include <algorithm>

#include "sim/core/check.hpp"

namespace vramsim::model {

std::string_view to_string(ModelFamily f) { return name_of(kModelFamilies, f); }

bool ModelSpec::has_sliding_window() const {
  return std::any_of(layers.begin(), layers.end(),
                     [](const LayerSpec& l) { return l.sliding_window > 0; });
}

std::int64_t ModelSpec::num_moe_layers() const {
  return std::count_if(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.moe; });
}

}  // namespace vramsim::model
