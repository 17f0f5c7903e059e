#include "sim/serving/trace_source.hpp"

namespace vramsim::serving {

TraceSource::~TraceSource() = default;

}  // namespace vramsim::serving
