#include "sim/run/train_search_results.hpp"

#include "sim/io/results_file.hpp"
#include "sim/io/typed_columns.hpp"
#include "sim/run/train_results.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>

namespace vramsim::run {

void write_train_probes(io::ResultsWriter& w, std::string_view group,
                        std::span<const TrainProbe> probes) {
  std::vector<std::string> ckpt, search;
  std::vector<std::int64_t> index, mb, seq, stage;
  std::vector<bool> fits;
  std::vector<Bytes> alloc, reserved, non_alloc, capacity;
  std::vector<Duration> step;
  std::vector<double> tps;
  for (const TrainProbe& p : probes) {
    index.push_back(static_cast<std::int64_t>(index.size()));
    ckpt.push_back(p.checkpointing);
    search.emplace_back(to_string(p.search));
    mb.push_back(p.micro_batch);
    seq.push_back(p.seq_len);
    fits.push_back(p.fits);
    stage.push_back(p.binding_stage);
    alloc.push_back(p.peak_allocated);
    reserved.push_back(p.peak_reserved);
    non_alloc.push_back(p.non_allocator);
    capacity.push_back(p.capacity);
    step.push_back(p.step_time);
    tps.push_back(p.tokens_per_s);
  }
  io::TypedTable t;
  t.count("probe_index", index)
      .text("checkpointing", ckpt)
      .text("search", search)
      .count("micro_batch", mb)
      .count("seq_len", seq)
      .flag("fits", fits)
      .count("binding_stage", stage)
      .bytes("peak_allocated_bytes", alloc)
      .bytes("peak_reserved_bytes", reserved)
      .bytes("non_allocator_bytes", non_alloc)
      .bytes("total_memory_bytes", capacity)
      .seconds("step_time_s", step)
      .rate("tokens_per_s", tps);
  t.write(w, group);
}

void write_train_search_metadata(io::ResultsWriter& w, const training::TrainingSetup& setup,
                                 const std::string& command_line, const std::string& scenario_text,
                                 std::string_view created_by, const TrainOptions* options) {
  // The plan as resolved (the searches vary micro_batch / seq_len from it).
  nlohmann::ordered_json inputs = train_plan_json(setup);
  if (options) inputs["settings"] = resolved_inputs_json(*options);
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line,
                        .scenario_text = scenario_text,
                        .seed = 0,
                        .inputs = inputs.dump(),
                        .calibration_source = cost_source(setup),
                        .created_by = std::string(created_by)});
}

void write_train_plan_attributes(io::ResultsWriter& w, std::string_view group,
                                 const training::TrainingSetup& setup) {
  const training::TrainingPlan& p = setup.plan;
  w.set_string_attribute(group, "model", setup.model.name);
  w.set_string_attribute(group, "gpu", setup.device.id);
  w.set_int_attribute(group, "num_gpus", p.num_gpus);
  w.set_string_attribute(group, "strategy", training::to_string(p.strategy));
  w.set_int_attribute(group, "tp", p.tp);
  w.set_int_attribute(group, "pp", p.pp);
  w.set_int_attribute(group, "dp", p.dp());
  w.set_int_attribute(group, "seq_len", p.seq_len);
  w.set_int_attribute(group, "num_micro_batches", p.num_micro_batches());
  w.set_int_attribute(group, "device_memory_bytes", setup.device.memory_total.count());
}

void write_max_micro_batch_results(io::ResultsWriter& w, const training::TrainingSetup& setup,
                                   const std::vector<MaxMicroBatch>& rows,
                                   std::span<const TrainProbe> probes,
                                   const std::string& command_line,
                                   const TrainOptions& options) {
  write_train_search_metadata(w, setup, command_line, options.scenario_text, "vramsim train",
                              &options);
  const std::string_view group = "/max_micro_batch";
  write_train_plan_attributes(w, group, setup);
  w.set_int_attribute(group, "num_runs", static_cast<std::int64_t>(probes.size()));

  std::vector<std::string> ckpt;
  std::vector<std::int64_t> mb, stage, num_probes;
  std::vector<bool> fits;
  std::vector<Bytes> alloc, reserved, non_alloc, state, act, capacity;
  std::vector<Duration> step;
  std::vector<double> tps, mfu;
  for (const MaxMicroBatch& row : rows) {
    ckpt.push_back(row.checkpointing);
    mb.push_back(row.micro_batch);
    fits.push_back(row.micro_batch > 0);
    num_probes.push_back(std::count_if(probes.begin(), probes.end(), [&](const TrainProbe& p) {
      return p.checkpointing == row.checkpointing;
    }));
    const training::DeviceResult* d = row.micro_batch > 0 ? binding_device(row.result) : nullptr;
    stage.push_back(d ? d->stage : 0);
    alloc.push_back(d ? d->peak_allocated : Bytes(0));
    reserved.push_back(d ? d->peak_reserved : Bytes(0));
    non_alloc.push_back(d ? d->non_allocator : Bytes(0));
    state.push_back(d ? d->model_state : Bytes(0));
    act.push_back(d ? d->activation_peak : Bytes(0));
    capacity.push_back(d ? d->capacity : Bytes(0));
    step.push_back(d ? row.result.step_time : Duration::zero());
    tps.push_back(d ? row.result.tokens_per_s : 0.0);
    mfu.push_back(d ? row.result.mfu : 0.0);
  }
  io::TypedTable t;
  t.text("checkpointing", ckpt)
      .count("max_micro_batch", mb)
      .flag("fits", fits)
      .count("binding_stage", stage)
      .bytes("peak_allocated_bytes", alloc)
      .bytes("peak_reserved_bytes", reserved)
      .bytes("non_allocator_bytes", non_alloc)
      .bytes("model_state_bytes", state)
      .bytes("activation_bytes", act)
      .bytes("total_memory_bytes", capacity)
      .seconds("step_time_s", step)
      .rate("tokens_per_s", tps)
      .ratio("mfu", mfu)
      .count("num_probes", num_probes);
  t.write(w, "/max_micro_batch/policies");
  write_train_probes(w, "/max_micro_batch/probes", probes);
  w.finish();
}

}  // namespace vramsim::run
