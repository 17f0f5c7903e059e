#include "sim/cost/attention_classes.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/model/kv_cache_shape.hpp"

namespace vramsim::cost {

AttentionClasses attention_classes(const model::ModelSpec& spec, DType kv_dtype,
                                   model::Parallelism par) {
  AttentionClasses out;
  for (const model::LayerSpec& l : spec.layers) {
    if (std::find(out.windows.begin(), out.windows.end(), l.sliding_window) ==
        out.windows.end()) {
      out.windows.push_back(l.sliding_window);
    }
  }
  std::sort(out.windows.begin(), out.windows.end());
  VRAMSIM_CHECK(out.windows.size() <= kMaxAttentionClasses, "model '{}' has {} sliding windows",
                spec.name, out.windows.size());
  out.stages.assign(static_cast<std::size_t>(par.pp), StageAttention{});
  for (int r = 0; r < par.pp; ++r) {
    StageAttention& st = out.stages[static_cast<std::size_t>(r)];
    for (const model::LayerKv& l : model::kv_layers(spec, kv_dtype, par, r)) {
      const auto it = std::find(out.windows.begin(), out.windows.end(), l.sliding_window);
      AttentionClass& c = st.classes[static_cast<std::size_t>(it - out.windows.begin())];
      c.num_layers += 1.0;
      c.kv_bytes_per_token += static_cast<double>(l.bytes_per_token.count());
      ++st.num_layers;
    }
  }
  return out;
}

}  // namespace vramsim::cost
