// `vramsim compare serve`: one GPU against N for the same traffic: tensor parallel, pipeline
// parallel, N independent replicas behind the router, and (memory permitting) a bigger batch on
// one GPU; a verdict that follows from the numbers.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "sim/cli/serve_flags.hpp"
#include "sim/cli/serve_report.hpp"
#include "sim/run/compare_serve_run.hpp"

namespace vramsim::cli {

struct CompareServeFlags {
  ServeFlags serve;
  int num_gpus = 2;
  std::optional<double> price_per_gpu_hour;  // USD
};

using run::CompareServeAnswer;
using run::ServeCandidate;

/// The flags resolved and run::compare_serve run, problems named by their flags.
CompareServeAnswer compare_serve(const CompareServeFlags& f);

/// One option's numbers as typed fields: name, num_gpus, feasible, then its serve_summary's
/// throughput, goodput and latency fields, KV tokens and concurrency, preemptions, speedup and
/// scaling efficiency (zeros when it did not run). compare_serve_json and /compare/options
/// render it.
io::TypedRecord option_record(const ServeCandidate& o);

/// The options (a feasible one as option_record, with its cost when a price is given; an
/// infeasible one with its reason instead of numbers) and the verdict.
nlohmann::ordered_json compare_serve_json(const CompareServeAnswer& a);
std::string compare_serve_table(const CompareServeAnswer& a);

}  // namespace vramsim::cli
