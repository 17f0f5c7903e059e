#include "sim/run/train_results.hpp"

#include "sim/core/check.hpp"
#include "sim/io/results_file.hpp"
#include "sim/training/lora.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace vramsim::run {

namespace {

using training::DeviceResult;
using training::MemoryCategory;

// The binding device (binding_device): the headline row.
const DeviceResult& binding(const training::TrainingResult& r) {
  const DeviceResult* d = binding_device(r);
  VRAMSIM_CHECK(d != nullptr, "a training result without devices has no headline row");
  return *d;
}

nlohmann::ordered_json device_json(const DeviceResult& d) {
  nlohmann::ordered_json j;
  j["pp_stage"] = d.stage;
  j["peak_allocated_bytes"] = d.peak_allocated.count();
  j["peak_reserved_bytes"] = d.peak_reserved.count();
  j["model_state_bytes"] = d.model_state.count();
  j["activation_bytes"] = d.activation_peak.count();
  j["non_allocator_bytes"] = d.non_allocator.count();
  j["total_memory_bytes"] = d.capacity.count();
  j["step_time_s"] = d.step_time.seconds();
  j["fits"] = d.fits;
  j["shortfall_bytes"] = d.shortfall.count();
  j["compute_s"] = d.compute.seconds();
  j["tp_comm_s"] = d.tp_comm.seconds();
  j["cp_comm_s"] = d.cp_comm.seconds();
  j["ep_comm_s"] = d.ep_comm.seconds();
  j["exposed_comm_s"] = d.exposed_comm.seconds();
  j["bubble_s"] = d.bubble.seconds();
  nlohmann::ordered_json at_peak;
  for (int k = 0; k < training::kNumMemoryCategories; ++k) {
    at_peak[fmt::format("{}_bytes", to_string(static_cast<MemoryCategory>(k)))] =
        d.at_peak[static_cast<std::size_t>(k)].count();
  }
  j["at_peak"] = at_peak;
  return j;
}

cost::BasisCounts cost_basis(const training::TrainingResult& r) {
  cost::BasisCounts c;
  for (const training::StagePlan& st : r.stages) c += st.cost_basis;
  return c;
}

}  // namespace

std::string cost_source(const training::TrainingSetup& s) {
  if (!s.calibration) return "datasheet roofline";
  return s.calibration->source_file.empty() ? std::string("(in memory)")
                                            : s.calibration->source_file;
}

std::string cost_summary(const training::TrainingSetup& s, const training::TrainingResult& r) {
  if (!s.calibration) return cost_source(s);
  const cost::BasisCounts c = cost_basis(r);
  return fmt::format("{} (measured {}, interpolated {}, scaled {}, datasheet {})", cost_source(s),
                     c.measured, c.interpolated, c.scaled, c.datasheet);
}

