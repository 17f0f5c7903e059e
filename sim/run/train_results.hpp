// A training simulation as records, callable without the command line: the JSON object of
// `vramsim train --format json` (DESIGN.md's field names), the one of
// `--find-max-micro-batch`, and the results file of `train --out` (analysis/SCHEMA.md, section
// "vramsim train"). The terminal tables are sim/cli/train_report.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/run/train_options.hpp"
#include "sim/run/train_run.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::run {

/// Where a training setup's compute costs come from: "datasheet roofline", or the calibration
/// profile's path ("(in memory)" for a profile not read from a file).
std::string cost_source(const training::TrainingSetup& s);

/// cost_source with the run's estimates counted by basis when a calibration profile is loaded:
/// "<profile> (measured 3, interpolated 40, scaled 12, datasheet 5)".
std::string cost_summary(const training::TrainingSetup& s, const training::TrainingResult& r);

/// The resolved plan as JSON (model, gpu, parallelism, precision, batch): the head of
/// train_json and the `inputs` of the training search files.
nlohmann::ordered_json train_plan_json(const training::TrainingSetup& s);

/// train_plan_json, the binding device's row flat (peak_allocated_bytes, peak_reserved_bytes,
/// model_state_bytes, activation_bytes, step_time_s, fits, ...), throughput and MFU, the cost
/// estimates by basis, then every pipeline stage's row under "devices". `r` must hold at least
/// one device.
nlohmann::ordered_json train_json(const training::TrainingSetup& setup,
                                  const training::TrainingResult& r);

/// Host memory of the model state a node keeps (--offload-optimizer, --paged-optimizer): the
/// largest sum over the GPUs of one node (rank order of training_plan.hpp) of their stages'
/// host_state; 0 when nothing is on the host.
Bytes host_bytes_per_node(const training::TrainingSetup& s, const training::TrainingResult& r);
/// What binds the offloaded optimizer step of `st`: "pcie", "cpu_adam" or "nvme" (the longest).
std::string offload_bound_by(const training::StagePlan& st);

/// The fixes of a plan that does not fit (train_fixes), one object each: change, why, fits,
/// peak_bytes, capacity_bytes, step_time_s, tokens_per_s.
nlohmann::ordered_json train_fixes_json(const std::vector<TrainFix>& fixes);

/// `train --find-max-micro-batch`: the plan's head and, per policy, the largest micro-batch
/// with the binding device's peaks, step time, tokens/s and MFU there (only "fits": false when
/// none fits).
nlohmann::ordered_json max_micro_batch_json(const training::TrainingSetup& setup,
                                            const std::vector<MaxMicroBatch>& rows);

/// `train --out`: /train/devices, /train/memory_timeline, /train/op_timeline and the run's
/// attributes; the file-level `inputs` is train_json without "devices", plus, under
/// "settings", every schema row's resolved value with its origin (resolved_inputs_json); the
/// scenario text is the options'. Crash-safe (temp + rename).
void write_train_results(const training::TrainingSetup& setup, const training::TrainingResult& r,
                         const std::filesystem::path& out, const std::string& command_line,
                         const TrainOptions& options);

}  // namespace vramsim::run
