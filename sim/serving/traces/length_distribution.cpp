#include "sim/serving/traces/length_distribution.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "sim/core/check.hpp"
#include "sim/serving/traces/file_trace_source.hpp"
#include "sim/serving/traces/trace_file.hpp"

namespace vramsim::serving {
namespace {

// vidur / sarathi-serve length statistics (SOURCES.md section 3): a CSV whose first two
// columns are these, more columns allowed.
constexpr std::string_view kLengthStatsPrefix = "num_prefill_tokens,num_decode_tokens";

// True when the CSV record `header` starts with the columns of kLengthStatsPrefix, each
// possibly quoted (pandas' QUOTE_ALL).
bool is_length_stats_header(std::string_view header) {
  std::array<std::string_view, 2> f;
  CsvRecordSplitter csv;
  std::string error;
  const std::optional<std::size_t> n = csv.split(header, f, error);
  return n && *n >= 2 && f[0] == "num_prefill_tokens" && f[1] == "num_decode_tokens";
}

[[noreturn]] void bad_syntax(std::string_view text, const std::string& field,
                             std::string_view why) {
  throw ConfigError(
      field, fmt::format("{} in '{}'; expected one of: {}", why, text, length_distribution_help()));
}

std::int64_t int_arg(std::string_view arg, std::string_view text, const std::string& field) {
  const auto v = parse_int64(trim_blanks(arg));
  if (!v) bad_syntax(text, field, fmt::format("'{}' is not an integer", arg));
  return *v;
}

double double_arg(std::string_view arg, std::string_view text, const std::string& field) {
  const auto v = parse_finite_double(trim_blanks(arg));
  if (!v) bad_syntax(text, field, fmt::format("'{}' is not a finite number", arg));
  return *v;
}

// "a:b:c" -> {"a", "b", "c"}; exactly `n` parts or a syntax error.
template <std::size_t N>
std::array<std::string_view, N> colon_args(std::string_view args, std::string_view text,
                                           const std::string& field) {
  std::array<std::string_view, N> out;
  std::size_t count = 0;
  while (true) {
    const std::size_t colon = args.find(':');
    if (count < N) out[count] = args.substr(0, colon);
    ++count;
    if (colon == std::string_view::npos) break;
    args.remove_prefix(colon + 1);
  }
  if (count != N) bad_syntax(text, field, fmt::format("expected {} ':'-separated values", N));
  return out;
}

LognormalLength parse_lognormal(std::string_view args, std::string_view text,
                                const std::string& field) {
  std::optional<double> mu, sigma, mean, median;
  LognormalLength out;
  while (!args.empty()) {
    const std::size_t comma = args.find(',');
    const std::string_view item = trim_blanks(args.substr(0, comma));
    args = comma == std::string_view::npos ? std::string_view() : args.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) bad_syntax(text, field, "lognormal takes key=value pairs");
    const std::string_view key = trim_blanks(item.substr(0, eq));
    const std::string_view value = item.substr(eq + 1);
    if (key == "mu") {
      mu = double_arg(value, text, field);
    } else if (key == "sigma") {
      sigma = double_arg(value, text, field);
    } else if (key == "mean") {
      mean = double_arg(value, text, field);
    } else if (key == "median") {
      median = double_arg(value, text, field);
    } else if (key == "min") {
      out.min_tokens = int_arg(value, text, field);
    } else if (key == "max") {
      out.max_tokens = int_arg(value, text, field);
    } else {
      bad_syntax(
          text, field,
          fmt::format("unknown lognormal key '{}' (mu, sigma, mean, median, min, max)", key));
    }
  }
  if (mu && sigma && !mean && !median) {
    out.mu = *mu;
    out.sigma = *sigma;
  } else if (mean && median && !mu && !sigma) {
    if (!(*median > 0 && *mean >= *median)) {
      bad_syntax(text, field, "a lognormal needs mean >= median > 0");
    }
    const LognormalLength fit = lognormal_from_mean_median(*mean, *median);
    out.mu = fit.mu;
    out.sigma = fit.sigma;
  } else {
    bad_syntax(text, field, "lognormal needs either mu and sigma, or mean and median");
  }
  return out;
}

std::vector<std::int32_t> read_length_stats_csv(const std::string& path, LengthRole role) {
  LineReader lines(path);
  lines.next_csv_record();  // the header, checked by the caller
  std::vector<std::int32_t> out;
  std::array<std::string_view, 2> f;
  CsvRecordSplitter csv;
  std::string error;
  while (const auto line = lines.next_csv_record()) {
    const std::optional<std::size_t> n = csv.split(*line, f, error);  // else error says why
    if (n && *n < 2) {
      error = fmt::format("expected at least 2 columns ({},...)", kLengthStatsPrefix);
    } else if (n) {
      std::int64_t v = 0;
      const bool prompt = role == LengthRole::kPrompt;
      if (parse_token_count(prompt ? f[0] : f[1],
                            prompt ? "num_prefill_tokens" : "num_decode_tokens", v, error)) {
        out.push_back(static_cast<std::int32_t>(v));
        continue;
      }
    }
    throw ConfigError("trace", error, {path, static_cast<int>(lines.line_number())});
  }
  return out;
}

}  // namespace

