#include "sim/run/plan_train_results.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <vector>

#include "sim/io/results_file.hpp"
#include "sim/run/train_results.hpp"

namespace vramsim::run {

namespace {

std::string record_text(const PlanTrainRow& row, const std::string& fingerprint) {
  return fmt::format("vramsim plan train {}\n{}\n", fingerprint, row.flags());
}

nlohmann::ordered_json row_json(const PlanTrainRow& r) {
  nlohmann::ordered_json j = plan_row_typed(r).to_json();
  return j;
}

nlohmann::ordered_json head_json(const PlanTrainAnswer& a) {
  const training::TrainingPlan& p = a.base.plan;
  nlohmann::ordered_json j;
  j["model"] = a.base.model.name;
  j["gpu"] = a.base.device.id;
  j["num_gpus"] = p.num_gpus;
  j["gpus_per_node"] = p.gpus_per_node;
  j["global_batch"] = a.global_batch;
  j["seq_len"] = p.seq_len;
  j["tokens_per_step"] = a.global_batch * p.seq_len;
  if (p.samples) {  // only then: searches without sample lengths keep their fields
    j["packing"] = std::string(training::to_string(p.packing));
    j["num_samples"] = p.samples->num_samples();
    j["data_tokens_per_sequence"] = p.data_tokens_per_sequence();
  }
  j["precision"] = training::to_string(p.precision);
  j["optimizer"] = training::to_string(p.optimizer);
  j["lora_rank"] = p.lora.rank;
  j["base_quant"] = training::to_string(p.base_quant);
  j["device_memory_bytes"] = a.base.device.memory_total.count();
  j["calibration_source"] = cost_source(a.base);
  return j;
}

nlohmann::ordered_json space_json(const PlanTrainSpace& s) {
  nlohmann::ordered_json j;
  j["strategies"] = nlohmann::ordered_json::array();
  for (const training::Strategy x : s.strategies) j["strategies"].push_back(training::to_string(x));
  j["tp"] = s.tps;
  j["pp"] = s.pps;
  j["cp"] = s.cps;
  j["ep"] = s.eps;
  j["micro_batch"] = s.micro_batches;
  j["checkpointing"] = nlohmann::ordered_json::array();
  for (const training::Checkpointing& c : s.checkpointing) {
    j["checkpointing"].push_back(training::to_string(c));
  }
  j["offload_optimizer"] = nlohmann::ordered_json::array();
  for (const bool b : s.offload_optimizer) j["offload_optimizer"].push_back(b);
  return j;
}

std::string gib(Bytes b) {
  return fmt::format("{:.2f} GiB", static_cast<double>(b.count()) / (1 << 30));
}

}  // namespace

std::string plan_search_fingerprint(const TrainOptions& o) {
  return inputs_fingerprint(resolved_inputs_json(o));
}

PointRecord plan_row_record(const PlanTrainRow& row, const std::string& fingerprint) {
  PointRecord rec;
  rec.index = row.index;
  rec.status = std::string(row.status == PlanStatus::kFits ? kStatusOk : kStatusInfeasible);
  rec.reason = row.reason;
  rec.scenario_text = record_text(row, fingerprint);
  nlohmann::ordered_json j;
  j["status"] = to_string(row.status);
  j["binding_stage"] = row.binding_stage;
  j["peak_bytes"] = row.peak.count();
  j["peak_allocated_bytes"] = row.peak_allocated.count();
  j["total_memory_bytes"] = row.capacity.count();
  j["step_time_ns"] = row.step_time.nanoseconds();
  j["tokens_per_s"] = row.tokens_per_s;
  j["mfu"] = row.mfu;
  rec.result = std::move(j);
  return rec;
}

bool plan_row_from_record(const PointRecord& rec, const std::string& fingerprint,
                          PlanTrainRow& row) {
  if (rec.index != row.index || rec.scenario_text != record_text(row, fingerprint)) return false;
  const nlohmann::ordered_json& j = rec.result;
  const ResultShape shape{
      {"binding_stage", "peak_bytes", "peak_allocated_bytes", "total_memory_bytes", "step_time_ns"},
      {"tokens_per_s", "mfu"},
      {"status"},
      {}};
  if (!has_shape(j, shape)) return false;
  const std::optional<PlanStatus> status = plan_status_from_string(j["status"].get<std::string>());
  if (!status || (*status != PlanStatus::kFits && *status != PlanStatus::kDoesNotFit &&
                  *status != PlanStatus::kInvalid)) {
    return false;
  }
  if ((*status == PlanStatus::kFits) != (rec.status == kStatusOk)) return false;
  PlanTrainRow r = row;
  r.status = *status;
  r.reason = rec.reason;
  r.binding_stage = j["binding_stage"].get<std::int64_t>();
  r.peak = Bytes(j["peak_bytes"].get<std::int64_t>());
  r.peak_allocated = Bytes(j["peak_allocated_bytes"].get<std::int64_t>());
  r.capacity = Bytes(j["total_memory_bytes"].get<std::int64_t>());
  r.headroom = r.capacity - r.peak;
  r.step_time = Duration::from_nanoseconds(j["step_time_ns"].get<std::int64_t>());
  r.tokens_per_s = j["tokens_per_s"].get<double>();
  r.mfu = j["mfu"].get<double>();
  row = std::move(r);
  return true;
}

io::TypedRecord plan_row_typed(const PlanTrainRow& r) {
  io::TypedRecord t;
  t.add("plan_index", r.index)
      .add("strategy", std::string(training::to_string(r.strategy)))
      .add("tp", r.tp)
      .add("pp", r.pp)
      .add("dp", r.dp)
      .add("cp", r.cp)
      .add("ep", r.ep)
      .add("micro_batch", r.micro_batch)
      .add("num_micro_batches", r.num_micro_batches)
      .add("checkpointing", training::to_string(r.checkpointing))
      .add("offload_optimizer", r.offload_optimizer)
      .add("status", std::string(to_string(r.status)))
      .add("fits", r.status == PlanStatus::kFits)
      .add("binding_stage", r.binding_stage)
      .add("peak_bytes", r.peak)
      .add("peak_allocated_bytes", r.peak_allocated)
      .add("total_memory_bytes", r.capacity)
      .add("headroom_bytes", r.headroom)
      .add("step_time_s", r.step_time)
      .add("tokens_per_s", io::PerSecond{r.tokens_per_s})
      .add("mfu", io::Ratio{r.mfu})
      .add("flags", r.flags())
      .add("reason", r.reason);
  return t;
}

std::string plan_train_message(const PlanTrainAnswer& a) {
  const training::TrainingPlan& p = a.base.plan;
  const std::string where = fmt::format("{} on {} x {} at global batch {} x {} tokens",
                                        a.base.model.name, p.num_gpus, a.base.device.id,
                                        a.global_batch, p.seq_len);
  if (!a.fastest.empty()) {
    const PlanTrainRow& best = a.rows[a.fastest.front()];
    return fmt::format("fastest plan that fits {}: {} ({:.3f} s per step, {:.0f} tokens/s, "
                       "peak {} of {}, {} headroom); {} of {} simulated plans fit",
                       where, best.flags(), best.step_time.seconds(), best.tokens_per_s,
                       gib(best.peak), gib(best.capacity), gib(best.headroom), a.counts.num_fit,
                       a.counts.num_simulated);
  }
  if (a.closest) {
    const PlanTrainRow& c = a.rows[*a.closest];
    return fmt::format("no plan fits {}: none of the {} simulated plans fits; the closest, {}, "
                       "peaks at {} on {} ({} short): more GPUs, a shorter sequence, a smaller "
                       "global batch or a LoRA / quantized base are needed",
                       where, a.counts.num_simulated, c.flags(), gib(c.peak), gib(c.capacity),
                       gib(-c.headroom));
  }
  return fmt::format("no plan fits {}: no plan of the search could be simulated", where);
}

nlohmann::ordered_json plan_train_json(const PlanTrainAnswer& a) {
  nlohmann::ordered_json j = head_json(a);
  j["search"] = space_json(a.space);
  const PlanTrainCounts& c = a.counts;
  j["num_plans"] = c.num_plans;
  j["num_simulated"] = c.num_simulated;
  j["num_fit"] = c.num_fit;
  j["num_not_fit"] = c.num_not_fit;
  j["num_skipped"] = c.num_skipped_batch + c.num_skipped_invalid + c.num_skipped_same_as_ddp;
  j["num_skipped_batch"] = c.num_skipped_batch;
  j["num_skipped_invalid"] = c.num_skipped_invalid;
  j["num_skipped_same_as_ddp"] = c.num_skipped_same_as_ddp;
  j["num_resumed"] = c.num_resumed;
  j["fits"] = !a.fastest.empty();
  j["message"] = plan_train_message(a);
  // A listed plan names the equivalent plans it stands for (PlanTrainAnswer::equivalent).
  const auto listed = [&](std::size_t i) {
    nlohmann::ordered_json row = row_json(a.rows[i]);
    row["equivalent_plans"] = nlohmann::ordered_json::array();
    if (const auto it = a.equivalent.find(i); it != a.equivalent.end()) {
      for (const std::size_t k : it->second) {
        row["equivalent_plans"].push_back(
            {{"index", a.rows[k].index},
             {"strategy", std::string(training::to_string(a.rows[k].strategy))}});
      }
    }
    return row;
  };
  j["fastest"] = nlohmann::ordered_json::array();
  for (const std::size_t i : a.fastest) j["fastest"].push_back(listed(i));
  j["pareto"] = nlohmann::ordered_json::array();
  for (const std::size_t i : a.pareto) j["pareto"].push_back(listed(i));
  j["closest"] = a.closest ? row_json(a.rows[*a.closest]) : nlohmann::ordered_json();
  return j;
}

void write_plan_train_results(io::ResultsWriter& w, const PlanTrainAnswer& a,
                              const PlanTrainRequest& q) {
  nlohmann::ordered_json inputs = head_json(a);
  inputs["search"] = space_json(a.space);
  inputs["settings"] = resolved_inputs_json(q.options);
  w.write_run_metadata({.vramsim_version = "",
                        .command = q.command_line,
                        .scenario_text = q.options.scenario_text,
                        .seed = 0,
                        .inputs = inputs.dump(),
                        .calibration_source = cost_source(a.base),
                        .created_by = "vramsim plan train"});
  const std::string_view group = "/plan_train";
  const training::TrainingPlan& p = a.base.plan;
  w.create_group(group);
  w.set_string_attribute(group, "model", a.base.model.name);
  w.set_string_attribute(group, "gpu", a.base.device.id);
  w.set_int_attribute(group, "num_gpus", p.num_gpus);
  w.set_int_attribute(group, "global_batch", a.global_batch);
  w.set_int_attribute(group, "seq_len", p.seq_len);
  w.set_int_attribute(group, "device_memory_bytes", a.base.device.memory_total.count());
  const PlanTrainCounts& c = a.counts;
  w.set_int_attribute(group, "num_plans", c.num_plans);
  w.set_int_attribute(group, "num_simulated", c.num_simulated);
  w.set_int_attribute(group, "num_fit", c.num_fit);
  w.set_int_attribute(group, "num_not_fit", c.num_not_fit);
  w.set_int_attribute(group, "num_skipped_batch", c.num_skipped_batch);
  w.set_int_attribute(group, "num_skipped_invalid", c.num_skipped_invalid);
  w.set_int_attribute(group, "num_skipped_same_as_ddp", c.num_skipped_same_as_ddp);
  w.set_string_attribute(group, "message", plan_train_message(a));
  std::vector<std::int64_t> rank(a.rows.size(), 0);
  for (std::size_t k = 0; k < a.fastest.size(); ++k) {
    rank[a.fastest[k]] = static_cast<std::int64_t>(k + 1);
  }
  std::vector<bool> pareto(a.rows.size(), false);
  for (const std::size_t i : a.pareto) pareto[i] = true;
  std::vector<std::int64_t> same_as(a.rows.size(), -1);
  for (const auto& [kept, others] : a.equivalent) {
    for (const std::size_t k : others) same_as[k] = a.rows[kept].index;
  }
  std::vector<io::TypedRecord> rows;
  rows.reserve(a.rows.size());
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    io::TypedRecord t = plan_row_typed(a.rows[i]);
    t.add("fastest_rank", rank[i])
        .add("pareto", static_cast<bool>(pareto[i]))
        .add("same_as_plan", same_as[i]);
    rows.push_back(std::move(t));
  }
  io::TypedRecord::write_rows(w, "/plan_train/plans", rows);
  w.finish();
}

}  // namespace vramsim::run
