// Synthetic request streams: arrivals from a renewal process, prompt and output lengths from
// independent distributions (length_distribution.hpp), optional shared prompt prefixes, all
// deterministic given a seed.
//
// Random streams (RngStreams(seed).stream(name)), one per concern so that changing, say, the
// output distribution never shifts the arrivals: "arrivals", "prompt_lengths",
// "output_lengths", "prefix_groups".
//
// Arrivals: the first request arrives at t = 0; gaps are exponential (kPoisson, rate r), gamma
// with coefficient of variation cv (kGamma: shape 1/cv^2, scale 1/(r*shape), same mean gap
// 1/r), or zero (kBurst: every request at t = 0). Absolute times are summed in double seconds
// and rounded to ns once each, so rounding never drifts.
//
// Shared prefixes: request i joins group g (uniform, or Zipf with group 0 the most popular),
// and its prompt begins with group g's prefix of prefix_tokens tokens. hash_ids hold one id per
// kSyntheticHashBlockTokens tokens of the prompt (the last one possibly partial): ids of the
// prefix blocks are g * (prefix_tokens / 16) + j, shared by the group; every later block gets a
// fresh id, unique across the stream. The prompt length stays the drawn one: a prompt shorter
// than the prefix shares only its own leading blocks.
//
//   prompt tokens: |<------ group prefix ------>|<---- own ---->|
//   hash_ids:      | g*P+0 | g*P+1 | ... g*P+P-1| u0 | u1 | u2  |   (16 tokens each)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/enum_table.hpp"
#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/units.hpp"
#include "sim/serving/trace_source.hpp"
#include "sim/serving/traces/length_distribution.hpp"

namespace vramsim::serving {

/// Tokens per synthetic hash id: vLLM's default KV block size, so each id is one block.
inline constexpr std::int64_t kSyntheticHashBlockTokens = 16;

enum class ArrivalProcess : std::uint8_t { kPoisson, kGamma, kBurst };
inline constexpr auto kArrivalProcesses = enum_table<ArrivalProcess>({
    {ArrivalProcess::kPoisson, "poisson", "exponential gaps at the given rate"},
    {ArrivalProcess::kGamma, "gamma", "gamma-distributed gaps: the given rate and cv"},
    {ArrivalProcess::kBurst, "burst", "every request at time zero"},
});
static_assert(covers_every_enumerator(kArrivalProcesses) && names_are_unique(kArrivalProcesses));
/// "poisson", "gamma", "burst".
std::string_view to_string(ArrivalProcess process);
std::optional<ArrivalProcess> arrival_process_from_string(std::string_view text);

struct ArrivalSpec {
  ArrivalProcess process = ArrivalProcess::kPoisson;
  double rate_per_s = 1.0;  // mean requests per second (kPoisson, kGamma)
  double cv = 1.0;          // coefficient of variation of the gaps (kGamma only)
};

enum class PrefixGroupChoice : std::uint8_t { kUniform, kZipf };
inline constexpr auto kPrefixGroupChoices = enum_table<PrefixGroupChoice>({
    {PrefixGroupChoice::kUniform, "uniform", "every prefix group equally likely"},
    {PrefixGroupChoice::kZipf, "zipf", "prefix groups drawn by a Zipf law"},
});
static_assert(covers_every_enumerator(kPrefixGroupChoices) &&
              names_are_unique(kPrefixGroupChoices));
/// "uniform", "zipf".
std::string_view to_string(PrefixGroupChoice choice);
std::optional<PrefixGroupChoice> prefix_group_choice_from_string(std::string_view text);

struct SharedPrefixSpec {
  std::int64_t num_groups = 0;     // 0: no shared prefixes (and no hash_ids)
  std::int64_t prefix_tokens = 0;  // a positive multiple of kSyntheticHashBlockTokens
  PrefixGroupChoice choice = PrefixGroupChoice::kUniform;
  double zipf_exponent = 1.0;  // kZipf: P(group g) proportional to (g + 1)^-exponent
};

struct SyntheticSpec {
  ArrivalSpec arrivals;
  LengthDistribution prompt = FixedLength{512};
  LengthDistribution output = FixedLength{128};
  /// The stream ends after num_requests requests or at the first arrival >= duration, whichever
  /// comes first; at least one must be set (kBurst needs num_requests).
  std::optional<std::int64_t> num_requests;
  std::optional<Duration> duration;
  SharedPrefixSpec shared_prefix;
  std::uint64_t seed = 0;

  /// Reports every bad option on "<at>.<key>": rate, cv, prompt_lengths, output_lengths,
  /// num_requests, duration, prefix_groups, prefix_tokens, prefix_zipf_exponent.
  void validate(ValidationReport& report, const std::string& at) const;
};

class SyntheticTrace final : public TraceSource {
 public:
  /// Requires a spec that validate() accepted (checked). Throws ConfigError if a trace:PATH
  /// length distribution cannot be read.
  explicit SyntheticTrace(const SyntheticSpec& spec);
  std::optional<TraceRecord> next() override;
  std::string describe() const override;
  TraceStats stats() const override { return stats_; }

 private:
  double next_gap_seconds();
  void add_hash_ids(TraceRecord& record);

  SyntheticSpec spec_;
  LengthSampler prompt_sampler_;
  LengthSampler output_sampler_;
  std::optional<ZipfSampler> group_sampler_;
  RngStream arrival_rng_;
  RngStream prompt_rng_;
  RngStream output_rng_;
  RngStream group_rng_;
  double now_s_ = 0.0;
  std::int64_t num_emitted_ = 0;
  std::uint64_t next_unique_id_ = 0;
  TraceStats stats_;
};

}  // namespace vramsim::serving