nlohmann::ordered_json train_plan_json(const training::TrainingSetup& s) {
  const training::TrainingPlan& p = s.plan;
  nlohmann::ordered_json j;
  j["model"] = s.model.name;
  j["gpu"] = s.device.id;
  j["num_gpus"] = p.num_gpus;
  j["gpus_per_node"] = p.gpus_per_node;
  j["tp"] = p.tp;
  j["pp"] = p.pp;
  j["dp"] = p.dp();
  j["cp"] = p.cp;
  j["cp_comm"] = std::string(to_string(p.cp_comm));
  j["ep"] = p.ep;
  if (s.model.moe) {
    const double busiest = p.busiest_expert_load();
    j["expert_load_imbalance"] = busiest;
    j["moe_capacity_factor"] = p.moe_capacity_factor;
    j["moe_pad_to_capacity"] = p.moe_pad_to_capacity;
    j["moe_routed_load"] = p.moe_routed_load(*s.model.moe);
    j["moe_busiest_expert_dropped_fraction"] =
        p.moe_capacity_factor > 0.0 && busiest > p.moe_capacity_factor
            ? (busiest - p.moe_capacity_factor) / busiest
            : 0.0;
    if (!p.expert_loads.empty()) {  // only then: runs without them keep their fields
      j["expert_loads"] = p.expert_loads;
      j["moe_routed_dropped_fraction"] = p.moe_dropped_fraction();
    }
  }
  j["strategy"] = std::string(to_string(p.strategy));
  j["framework"] = std::string(to_string(p.framework_in_use()));
  j["pp_schedule"] = std::string(to_string(p.schedule));
  j["pp_interleave"] = p.pp_interleave;
  j["sequence_parallel"] = p.sequence_parallel;
  j["precision"] = std::string(to_string(p.precision));
  j["optimizer"] = std::string(to_string(p.optimizer));
  j["offload_optimizer"] = p.offload_optimizer;
  if (p.offload_optimizer) {
    j["offload_optimizer_device"] = std::string(to_string(p.offload_optimizer_device));
  }
  j["offload_params"] = std::string(to_string(p.offload_params));
  j["checkpointing"] = to_string(p.checkpointing);
  j["loss"] = to_string(p.loss);
  j["micro_batch"] = p.micro_batch;
  j["global_batch"] = p.effective_global_batch();
  j["num_micro_batches"] = p.num_micro_batches();
  j["seq_len"] = p.seq_len;
  if (p.samples) {  // only then: runs without sample lengths keep their fields
    j["packing"] = std::string(to_string(p.packing));
    j["num_samples"] = p.samples->num_samples();
    j["data_tokens_per_sequence"] = p.data_tokens_per_sequence();
    if (p.pads_samples()) {
      training::TrainingPlan mean = p;
      mean.shape_mean_batch = true;
      j["padded_seq_len_mean"] = mean.shaped_seq_len();
      j["padded_seq_len_peak"] = p.shaped_seq_len();
    }
  }
  if (p.lora.enabled()) {  // only then: full-parameter results keep their fields
    const training::LoraParamCount count = training::count_lora_params(s.model, p);
    j["lora_rank"] = p.lora.rank;
    j["lora_alpha"] = p.lora.alpha;
    j["lora_dropout"] = p.lora.dropout;
    j["lora_targets"] = p.lora.all_linear ? nlohmann::ordered_json("all-linear")
                                          : nlohmann::ordered_json(p.lora.targets);
    nlohmann::ordered_json extra = nlohmann::ordered_json::array();
    if (p.lora.train_embeddings) extra.push_back("embed_tokens");
    if (p.lora.train_lm_head) extra.push_back("lm_head");
    if (p.lora.train_norms) extra.push_back("norms");
    j["lora_trainable_extra"] = extra;
    j["base_quant"] = std::string(to_string(p.base_quant));
    j["double_quant"] = p.double_quant;
    j["trainable_params"] = count.trainable;
    j["all_params"] = count.all;
    j["trainable_fraction"] = count.trainable_percent() / 100.0;  // PEFT prints it in %
  }
  return j;
}

Bytes host_bytes_per_node(const training::TrainingSetup& s, const training::TrainingResult& r) {
  const training::TrainingPlan& p = s.plan;
  const std::int64_t per_stage = static_cast<std::int64_t>(p.tp) * p.grad_group();
  const std::int64_t node = std::max(1, p.gpus_per_node);
  Bytes best(0);
  for (std::int64_t first = 0; first < p.num_gpus; first += node) {
    Bytes sum(0);
    for (std::int64_t rank = first; rank < std::min<std::int64_t>(first + node, p.num_gpus);
         ++rank) {
      const auto stage = static_cast<std::size_t>(rank / per_stage);
      if (stage < r.stages.size()) sum += r.stages[stage].host_state;
    }
    best = max(best, sum);
  }
  return best;
}

std::string offload_bound_by(const training::StagePlan& st) {
  if (st.offload_nvme > st.offload_cpu && st.offload_nvme > st.offload_pcie) return "nvme";
  return st.offload_cpu >= st.offload_pcie ? "cpu_adam" : "pcie";
}

