// A training plan search (plan_train_run.hpp) as records: the JSON of `vramsim plan train
// --format json`, the results file of `--out` (analysis/SCHEMA.md, "vramsim plan train --out"),
// and the record of one simulated plan that is journaled, sent between MPI ranks and read back
// on --resume. The terminal table is sim/cli/plan_train_report.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "sim/io/typed_columns.hpp"
#include "sim/run/plan_train_run.hpp"
#include "sim/run/sweep_point.hpp"

namespace vramsim::io {
class ResultsWriter;
}

namespace vramsim::run {

/// What identifies a search's base: every resolved setting's value (not where it came from), as
/// a short hex digest. A journaled plan is reused only under the same digest.
std::string plan_search_fingerprint(const TrainOptions& o);

/// A simulated plan as a sweep record: index, status ok (fits) or infeasible, the digest and the
/// plan's flags as its scenario text, the outcome (exact: nanoseconds, bytes) as its result.
PointRecord plan_row_record(const PlanTrainRow& row, const std::string& fingerprint);

/// Fills `row` (the plan at the record's index, its settings set) with the record's outcome.
/// False, leaving `row` as it was, when the record is not of this search (another digest or
/// other flags) or its result is not of the right shape.
bool plan_row_from_record(const PointRecord& rec, const std::string& fingerprint,
                          PlanTrainRow& row);

/// One plan's fields, typed: plan_index, strategy, tp, pp, dp, micro_batch, num_micro_batches,
/// checkpointing, offload_optimizer, status, fits, binding_stage, peak_bytes,
/// peak_allocated_bytes, total_memory_bytes, headroom_bytes, step_time_s, tokens_per_s, mfu,
/// flags, reason.
io::TypedRecord plan_row_typed(const PlanTrainRow& row);

/// The one-line answer: the fastest plan that fits, or why none does.
std::string plan_train_message(const PlanTrainAnswer& a);

/// The search (its base, space and counts), the fastest plans, the Pareto front, the closest
/// plan when none fits, and the message.
nlohmann::ordered_json plan_train_json(const PlanTrainAnswer& a);

/// The results file: metadata and /plan_train/plans (every plan of the product, with
/// fastest_rank and pareto columns), the search and its counts as attributes. Calls finish().
void write_plan_train_results(io::ResultsWriter& w, const PlanTrainAnswer& a,
                              const PlanTrainRequest& q);

}  // namespace vramsim::run
