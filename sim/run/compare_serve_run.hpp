// The run layer of `vramsim compare serve`: one GPU against N for the same traffic (tensor
// parallel, pipeline parallel, N independent replicas behind the router, and, memory permitting,
// a bigger batch on one GPU), and a verdict that follows from the numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/run/serve_run.hpp"

namespace vramsim::run {

struct CompareServe {
  ServeConfig base;  // its TP, PP and replicas are replaced by each candidate's
  int num_gpus = 2;  // compare.num_gpus: N, in [2, 64]
  std::optional<double> price_per_gpu_hour;  // compare.price_per_gpu_hour: USD, > 0
};

/// One configuration tried.
struct ServeCandidate {
  std::string name;   // "1 GPU", "TP=2", "PP=2", "2 replicas", "1 GPU, 2x batch"
  int num_gpus = 1;
  bool feasible = false;
  std::string reason;  // why not, when infeasible
  ServeAnswer answer;  // valid when feasible
  double speedup = 0.0;             // goodput against the one-GPU option (0 when undefined)
  double scaling_efficiency = 0.0;  // speedup / num_gpus
};

struct CompareServeAnswer {
  std::vector<ServeCandidate> options;  // [0] is the one-GPU baseline
  std::string verdict;
  std::string link;                  // "NVLink", "PCIe" between the GPUs
  std::optional<double> price_per_gpu_hour;
  serving::SloSpec slo;              // the objectives goodput was measured against
  bool default_slo = false;          // the user gave none: defaults were used
};

/// Runs every candidate on the same workload and seed. A candidate the model does not allow
/// (TP that does not divide the heads) or that does not fit is an answer with its reason.
/// Throws ConfigError for bad input ("compare.num_gpus", "compare.price_per_gpu_hour").
CompareServeAnswer compare_serve(const CompareServe& q);

/// Requests within the SLOs per second of simulated time, and output tokens per second.
double goodput_requests_per_s(const ServeAnswer& a);
double output_tokens_per_s(const ServeAnswer& a);

/// The default objectives when none are given: p99-style per-request limits of 2 s to the first
/// token and 100 ms per output token (the interactive-chat SLOs used by DistServe, Zhong et al.
/// OSDI 2024, and Sarathi-Serve's evaluation, order of magnitude).
serving::SloSpec default_serving_slo();

}  // namespace vramsim::run
