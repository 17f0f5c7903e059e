#include "sim/serving/traces/trace_transforms.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/serving/traces/trace_parsing.hpp"

namespace vramsim::serving {

bool TraceTransforms::is_identity() const {
  return time_scale == 1.0 && !window_start && !window_end && !max_requests && !max_prompt_tokens &&
         !max_output_tokens && !max_total_tokens;
}

void TraceTransforms::validate(ValidationReport& report, const std::string& at) const {
  const std::string p = at.empty() ? std::string() : at + ".";
  if (!(time_scale > 0.0 && std::isfinite(time_scale))) {
    report.error(p + "time_scale", fmt::format("must be > 0 (a replay speed), got {}", time_scale));
  }
  if (window_start && *window_start < Duration::zero()) {
    report.error(p + "window_start",
                 fmt::format("must be >= 0 s, got {} s", window_start->seconds()));
  }
  if (window_end && *window_end <= window_start.value_or(Duration::zero())) {
    report.error(p + "window_end", fmt::format("must be after window_start ({} s), got {} s",
                                               window_start.value_or(Duration::zero()).seconds(),
                                               window_end->seconds()));
  }
  auto positive = [&](const std::optional<std::int64_t>& v, const char* key) {
    if (v && *v <= 0) report.error(p + key, fmt::format("must be > 0, got {}", *v));
  };
  positive(max_requests, "max_requests");
  positive(max_prompt_tokens, "max_prompt_tokens");
  positive(max_output_tokens, "max_output_tokens");
  positive(max_total_tokens, "max_total_tokens");
}

TransformedTrace::TransformedTrace(std::unique_ptr<TraceSource> source,
                                   const TraceTransforms& transforms)
    : source_(std::move(source)), t_(transforms) {
  VRAMSIM_CHECK(source_ != nullptr, "TransformedTrace needs a source");
  ValidationReport report;
  t_.validate(report, "transforms");
  VRAMSIM_CHECK(report.ok(), "TransformedTrace needs validated transforms: {}", report.format());
}

std::optional<TraceRecord> TransformedTrace::next() {
  if (ended_ || (t_.max_requests && num_emitted_ >= *t_.max_requests)) return std::nullopt;
  while (auto record = source_->next()) {
    const Duration at = record->arrival - SimTime::zero();
    if (t_.window_end && at >= *t_.window_end) break;
    if (t_.window_start && at < *t_.window_start) {
      ++rows_filtered_;
      continue;
    }
    const Duration rebased = at - t_.window_start.value_or(Duration::zero());

    bool capped = false;
    if (t_.max_prompt_tokens && record->prompt_tokens > *t_.max_prompt_tokens) {
      record->prompt_tokens = *t_.max_prompt_tokens;
      if (record->hash_block_tokens > 0) {
        const auto keep =
            static_cast<std::size_t>(ceil_div(record->prompt_tokens, record->hash_block_tokens));
        if (record->hash_ids.size() > keep) record->hash_ids.resize(keep);
      }
      capped = true;
    }
    if (t_.max_output_tokens && record->output_tokens > *t_.max_output_tokens) {
      record->output_tokens = *t_.max_output_tokens;
      capped = true;
    }
    if (t_.max_total_tokens &&
        record->prompt_tokens + record->output_tokens > *t_.max_total_tokens) {
      ++rows_filtered_;
      continue;
    }
    if (capped) ++rows_capped_;

    const double scaled_ns = static_cast<double>(rebased.nanoseconds()) / t_.time_scale;
    if (!(scaled_ns <= static_cast<double>(kMaxArrivalNs))) {
      throw ConfigError(
          "workload.time_scale",
          fmt::format("--time-scale {} puts the arrival of {} at {:.3g} s: past the simulator's "
                      "clock ({:g} s of arrivals); use a larger time scale or a window",
                      t_.time_scale,
                      record->line > 0 ? fmt::format("line {}", record->line)
                                       : fmt::format("request {}", num_emitted_ + 1),
                      scaled_ns * 1e-9, kMaxArrivalSeconds));
    }
    const std::int64_t ns =
        t_.time_scale == 1.0 ? rebased.nanoseconds() : std::llround(scaled_ns);
    record->arrival = SimTime::from_nanoseconds(ns);
    ++num_emitted_;
    return record;
  }
  ended_ = true;
  return std::nullopt;
}

std::string TransformedTrace::describe() const {
  std::string out = source_->describe();
  if (t_.window_start || t_.window_end) {
    out += fmt::format(
        ", window [{} s, {})", t_.window_start.value_or(Duration::zero()).seconds(),
        t_.window_end ? fmt::format("{} s", t_.window_end->seconds()) : std::string("end"));
  }
  if (t_.max_prompt_tokens) out += fmt::format(", prompt <= {}", *t_.max_prompt_tokens);
  if (t_.max_output_tokens) out += fmt::format(", output <= {}", *t_.max_output_tokens);
  if (t_.max_total_tokens) out += fmt::format(", drop prompt+output > {}", *t_.max_total_tokens);
  if (t_.time_scale != 1.0) out += fmt::format(", {}x speed", t_.time_scale);
  if (t_.max_requests) out += fmt::format(", first {} requests", *t_.max_requests);
  return out;
}

TraceStats TransformedTrace::stats() const {
  TraceStats s = source_->stats();
  s.rows_filtered += rows_filtered_;
  s.rows_capped += rows_capped_;
  return s;
}

std::unique_ptr<TraceSource> apply_transforms(std::unique_ptr<TraceSource> source,
                                              const TraceTransforms& transforms) {
  if (transforms.is_identity()) return source;
  return std::make_unique<TransformedTrace>(std::move(source), transforms);
}

}  // namespace vramsim::serving
