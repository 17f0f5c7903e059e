// A serving deployment search (plan_serve_run.hpp) as records: the JSON of `vramsim plan serve
// --format json`, the results file of `--out` (analysis/SCHEMA.md, "vramsim plan serve --out"),
// and the record of one evaluated configuration that is journaled, sent between MPI ranks and
// read back on --resume. The terminal table is sim/cli/plan_serve_report.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "sim/io/typed_columns.hpp"
#include "sim/run/plan_serve_run.hpp"
#include "sim/run/sweep_point.hpp"

namespace vramsim::io {
class ResultsWriter;
}

namespace vramsim::run {

/// What identifies a search's base: every resolved serving setting's value, the objectives,
/// whether replays stop early and what the search reads from its node sheets (`node_inputs`,
/// node_host_memory_inputs: a sheet's host memory or GPU count can change under the same
/// hardware.topology), as a short hex digest. A journaled row is reused only under it.
std::string plan_serve_fingerprint(const ServeOptions& o, const serving::SloSpec& slo,
                                   bool early_stop, std::string_view node_inputs);

/// An evaluated configuration as a sweep record: index, status ok (meets) or infeasible, the
/// digest and the configuration's flags as its scenario text, the outcome as its result.
PointRecord serve_plan_row_record(const PlanServeRow& row, const std::string& fingerprint);

/// Fills `row` (the configuration at the record's index, its settings set) with the record's
/// outcome. False, leaving `row` as it was, when the record is not of this search or is not of
/// the right shape.
bool serve_plan_row_from_record(const PointRecord& rec, const std::string& fingerprint,
                                PlanServeRow& row);

/// One configuration's fields, typed (analysis/SCHEMA.md, /plan_serve/configs). With `pools`
/// (a search with --search-mixed-pools) each pool's GPU, TP, GPU count and price follow
/// num_gpus: prefill_gpu, prefill_tp, prefill_num_gpus, prefill_usd_per_gpu_hour, decode_gpu,
/// decode_tp, decode_num_gpus, decode_usd_per_gpu_hour ("" / 0 / NaN for an aggregated row);
/// without, the columns are those of a search before the option existed. With `tiers` (a
/// search with a KV offload tier, PlanServeSpace::has_kv_tiers) the tier's columns follow
/// max_num_batched_tokens: kv_offloading_size_bytes, kv_offloading_disk_size_bytes,
/// host_memory_bytes, disk_bytes, gpu_prefix_hit_rate, cpu_prefix_hit_rate,
/// disk_prefix_hit_rate.
io::TypedRecord serve_plan_row_typed(const PlanServeRow& row, bool pools = false,
                                     bool tiers = false);

/// The one-line answer: the cheapest configuration meeting the SLOs, or which came closest.
std::string plan_serve_message(const PlanServeAnswer& a);

/// The search, the counts, the cheapest configurations, the Pareto front, the closest when none
/// meets (each listed row with its capacity and why), and the message.
nlohmann::ordered_json plan_serve_json(const PlanServeAnswer& a);

/// The results file: metadata and /plan_serve/configs (every configuration, with cheapest_rank
/// and pareto columns) and /plan_serve/reported (capacity and why of the reported rows). Calls
/// finish().
void write_plan_serve_results(io::ResultsWriter& w, const PlanServeAnswer& a,
                              const PlanServeRequest& q);

}  // namespace vramsim::run