nlohmann::ordered_json train_json(const training::TrainingSetup& s,
                                  const training::TrainingResult& r) {
  nlohmann::ordered_json j = train_plan_json(s);
  j["num_micro_batches"] = r.num_micro_batches;
  const nlohmann::ordered_json head = device_json(binding(r));
  for (const auto& [k, v] : head.items()) {
    if (k != "pp_stage") j[k] = v;
  }
  j["fits"] = r.fits;
  j["step_time_s"] = r.step_time.seconds();
  j["tokens_per_s"] = r.tokens_per_s;
  j["mfu"] = r.mfu;
  j["model_flops_per_step"] = r.model_flops.count();
  if (s.plan.offload_optimizer || s.plan.paged_optimizer) {
    const DeviceResult& d = binding(r);
    const auto stage = static_cast<std::size_t>(d.stage);
    if (stage < r.stages.size()) {
      const training::StagePlan& st = r.stages[stage];
      j["host_memory_bytes_per_gpu"] = st.host_state.count();
      j["host_memory_bytes_per_node"] = host_bytes_per_node(s, r).count();
      if (s.plan.offload_optimizer) {
        j["offload_pcie_s"] = st.offload_pcie.seconds();
        j["offload_cpu_adam_s"] = st.offload_cpu.seconds();
        j["offload_bound_by"] = offload_bound_by(st);
      }
      if (s.plan.offload_params == training::OffloadParams::kNvme ||
          s.plan.optimizer_on_nvme()) {
        j["nvme_bytes_per_gpu"] = st.nvme_state.count();
        j["offload_nvme_s"] = st.offload_nvme.seconds();
      }
    }
  }
  if (s.plan.lora.enabled()) {
    const DeviceResult& d = binding(r);
    const auto stage = static_cast<std::size_t>(d.stage);
    if (stage < r.stages.size()) {
      j["frozen_weights_bytes"] = r.stages[stage].frozen_weights.count();
      j["trainable_params_on_device"] = r.stages[stage].trainable_params;
    }
  }
  const cost::BasisCounts basis = cost_basis(r);
  j["calibration_source"] = cost_source(s);
  j["cost_estimates"] = {{"measured", basis.measured},
                         {"interpolated", basis.interpolated},
                         {"scaled", basis.scaled},
                         {"datasheet", basis.datasheet}};
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const DeviceResult& d : r.devices) devices.push_back(device_json(d));
  j["devices"] = devices;
  return j;
}

nlohmann::ordered_json train_fixes_json(const std::vector<TrainFix>& fixes) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const TrainFix& f : fixes) {
    a.push_back({{"change", f.change},
                 {"why", f.why},
                 {"fits", f.fits},
                 {"peak_bytes", f.peak.count()},
                 {"capacity_bytes", f.capacity.count()},
                 {"step_time_s", f.step_time.seconds()},
                 {"tokens_per_s", f.tokens_per_s}});
  }
  return a;
}

nlohmann::ordered_json max_micro_batch_json(const training::TrainingSetup& s,
                                            const std::vector<MaxMicroBatch>& rows) {
  nlohmann::ordered_json j;
  j["model"] = s.model.name;
  j["gpu"] = s.device.id;
  j["num_gpus"] = s.plan.num_gpus;
  j["strategy"] = std::string(to_string(s.plan.strategy));
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const MaxMicroBatch& row : rows) {
    nlohmann::ordered_json e;
    e["checkpointing"] = row.checkpointing;
    e["max_micro_batch"] = row.micro_batch;
    e["fits"] = row.micro_batch > 0;
    if (row.micro_batch > 0) {
      const DeviceResult& d = binding(row.result);
      e["peak_allocated_bytes"] = d.peak_allocated.count();
      e["peak_reserved_bytes"] = d.peak_reserved.count();
      e["step_time_s"] = row.result.step_time.seconds();
      e["tokens_per_s"] = row.result.tokens_per_s;
      e["mfu"] = row.result.mfu;
    }
    arr.push_back(e);
  }
  j["max_micro_batch"] = arr;
  return j;
}

