// Token-length distributions for synthetic prompts and outputs, their command-line syntax and
// their samplers.
//
//   fixed:N                                  every request N tokens
//   uniform:MIN:MAX                          integers in [MIN, MAX], inclusive
//   lognormal:mu=M,sigma=S[,min=A][,max=B]   round(exp(M + S*Z)), clamped to [A, B]
//   lognormal:mean=X,median=Y[,min=A][,max=B]  the same, with mu = ln Y, sigma = sqrt(2 ln(X/Y))
//   zipf:S:MIN:MAX                           P(n) proportional to n^-S on [MIN, MAX]
//   trace:PATH                               drawn uniformly from the lengths in a trace file
//
// NOTE: a lognormal given by mean and median matches those two moments before clamping and
// rounding; the clamp (default [1, 10^9]) moves the mean only when it cuts a visible tail.
// trace:PATH reads any trace format (trace_file.hpp) and also the length-only CSVs of vidur and
// sarathi-serve (header num_prefill_tokens,num_decode_tokens,...); prompts take the prompt
// column and outputs the output column, drawn independently (the pairing is not kept).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/serving/traces/random_variates.hpp"
#include "sim/serving/traces/trace_parsing.hpp"

namespace vramsim::serving {

struct FixedLength {
  std::int64_t tokens = 0;
};
struct UniformLength {
  std::int64_t min_tokens = 0;
  std::int64_t max_tokens = 0;
};
struct LognormalLength {
  double mu = 0.0;     // mean of ln(length)
  double sigma = 0.0;  // standard deviation of ln(length)
  std::int64_t min_tokens = 1;
  std::int64_t max_tokens = kMaxTraceTokens;
};
struct ZipfLength {
  double exponent = 0.0;
  std::int64_t min_tokens = 0;
  std::int64_t max_tokens = 0;
};
struct EmpiricalLength {
  std::string path;
};

using LengthDistribution =
    std::variant<FixedLength, UniformLength, LognormalLength, ZipfLength, EmpiricalLength>;

/// Which column of a trace file an EmpiricalLength reads.
enum class LengthRole : std::uint8_t { kPrompt, kOutput };

/// mu = ln(median), sigma = sqrt(2 ln(mean/median)). Requires mean >= median > 0.
LognormalLength lognormal_from_mean_median(double mean, double median);

/// Parses the syntax above. Throws ConfigError on `field` naming the accepted forms.
LengthDistribution parse_length_distribution(std::string_view text, const std::string& field);

/// The syntax of the accepted forms, one line.
std::string_view length_distribution_help();

/// The canonical text form (parse_length_distribution reads it back): "lognormal:mu=...".
std::string to_string(const LengthDistribution& dist);

/// Reports out-of-range parameters on `field` (lengths in [1, 10^9], min <= max, sigma >= 0,
/// exponent > 0, a non-empty path). Does not open files.
void validate_length_distribution(const LengthDistribution& dist, ValidationReport& report,
                                  const std::string& field);

/// Prompt and output lengths of every row of a trace file (any trace format, or a length-only
/// CSV with num_prefill_tokens,num_decode_tokens as its first columns). Holds the whole column
/// in memory, bounded by the file size. Throws ConfigError for a bad or empty file.
std::vector<std::int32_t> read_trace_lengths(const std::string& path, LengthRole role);

/// Draws lengths from a validated distribution. An EmpiricalLength is loaded at construction.
class LengthSampler {
 public:
  /// Throws ConfigError if an EmpiricalLength's file cannot be read.
  LengthSampler(const LengthDistribution& dist, LengthRole role);
  std::int64_t sample(RngStream& rng) const;

 private:
  LengthDistribution dist_;
  std::unique_ptr<ZipfSampler> zipf_;  // set for ZipfLength
  std::vector<std::int32_t> empirical_;
};

}  // namespace vramsim::serving
