// The run layer of `vramsim compare serve`: does a second GPU help this traffic? One GPU against
// N (tensor parallel, pipeline parallel, N independent replicas behind the router, and one GPU
// with N times vLLM's batch limits), each option measured three ways:
//
//   at the user's rate   one replay of the traffic as given: throughput, goodput, latencies
//   capacity             the largest arrival rate whose p99 TTFT / TPOT / E2E meet the SLOs,
//                        found by `capacity serve`'s search (run::capacity_serve), with its
//                        bracket [low, high]: low meets, high misses
//   why                  one more replay at the capacity: what binds there (KV capacity, the
//                        scheduler's limits, or the step time's compute, HBM bandwidth,
//                        communication or overhead) with the step-time split that shows it,
//                        and the cost per million SLO-meeting output tokens at that rate
//
// Noise: a capacity is known only to its bracket, (high - low) / high <= the search's precision
// (default 5 %). Two options are within noise of each other when their brackets overlap; the
// verdict then says so and ranks them by p99 TTFT, then p99 TPOT, at the lower of their
// capacities (both meet the SLOs there). Every replay uses the same seed and workload shape, so
// the options see the same requests; the spread over seeds is not part of this noise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <functional>
#include <string>

#include "sim/run/capacity_serve_run.hpp"
#include "sim/run/serve_run.hpp"

