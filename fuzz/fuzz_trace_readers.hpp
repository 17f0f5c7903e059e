// One body for the three trace-reader targets: open the input as the given format under both
// malformed-row policies and stream every record, as `vramsim serve --trace` does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "fuzz/fuzz_support.hpp"
#include "sim/serving/traces/trace_file.hpp"

namespace vramsim::fuzz {

inline void fuzz_trace(const std::uint8_t* data, std::size_t size, std::string_view file_name,
                       serving::TraceFormat format) {
  const auto path = write_input(data, size, file_name);
  for (auto policy : {serving::MalformedRowPolicy::kError, serving::MalformedRowPolicy::kSkip}) {
    expect_config_error_at_most([&] {
      auto source = serving::open_trace_file(path.string(), format, policy);
      while (source->next()) {
      }
      (void)source->stats();
      (void)source->describe();
    });
  }
  // Detection reads only the first data line; run it on the same bytes.
  expect_config_error_at_most([&] { (void)serving::detect_trace_format(path.string()); });
}

}  // namespace vramsim::fuzz