void write_train_results(const training::TrainingSetup& s, const training::TrainingResult& r,
                         const std::filesystem::path& out, const std::string& command_line,
                         const TrainOptions& options) {
  io::ResultsWriter w(out);
  nlohmann::ordered_json inputs = train_json(s, r);
  inputs.erase("devices");
  inputs["settings"] = resolved_inputs_json(options);
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line,
                        .scenario_text = options.scenario_text,
                        .seed = 0,
                        .inputs = inputs.dump(),
                        .calibration_source = cost_summary(s, r),
                        .created_by = "vramsim train"});
  using io::Column;
  {
    std::vector<std::int64_t> stage, alloc, reserved, state, act, fits, non_alloc;
    std::vector<double> step, compute, tp, cp, ep, comm, bubble;
    for (const DeviceResult& d : r.devices) {
      stage.push_back(d.stage);
      alloc.push_back(d.peak_allocated.count());
      reserved.push_back(d.peak_reserved.count());
      state.push_back(d.model_state.count());
      act.push_back(d.activation_peak.count());
      non_alloc.push_back(d.non_allocator.count());
      fits.push_back(d.fits ? 1 : 0);
      step.push_back(d.step_time.seconds());
      compute.push_back(d.compute.seconds());
      tp.push_back(d.tp_comm.seconds());
      cp.push_back(d.cp_comm.seconds());
      ep.push_back(d.ep_comm.seconds());
      comm.push_back(d.exposed_comm.seconds());
      bubble.push_back(d.bubble.seconds());
    }
    w.write_table("/train/devices",
                  {Column::int64("device", io::kUnitsCount, stage),
                   Column::int64("peak_allocated_bytes", io::kUnitsBytes, alloc),
                   Column::int64("peak_reserved_bytes", io::kUnitsBytes, reserved),
                   Column::int64("model_state_bytes", io::kUnitsBytes, state),
                   Column::int64("activation_bytes", io::kUnitsBytes, act),
                   Column::int64("non_allocator_bytes", io::kUnitsBytes, non_alloc),
                   Column::int64("fits", io::kUnitsCount, fits),
                   Column::float64("step_time_s", io::kUnitsSeconds, step),
                   Column::float64("compute_s", io::kUnitsSeconds, compute),
                   Column::float64("tp_comm_s", io::kUnitsSeconds, tp),
                   Column::float64("cp_comm_s", io::kUnitsSeconds, cp),
                   Column::float64("ep_comm_s", io::kUnitsSeconds, ep),
                   Column::float64("exposed_comm_s", io::kUnitsSeconds, comm),
                   Column::float64("bubble_s", io::kUnitsSeconds, bubble)});
  }
  {
    const std::size_t n = r.memory.size();
    std::vector<std::int64_t> time(n), device(n), alloc(n), reserved(n);
    std::vector<std::vector<std::int64_t>> cats(training::kNumMemoryCategories,
                                                std::vector<std::int64_t>(n));
    for (std::size_t i = 0; i < n; ++i) {
      const training::MemorySample& m = r.memory[i];
      time[i] = m.time_ns;
      device[i] = m.device;
      alloc[i] = m.allocated;
      reserved[i] = m.reserved;
      for (std::size_t k = 0; k < cats.size(); ++k) cats[k][i] = m.bytes[k];
    }
    std::vector<Column> cols{Column::int64("time_ns", io::kUnitsNanoseconds, time),
                             Column::int64("device", io::kUnitsCount, device)};
    for (std::size_t k = 0; k < cats.size(); ++k) {
      cols.push_back(
          Column::int64(fmt::format("{}_bytes", to_string(static_cast<MemoryCategory>(k))),
                        io::kUnitsBytes, cats[k]));
    }
    cols.push_back(Column::int64("allocated_bytes", io::kUnitsBytes, alloc));
    cols.push_back(Column::int64("reserved_bytes", io::kUnitsBytes, reserved));
    w.write_table("/train/memory_timeline", cols);
  }
  {
    const std::size_t n = r.ops.size();
    std::vector<std::int64_t> start(n), end(n), device(n), step(n), micro_batch(n), layer(n);
    std::vector<std::string> stream(n), kind(n), name(n);
    for (std::size_t i = 0; i < n; ++i) {
      const training::OpRecord& o = r.ops[i];
      const training::Op& op = r.graph.ops[static_cast<std::size_t>(o.op)];
      start[i] = o.start_ns;
      end[i] = o.end_ns;
      device[i] = op.device;
      step[i] = op.step;
      micro_batch[i] = op.micro_batch;
      layer[i] = op.layer;
      stream[i] = std::string(to_string(op.stream));
      kind[i] = std::string(to_string(op.kind));
      name[i] = training::op_name(op);
    }
    w.write_table("/train/op_timeline", {Column::int64("start_ns", io::kUnitsNanoseconds, start),
                                         Column::int64("end_ns", io::kUnitsNanoseconds, end),
                                         Column::int64("device", io::kUnitsCount, device),
                                         Column::int64("step", io::kUnitsCount, step),
                                         Column::int64("micro_batch", io::kUnitsCount, micro_batch),
                                         Column::int64("layer", io::kUnitsCount, layer),
                                         Column::string("stream", stream, io::StringLayout::kFixed),
                                         Column::string("kind", kind, io::StringLayout::kFixed),
                                         Column::string("op", name, io::StringLayout::kFixed)});
  }
  w.set_string_attribute("/train", "model", s.model.name);
  w.set_string_attribute("/train", "gpu", s.device.id);
  w.set_int_attribute("/train", "fits", r.fits ? 1 : 0);
  w.set_double_attribute("/train", "step_time_s", r.step_time.seconds());
  w.set_double_attribute("/train", "tokens_per_s", r.tokens_per_s);
  w.set_double_attribute("/train", "mfu", r.mfu);
  w.finish();
}

}  // namespace vramsim::run
