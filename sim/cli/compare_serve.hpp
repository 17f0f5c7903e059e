// `vramsim compare serve`: its flags, resolved into a run::CompareServe (the comparison itself is
// sim/run/compare_serve_run, its JSON and results file sim/run/compare_results), and the
// answer as a table.
#pragma once

#include <optional>
#include <string>

#include "sim/cli/serve_flags.hpp"
#include "sim/run/compare_serve_run.hpp"

namespace vramsim::cli {

struct CompareServeFlags {
  ServeFlags serve;
  int num_gpus = 2;
  std::optional<double> price_per_gpu_hour;  // USD
  double precision = 0.05;
  int max_runs = 24;
  bool kv_tier_option = false;  // --compare-kv-tier
};

using run::CompareServeAnswer;
using run::ServeCandidate;

/// The flags resolved and run::compare_serve run, problems named by their flags. The serving
/// flags that compare sets itself (--tp, --pp, --replicas, and their vLLM spellings) are refused
/// with a ConfigError naming the flag and why.
CompareServeAnswer compare_serve(const CompareServeFlags& f);
std::string compare_serve_table(const CompareServeAnswer& a);

}  // namespace vramsim::cli