LognormalLength lognormal_from_mean_median(double mean, double median) {
  VRAMSIM_CHECK(median > 0 && mean >= median, "lognormal needs mean >= median > 0, got {} and {}",
                mean, median);
  LognormalLength out;
  out.mu = std::log(median);
  out.sigma = std::sqrt(2.0 * std::log(mean / median));
  return out;
}

std::string_view length_distribution_help() {
  return "fixed:N, uniform:MIN:MAX, lognormal:mu=M,sigma=S[,min=A,max=B], "
         "lognormal:mean=X,median=Y[,min=A,max=B], zipf:EXPONENT:MIN:MAX, trace:PATH";
}

LengthDistribution parse_length_distribution(std::string_view text, const std::string& field) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) bad_syntax(text, field, "no ':' after the kind");
  const std::string_view kind = text.substr(0, colon);
  const std::string_view args = text.substr(colon + 1);
  if (kind == "fixed") return FixedLength{int_arg(args, text, field)};
  if (kind == "uniform") {
    const auto a = colon_args<2>(args, text, field);
    return UniformLength{int_arg(a[0], text, field), int_arg(a[1], text, field)};
  }
  if (kind == "lognormal") return parse_lognormal(args, text, field);
  if (kind == "zipf") {
    const auto a = colon_args<3>(args, text, field);
    return ZipfLength{double_arg(a[0], text, field), int_arg(a[1], text, field),
                      int_arg(a[2], text, field)};
  }
  if (kind == "trace") {
    if (args.empty()) bad_syntax(text, field, "trace: needs a path");
    return EmpiricalLength{std::string(args)};
  }
  bad_syntax(text, field, fmt::format("unknown kind '{}'", kind));
}

std::string to_string(const LengthDistribution& dist) {
  struct Visitor {
    std::string operator()(const FixedLength& d) const { return fmt::format("fixed:{}", d.tokens); }
    std::string operator()(const UniformLength& d) const {
      return fmt::format("uniform:{}:{}", d.min_tokens, d.max_tokens);
    }
    std::string operator()(const LognormalLength& d) const {
      std::string out = fmt::format("lognormal:mu={},sigma={}", d.mu, d.sigma);
      if (d.min_tokens != 1) out += fmt::format(",min={}", d.min_tokens);
      if (d.max_tokens != kMaxTraceTokens) out += fmt::format(",max={}", d.max_tokens);
      return out;
    }
    std::string operator()(const ZipfLength& d) const {
      return fmt::format("zipf:{}:{}:{}", d.exponent, d.min_tokens, d.max_tokens);
    }
    std::string operator()(const EmpiricalLength& d) const { return "trace:" + d.path; }
  };
  return std::visit(Visitor{}, dist);
}

