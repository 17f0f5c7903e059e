// What a serving run measures, accumulated in memory independent of trace length: latency
// histograms (latency_histogram.hpp), token and request counters, and time integrals for
// Little's law and KV utilisation. Per-request rows and time series go to a ServingObserver
// instead (streamed to the results file), never kept here.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/core/units.hpp"
#include "sim/serving/latency_histogram.hpp"
#include "sim/serving/request.hpp"

namespace vramsim::serving {

/// Service-level objectives for goodput: a finished request counts when it meets every one set.
struct SloSpec {
  std::optional<Duration> ttft;
  std::optional<Duration> tpot;
  std::optional<Duration> e2e;
  bool any() const { return ttft || tpot || e2e; }
};

class ServingMetrics {
 public:
  explicit ServingMetrics(SloSpec slo) : slo_(slo) {}

  /// `num_tokens` new tokens of `r` at `now`, out together (one step; more than one under
  /// speculative decoding); r.num_generated already counts them. The inter-token gap is
  /// recorded once per step, as a streaming client sees one chunk.
  void on_token(Request& r, SimTime now, std::int64_t num_tokens = 1) {
    if (r.num_generated == 1) {
      r.first_token = now;
    } else {
      // Most tokens of a step share one gap (their previous token came from the previous
      // step): equal gaps are counted up and added to the histogram together.
      const Duration gap = now - r.last_token;
      if (gap == itl_run_gap_) {
        ++itl_run_count_;
      } else {
        flush_itl();
        itl_run_gap_ = gap;
        itl_run_count_ = 1;
      }
    }
    r.last_token = now;
    num_output_tokens += num_tokens;
  }
  /// Adds pending inter-token gaps to `itl`; call before reading it.
  void flush_itl() {
    if (itl_run_count_ > 0) itl.add(itl_run_gap_, itl_run_count_);
    itl_run_count_ = 0;
  }
  /// `r` finished at `now` (r.finish set by the caller).
  void on_finish(const Request& r);
  void on_arrival(const Request& r);
  void on_reject() { ++num_rejected; }

  /// Whether advance(now, ...) has anything to add (time has passed since the first arrival).
  bool advances_at(SimTime now) const { return started && now > last_advance; }
  /// Advances the time integrals to `now` with the state that held since the last call.
  void advance(SimTime now, std::int64_t in_system, std::int64_t kv_used_blocks);

  LatencyHistogram ttft;
  LatencyHistogram tpot;     // (finish - first token) / (output tokens - 1), outputs > 1
  LatencyHistogram itl;      // every gap between consecutive tokens of a request
  LatencyHistogram e2e;
  LatencyHistogram queueing; // first scheduled - arrival

  std::int64_t num_arrived = 0;
  std::int64_t num_finished = 0;
  std::int64_t num_rejected = 0;
  std::int64_t num_good = 0;  // finished within every SLO set
  std::int64_t num_good_output_tokens = 0;  // output tokens of the num_good requests
  std::int64_t num_prompt_tokens = 0;  // of finished requests
  std::int64_t num_output_tokens = 0;  // generated, all requests
  std::int64_t num_cached_prefix_tokens = 0;  // of finished requests, at first admission
  std::int64_t num_preemptions = 0;           // of finished requests
  /// Speculative decoding: decode steps of sequences (one per sequence and step) and the
  /// tokens they emitted; their ratio is the measured mean acceptance length.
  std::int64_t num_speculative_decodes = 0;
  std::int64_t num_speculative_tokens = 0;

  bool started = false;
  SimTime first_arrival;
  SimTime last_arrival;
  SimTime last_finish;
  SimTime last_advance;
  long double in_system_ns = 0.0L;  // integral of requests in the system over time (ns)
  long double kv_used_ns = 0.0L;    // integral of KV blocks in use, all replicas (block * ns)

 private:
  SloSpec slo_;
  Duration itl_run_gap_ = Duration::from_nanoseconds(-1);
  std::int64_t itl_run_count_ = 0;
};

}  // namespace vramsim::serving
