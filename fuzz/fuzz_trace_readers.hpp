// One body for the three trace-reader targets: open the input as the given format under both
// malformed-row policies and stream every record, as `vramsim serve --trace` does; then detect
// its format and read its lengths as `--prompt-tokens trace:FILE` does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "fuzz/fuzz_support.hpp"
#include "sim/serving/traces/length_distribution.hpp"
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
  // `--prompt-tokens trace:FILE` reads the same file for its lengths, through the length
  // statistics reader when the first record is its header (num_prefill_tokens,...).
  expect_config_error_at_most(
      [&] { (void)serving::read_trace_lengths(path.string(), serving::LengthRole::kPrompt); });
}

}  // namespace vramsim::fuzz