void validate_length_distribution(const LengthDistribution& dist, ValidationReport& report,
                                  const std::string& field) {
  auto check_range = [&](std::int64_t lo, std::int64_t hi) {
    if (lo < 1 || hi > kMaxTraceTokens || lo > hi) {
      report.error(field, fmt::format("lengths must satisfy 1 <= min <= max <= {}, got [{}, {}]",
                                      kMaxTraceTokens, lo, hi));
    }
  };
  struct Visitor {
    ValidationReport& report;
    const std::string& field;
    decltype(check_range)& range;
    void operator()(const FixedLength& d) const { range(d.tokens, d.tokens); }
    void operator()(const UniformLength& d) const { range(d.min_tokens, d.max_tokens); }
    void operator()(const LognormalLength& d) const {
      range(d.min_tokens, d.max_tokens);
      if (!(d.sigma >= 0.0) || !std::isfinite(d.sigma) || !std::isfinite(d.mu)) {
        report.error(field, fmt::format("lognormal needs a finite mu and sigma >= 0, got mu={}, "
                                        "sigma={}",
                                        d.mu, d.sigma));
      }
    }
    void operator()(const ZipfLength& d) const {
      range(d.min_tokens, d.max_tokens);
      if (!(d.exponent > 0.0) || !std::isfinite(d.exponent)) {
        report.error(field, fmt::format("zipf exponent must be > 0, got {}", d.exponent));
      }
    }
    void operator()(const EmpiricalLength& d) const {
      if (d.path.empty()) report.error(field, "trace: needs a path");
    }
  };
  std::visit(Visitor{report, field, check_range}, dist);
}

std::vector<std::int32_t> read_trace_lengths(const std::string& path, LengthRole role) {
  {
    LineReader probe(path);
    const auto first = probe.next_csv_record();
    if (first && is_length_stats_header(*first)) {
      auto out = read_length_stats_csv(path, role);
      if (out.empty()) throw ConfigError("trace", "no data rows after the header", {path, 0});
      return out;
    }
  }
  auto source = open_trace_file(path, TraceFormat::kAuto, MalformedRowPolicy::kError);
  std::vector<std::int32_t> out;
  while (const auto r = source->next()) {
    out.push_back(static_cast<std::int32_t>(role == LengthRole::kPrompt ? r->prompt_tokens
                                                                        : r->output_tokens));
  }
  return out;
}

LengthSampler::LengthSampler(const LengthDistribution& dist, LengthRole role) : dist_(dist) {
  if (const auto* z = std::get_if<ZipfLength>(&dist_)) {
    zipf_ = std::make_unique<ZipfSampler>(z->exponent, z->min_tokens, z->max_tokens);
  } else if (const auto* e = std::get_if<EmpiricalLength>(&dist_)) {
    empirical_ = read_trace_lengths(e->path, role);
  }
}

std::int64_t LengthSampler::sample(RngStream& rng) const {
  struct Visitor {
    const LengthSampler& self;
    RngStream& rng;
    std::int64_t operator()(const FixedLength& d) const { return d.tokens; }
    std::int64_t operator()(const UniformLength& d) const {
      return rng.uniform_int(d.min_tokens, d.max_tokens);
    }
    std::int64_t operator()(const LognormalLength& d) const {
      const double x = std::exp(d.mu + d.sigma * rng.normal());
      // Clamp in double first: exp may exceed the int64 range.
      const double clamped =
          std::clamp(x, static_cast<double>(d.min_tokens), static_cast<double>(d.max_tokens));
      return std::clamp<std::int64_t>(std::llround(clamped), d.min_tokens, d.max_tokens);
    }
    std::int64_t operator()(const ZipfLength&) const { return self.zipf_->sample(rng); }
    std::int64_t operator()(const EmpiricalLength&) const {
      const auto n = static_cast<std::int64_t>(self.empirical_.size());
      return self.empirical_[static_cast<std::size_t>(rng.uniform_int(0, n - 1))];
    }
  };
  return std::visit(Visitor{*this, rng}, dist_);
}

}  // namespace vramsim::serving
