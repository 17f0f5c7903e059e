#include "sim/serving/execution_time_model.hpp"

namespace vramsim::serving {

ExecutionTimeModel::~ExecutionTimeModel() = default;

std::int64_t BatchShape::num_prefill_tokens() const {
  std::int64_t n = 0;
  for (const PrefillChunk& c : prefills) n += c.num_tokens;
  return n;
}

}  // namespace vramsim::serving
