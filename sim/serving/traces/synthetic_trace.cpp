#include "sim/serving/traces/synthetic_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/serving/trace_source.hpp"
#include "sim/serving/traces/random_variates.hpp"

namespace vramsim::serving {

std::string_view to_string(ArrivalProcess process) { return name_of(kArrivalProcesses, process); }
std::optional<ArrivalProcess> arrival_process_from_string(std::string_view text) {
  return parse_name(kArrivalProcesses, text);
}
std::string_view to_string(PrefixGroupChoice choice) {
  return name_of(kPrefixGroupChoices, choice);
}
std::optional<PrefixGroupChoice> prefix_group_choice_from_string(std::string_view text) {
  return parse_name(kPrefixGroupChoices, text);
}

void SyntheticSpec::validate(ValidationReport& report, const std::string& at) const {
  const std::string p = at.empty() ? std::string() : at + ".";
  if (arrivals.process != ArrivalProcess::kBurst &&
      !(arrivals.rate_per_s > 0.0 && std::isfinite(arrivals.rate_per_s))) {
    report.error(p + "rate", fmt::format("must be > 0 requests/s, got {}", arrivals.rate_per_s));
  }
  if (arrivals.process == ArrivalProcess::kGamma && !(arrivals.cv > 0.0 && arrivals.cv <= 100.0)) {
    report.error(p + "cv", fmt::format("must be in (0, 100], got {}", arrivals.cv));
  }
  validate_length_distribution(prompt, report, p + "prompt_lengths");
  validate_length_distribution(output, report, p + "output_lengths");
  if (!num_requests && !duration) {
    report.error(p + "num_requests", "set num_requests or duration (or both) to end the stream");
  }
  if (num_requests && *num_requests <= 0) {
    report.error(p + "num_requests", fmt::format("must be > 0, got {}", *num_requests));
  }
  if (duration && *duration <= Duration::zero()) {
    report.error(p + "duration", fmt::format("must be > 0 s, got {} s", duration->seconds()));
  }
  if (duration && duration->nanoseconds() > kMaxArrivalNs) {
    report.error(p + "duration", fmt::format("must be at most {:g} s (the simulator's clock), "
                                             "got {} s",
                                             kMaxArrivalSeconds, duration->seconds()));
  }
  // The mean span of the arrivals, (n - 1) / rate, must fit the clock (a gamma stream's span
  // varies around it; next() refuses a draw that passes the clock anyway).
  if (arrivals.process != ArrivalProcess::kBurst && num_requests && *num_requests > 1 &&
      arrivals.rate_per_s > 0.0 && std::isfinite(arrivals.rate_per_s)) {
    const double span_s = static_cast<double>(*num_requests - 1) / arrivals.rate_per_s;
    const double until_s = duration ? std::min(span_s, duration->seconds()) : span_s;
    if (!(until_s <= kMaxArrivalSeconds)) {
      report.error(p + "rate",
                   fmt::format("{} requests at {} requests/s arrive over {:.3g} s: more than the "
                               "simulator's clock holds ({:g} s); use a higher rate, fewer "
                               "requests or a duration",
                               *num_requests, arrivals.rate_per_s, span_s, kMaxArrivalSeconds));
    }
  }
  if (arrivals.process == ArrivalProcess::kBurst && !num_requests) {
    report.error(p + "num_requests", "a burst (every request at t = 0) needs num_requests");
  }
  const SharedPrefixSpec& sp = shared_prefix;
  if (sp.num_groups < 0) {
    report.error(p + "prefix_groups", fmt::format("must be >= 0, got {}", sp.num_groups));
  }
  if (sp.num_groups > 0 &&
      (sp.prefix_tokens <= 0 || sp.prefix_tokens % kSyntheticHashBlockTokens != 0 ||
       sp.prefix_tokens > kMaxTraceTokens)) {
    report.error(p + "prefix_tokens",
                 fmt::format("must be a positive multiple of {} tokens, got {}",
                             kSyntheticHashBlockTokens, sp.prefix_tokens));
  }
  if (sp.num_groups > 0 && sp.choice == PrefixGroupChoice::kZipf &&
      !(sp.zipf_exponent > 0.0 && std::isfinite(sp.zipf_exponent))) {
    report.error(p + "prefix_zipf_exponent", fmt::format("must be > 0, got {}", sp.zipf_exponent));
  }
}

namespace {
const SyntheticSpec& checked(const SyntheticSpec& spec) {
  ValidationReport report;
  spec.validate(report, "synthetic");
  VRAMSIM_CHECK(report.ok(), "SyntheticTrace needs a validated spec: {}", report.format());
  return spec;
}
}  // namespace

SyntheticTrace::SyntheticTrace(const SyntheticSpec& spec)
    : spec_(checked(spec)),
      prompt_sampler_(spec.prompt, LengthRole::kPrompt),
      output_sampler_(spec.output, LengthRole::kOutput),
      arrival_rng_(RngStreams(spec.seed).stream("arrivals")),
      prompt_rng_(RngStreams(spec.seed).stream("prompt_lengths")),
      output_rng_(RngStreams(spec.seed).stream("output_lengths")),
      group_rng_(RngStreams(spec.seed).stream("prefix_groups")) {
  const SharedPrefixSpec& sp = spec_.shared_prefix;
  if (sp.num_groups > 0) {
    next_unique_id_ = static_cast<std::uint64_t>(sp.num_groups) *
                      static_cast<std::uint64_t>(sp.prefix_tokens / kSyntheticHashBlockTokens);
    if (sp.choice == PrefixGroupChoice::kZipf) {
      group_sampler_.emplace(sp.zipf_exponent, 1, sp.num_groups);
    }
  }
}

double SyntheticTrace::next_gap_seconds() {
  const ArrivalSpec& a = spec_.arrivals;
  switch (a.process) {
    case ArrivalProcess::kPoisson: return arrival_rng_.exponential(a.rate_per_s);
    case ArrivalProcess::kGamma: {
      const double shape = 1.0 / (a.cv * a.cv);
      return sample_gamma(arrival_rng_, shape, 1.0 / (a.rate_per_s * shape));
    }
    case ArrivalProcess::kBurst: return 0.0;
  }
  VRAMSIM_UNREACHABLE("invalid ArrivalProcess");
}

void SyntheticTrace::add_hash_ids(TraceRecord& record) {
  const SharedPrefixSpec& sp = spec_.shared_prefix;
  if (sp.num_groups <= 0) return;
  const std::int64_t group = group_sampler_ ? group_sampler_->sample(group_rng_) - 1
                                            : group_rng_.uniform_int(0, sp.num_groups - 1);
  const std::int64_t prefix_blocks = sp.prefix_tokens / kSyntheticHashBlockTokens;
  const std::int64_t num_blocks = ceil_div(record.prompt_tokens, kSyntheticHashBlockTokens);
  record.hash_ids.reserve(static_cast<std::size_t>(num_blocks));
  for (std::int64_t j = 0; j < num_blocks; ++j) {
    record.hash_ids.push_back(j < prefix_blocks
                                  ? static_cast<std::uint64_t>(group * prefix_blocks + j)
                                  : next_unique_id_++);
  }
  record.hash_block_tokens = kSyntheticHashBlockTokens;
}

std::optional<TraceRecord> SyntheticTrace::next() {
  if (spec_.num_requests && num_emitted_ >= *spec_.num_requests) return std::nullopt;
  if (num_emitted_ > 0) now_s_ += next_gap_seconds();
  // Compared as seconds first: a gap of 1e300 s (rate 1e-300) has no nanosecond count.
  if (spec_.duration && now_s_ >= spec_.duration->seconds()) return std::nullopt;
  if (!(now_s_ <= kMaxArrivalSeconds)) {
    throw ConfigError("workload.rate",
                      fmt::format("--rate {} requests/s puts request {} at {:.3g} s: past the "
                                  "simulator's clock ({:g} s of arrivals); use a higher rate or "
                                  "fewer requests",
                                  spec_.arrivals.rate_per_s, num_emitted_ + 1, now_s_,
                                  kMaxArrivalSeconds));
  }
  const Duration at = Duration::from_seconds(now_s_);
  if (spec_.duration && at >= *spec_.duration) return std::nullopt;
  TraceRecord record;
  record.arrival = SimTime::zero() + at;
  record.prompt_tokens = prompt_sampler_.sample(prompt_rng_);
  record.output_tokens = output_sampler_.sample(output_rng_);
  add_hash_ids(record);
  ++num_emitted_;
  ++stats_.rows_read;
  return record;
}

std::string SyntheticTrace::describe() const {
  const ArrivalSpec& a = spec_.arrivals;
  std::string arrivals;
  switch (a.process) {
    case ArrivalProcess::kPoisson: arrivals = fmt::format("poisson {} req/s", a.rate_per_s); break;
    case ArrivalProcess::kGamma:
      arrivals = fmt::format("gamma {} req/s cv {}", a.rate_per_s, a.cv);
      break;
    case ArrivalProcess::kBurst: arrivals = "burst at t=0"; break;
  }
  std::string out = fmt::format("synthetic: {}, prompt {}, output {}", arrivals,
                                to_string(spec_.prompt), to_string(spec_.output));
  if (spec_.num_requests) out += fmt::format(", {} requests", *spec_.num_requests);
  if (spec_.duration) out += fmt::format(", {} s", spec_.duration->seconds());
  const SharedPrefixSpec& sp = spec_.shared_prefix;
  if (sp.num_groups > 0) {
    out += fmt::format(", {} prefix groups of {} tokens ({})", sp.num_groups, sp.prefix_tokens,
                       to_string(sp.choice));
  }
  return out + fmt::format(", seed {}", spec_.seed);
}

}  // namespace vramsim::serving