namespace vramsim::run {

struct CompareServe {
  ServeConfig base;  // its TP, PP and replicas are replaced by each candidate's
  int num_gpus = 2;  // compare.num_gpus: N, in [2, 64]
  /// compare.price_per_gpu_hour: USD, > 0. When absent, topologies/prices.toml's row for the
  /// GPU is used (and no cost is given when it has none).
  std::optional<double> price_per_gpu_hour;
  double precision = 0.05;  // compare.precision: each capacity search's bracket, in (0, 1)
  int max_runs = 24;        // compare.max_runs: simulations per capacity search, >= 2
  /// compare.kv_tier: the base's KV offload tier (--kv-offloading-size, and its disk tier)
  /// becomes an option of its own, "1 GPU + KV tier", and every GPU option runs without it:
  /// "does a host KV tier beat a second GPU?". Needs a tier in the base. Off: every option
  /// runs with the base's tier, as configured.
  bool kv_tier_option = false;
  /// Called after each simulation of an option's capacity search with the option's name (the
  /// CLI's progress line); it cannot change the answer. Empty: not called.
  std::function<void(const std::string& option, const CapacityRun& run)> on_run = {};
};

/// The step-time split of every step of one replay (all replicas), in seconds of step time.
/// Prefill/decode apportions each step by the time its prefill part and its decode part take
/// alone; compute/memory/communication/overhead sums the step model's parts, a step's matmuls
/// counted as HBM-bandwidth-bound when they take at most 1.1x a one-token step's (the weights
/// read once), else compute-bound; prefill attention counts as compute, decode attention (the
/// KV read) as memory.
struct StepSplit {
  std::int64_t num_steps = 0;
  std::int64_t num_prefill_tokens = 0;
  std::int64_t num_decode_tokens = 0;
  double busy_s = 0.0;  // sum of step times
  double prefill_s = 0.0, decode_s = 0.0;
  double compute_s = 0.0, memory_s = 0.0, communication_s = 0.0, overhead_s = 0.0;
};

/// What binds an option at its capacity.
struct Bottleneck {
  /// "KV capacity", "max_num_seqs", "max_num_batched_tokens", "compute", "HBM bandwidth",
  /// "communication", "step overhead"; "" when the option did not run.
  std::string kind;
  std::string detail;  // one sentence with the numbers that show it
  /// The objective the first rate above capacity misses ("TTFT p99 2.412 s > 2 s"); "" when no
  /// failing rate was found.
  std::string missed_slo;
  StepSplit split;
  /// Shares of the steps (all replicas) that started with requests waiting and, among them,
  /// at the max_num_seqs limit, at the token budget, or with the KV cache >= 95 % full.
  double queued_share = 0.0;
  double seq_limited_share = 0.0;
  double token_limited_share = 0.0;
  double kv_full_share = 0.0;
  std::int64_t num_preemptions = 0;
  double kv_mean_utilization = 0.0;
};

/// One configuration tried.
struct ServeCandidate {
  std::string name;   // "1 GPU", "TP=2", "PP=2", "2 replicas", "1 GPU, 2x batch",
                      // "1 GPU + KV tier" (CompareServe::kv_tier_option)
  bool kv_tier_option = false;  // the "1 GPU + KV tier" option
  int num_gpus = 1;
  bool feasible = false;
  std::string reason;  // why not, when infeasible
  ServeAnswer answer;  // at the user's rate; valid when feasible
  /// The capacity search (valid when feasible): max_rate_per_s is the capacity (max_concurrency
  /// in a closed loop), 0 when the SLOs are not met at any load; bracket_high (concurrency_high)
  /// 0 when no load below the search cap misses them.
  CapacityServeAnswer capacity;
  ServeAnswer at_capacity;  // the replay at the capacity (at bracket_high when it is 0)
  Bottleneck why;
  /// Against the one-GPU option; 0 when undefined (it does not fit, or its value is 0).
  double throughput_ratio = 0.0;  // output tokens/s at the user's rate
  double goodput_ratio = 0.0;     // requests/s within the SLOs at the user's rate
  double capacity_ratio = 0.0;
  double scaling_efficiency = 0.0;  // capacity_ratio / num_gpus
  /// Output tokens/s of the requests within the SLOs at the capacity, and their cost.
  double slo_output_tokens_per_s = 0.0;
  std::optional<double> cost_per_million_slo_output_tokens_usd;
  /// p99s at the common rate of a noise tie with the best option (empty when not tied).
  std::optional<double> tie_rate_per_s;
  std::optional<Duration> tie_ttft_p99, tie_tpot_p99;
};

struct CompareServeAnswer {
  std::vector<ServeCandidate> options;  // [0] is the one-GPU baseline
  std::string verdict;
  std::string link;                  // "NVLink", "PCIe" between the GPUs
  std::optional<double> price_per_gpu_hour;
  std::string price_source;          // the price table's source, or "--gpu-price-per-hour"
  serving::SloSpec slo;              // the objectives goodput and capacity are measured against
  bool default_slo = false;          // the user gave none: defaults were used
  double precision = 0.0;            // of every capacity search: the noise of the verdict
  int best = -1;                     // the option the verdict picks; -1 when none ran
  /// What the capacities count: requests/s, or (a closed loop, clients sending every request
  /// at once) the most concurrent clients within the SLOs.
  CapacityAxis axis = CapacityAxis::kRate;
};

/// Runs every candidate on the same workload and seed: at the user's rate, its capacity and
/// its bottleneck there. A candidate the model does not allow (TP that does not divide the
/// heads) or that does not fit is an answer with its reason. Throws ConfigError for bad input
/// ("compare.num_gpus", "compare.price_per_gpu_hour", "compare.precision", "compare.max_runs",
/// "compare.kv_tier" without a tier in the base, a bad topologies/prices.toml, and what
/// capacity_serve refuses). In a closed loop every
/// capacity is a client count (CompareServeAnswer::axis).
CompareServeAnswer compare_serve(const CompareServe& q);

/// Requests within the SLOs per second of simulated time, and output tokens per second.
double goodput_requests_per_s(const ServeAnswer& a);
double output_tokens_per_s(const ServeAnswer& a);

/// Whether two capacity brackets (of the same axis) overlap: the two capacities are within the
/// searches' noise.
/// A bracket_high of 0 (no failing rate found) stands for no upper bound.
bool within_noise(const CapacityServeAnswer& a, const CapacityServeAnswer& b);

/// Whether any option that ran has a KV offload tier (the output then shows each option's).
bool any_kv_tier(const CompareServeAnswer& c);

/// One option's KV offload tier as a person reads it: "none", "200.00 GiB host (1234 blocks)
/// per replica", with " + 1.00 TiB disk" behind it.
std::string kv_tier_text(const ServeCandidate& o);

/// The default objectives when none are given: p99-style per-request limits of 2 s to the first
/// token and 100 ms per output token (the interactive-chat SLOs used by DistServe, Zhong et al.
/// OSDI 2024, and Sarathi-Serve's evaluation, order of magnitude).
serving::SloSpec default_serving_slo();

}  // namespace vramsim::run
