// `vramsim compare serve|train`'s answers as records, callable without the command line: the
// JSON of each (issue 6's fields) and the results file of --out (analysis/SCHEMA.md, "vramsim
// compare --out"). The terminal tables are sim/cli/compare_serve and sim/cli/compare_train.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "sim/io/typed_columns.hpp"
#include "sim/run/compare_serve_run.hpp"
#include "sim/run/compare_train_run.hpp"

namespace vramsim::io {
class ResultsWriter;
}

namespace vramsim::run {

/// One serving option's numbers as typed fields: name, num_gpus, feasible; at the user's rate
/// its serve_summary's throughput, goodput and latency fields, the KV cache's tokens and
/// concurrency per replica (one TP group or pipeline), preemptions; its capacity with the
/// bracket, the throughput, goodput and capacity ratios against one GPU and the scaling
/// efficiency; at the capacity the SLO-meeting output tokens/s, the bottleneck and the step-time
/// split (zeros and "" when it did not run). compare_serve_json and /compare/options render it.
io::TypedRecord option_record(const ServeCandidate& o);

/// mode "serve", the verdict, the best option, the link, the SLOs, the capacity search's
/// precision, the price and its source when there is one, then the options (a feasible one as
/// option_record, with "cost_per_million_slo_output_tokens_usd" when priced and the tie's p99s
/// when within noise of the best; an infeasible one with its reason instead of numbers).
nlohmann::ordered_json compare_serve_json(const CompareServeAnswer& a);

/// mode "train", the verdict, then the options (a valid one with its fit, peaks, step time,
/// tokens/s, MFU, speed-up and scaling efficiency, and "cost_per_million_tokens_usd" when a
/// price is given; an invalid one with its reason).
nlohmann::ordered_json compare_train_json(const CompareTrainAnswer& a);

/// The run metadata (inputs: the answer's JSON), /compare/options (one row an option) and the
/// mode and verdict as attributes of /compare. Each calls w.finish().
void write_compare_serve(io::ResultsWriter& w, const CompareServeAnswer& a,
                         const std::string& command_line);
void write_compare_train(io::ResultsWriter& w, const CompareTrainAnswer& a,
                         const std::string& command_line);

}  // namespace vramsim::run
