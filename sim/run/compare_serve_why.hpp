// compare serve's "why": one replay of a prepared configuration with a step listener and an
// observer that record what binds (sim/run/compare_serve_run.hpp, Bottleneck and StepSplit),
// and the classification of it.
#pragma once

#include "sim/run/compare_serve_run.hpp"

namespace vramsim::run::detail {

struct WhyReplay {
  Bottleneck why;                       // split, shares and counts; kind and detail filled
  double slo_output_tokens_per_s = 0.0;  // output tokens of the requests within `slo`, per s
};

/// Simulates the feasible prepared `a` (every step sampled), recording the step split, the
/// scheduler's and the KV cache's limits at each step and the output tokens of the requests
/// meeting `slo`, then names what binds:
/// Requests wait at a share of the steps; when it is >= 10 %, among those steps:
///   KV capacity             >= 25 % start with the KV cache >= 95 % full (or, whatever the
///                           share, preemptions for more than 1 % of the requests)
///   max_num_seqs            >= 25 % start at that limit
///   max_num_batched_tokens  >= 50 % start with that token budget full
///   else the largest part of the step time: compute, HBM bandwidth, communication, step
///   overhead. NOTE: the thresholds are our judgement, stated so that a reader can apply them.
WhyReplay replay_why(ServeAnswer& a, const serving::SloSpec& slo);

/// The SLOs the p99s miss, as "TTFT p99 0.31 s > 0.2 s, E2E ..."; "" when none is missed.
std::string missed_slo_text(Duration ttft_p99, Duration tpot_p99, Duration e2e_p99,
                            const serving::SloSpec& slo);

}  // namespace vramsim::run::detail
