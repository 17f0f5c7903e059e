// libFuzzer target: the Azure CSV trace reader (sim/serving/traces/).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_trace_readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vramsim::fuzz::fuzz_trace(data, size, "trace.csv", vramsim::serving::TraceFormat::kAzure);
  return 0;
}
