// `vramsim compare serve`: one GPU against N for the same traffic: tensor parallel, pipeline
// parallel, N independent replicas behind the router, and (memory permitting) a bigger batch on
// one GPU; a verdict that follows from the numbers.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "sim/cli/serve_config.hpp"
#include "sim/cli/serve_report.hpp"

namespace vramsim::cli {

struct CompareServeFlags {
  ServeFlags serve;
  int num_gpus = 2;
  std::optional<double> price_per_gpu_hour;  // USD
};

/// One configuration tried.
struct ServeOption {
  std::string name;   // "1 GPU", "TP=2", "PP=2", "2 replicas", "1 GPU, 2x batch"
  int num_gpus = 1;
  bool feasible = false;
  std::string reason;  // why not, when infeasible
  ServeAnswer answer;  // valid when feasible
  double speedup = 0.0;             // goodput against the one-GPU option (0 when undefined)
  double scaling_efficiency = 0.0;  // speedup / num_gpus
};

struct CompareServeAnswer {
  std::vector<ServeOption> options;  // [0] is the one-GPU baseline
  std::string verdict;
  std::string link;                  // "NVLink", "PCIe" between the GPUs
  std::optional<double> price_per_gpu_hour;
  serving::SloSpec slo;              // the objectives goodput was measured against
  bool default_slo = false;          // the user gave none: defaults were used
};

/// Runs every option on the same workload and seed. Throws ConfigError for bad input.
CompareServeAnswer compare_serve(const CompareServeFlags& f);

/// One option's numbers as typed fields: name, num_gpus, feasible, then its serve_summary's
/// throughput, goodput and latency fields, KV tokens and concurrency, preemptions, speedup and
/// scaling efficiency (zeros when it did not run). compare_serve_json and /compare/options
/// render it.
io::TypedRecord option_record(const ServeOption& o);

/// The options (a feasible one as option_record, with its cost when a price is given; an
/// infeasible one with its reason instead of numbers) and the verdict.
nlohmann::ordered_json compare_serve_json(const CompareServeAnswer& a);
std::string compare_serve_table(const CompareServeAnswer& a);

/// The default objectives when none are given: p99-style per-request limits of 2 s to the first
/// token and 100 ms per output token (the interactive-chat SLOs used by DistServe, Zhong et al.
/// OSDI 2024, and Sarathi-Serve's evaluation, order of magnitude).
serving::SloSpec default_serving_slo();

}  // namespace vramsim::cli
