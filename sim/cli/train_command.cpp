// `vramsim train [SCENARIO]`: one training step under a parallel plan, simulated: memory
// timeline per device (peak allocated and reserved), step time split into compute, exposed
// communication and bubble; or, with --find-max-micro-batch, the largest micro-batch that fits
// for each checkpointing policy. Flags override the scenario file.
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "sim/cli/commands.hpp"
#include "sim/cli/train_config.hpp"
#include "sim/cli/train_report.hpp"
#include "sim/cli/train_search_output.hpp"
#include "sim/core/error.hpp"
#include "sim/cost/profile_for_device.hpp"
#include "sim/io/results_file.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/io/training_scenario.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

namespace {

// Picks the flag when given, else the scenario's value (remembering where it came from for
// error messages), else the fallback.
template <class T>
T pick(const TrainFlags& f, const std::string& flag, const T& flag_value,
       const std::optional<io::Located<T>>& from_file, const T& fallback,
       std::map<std::string, SourceLocation>& where, std::map<std::string, std::string>& field) {
  if (f.given(flag)) return flag_value;
  if (from_file) {
    where[flag] = from_file->where;
    field[flag] = from_file->field;
    return from_file->value;
  }
  return fallback;
}

int to_int(std::int64_t v) { return static_cast<int>(std::clamp<std::int64_t>(v, -1, 1 << 30)); }

// load_model, with its problems filed under the flag (or the scenario field) that named it.
model::ModelSpec load_model_at(const std::string& id, const std::filesystem::path& zoo,
                               const std::string& flag,
                               std::map<std::string, SourceLocation>& where,
                               std::map<std::string, std::string>& field) {
  try {
    return model::load_model(id, zoo);
  } catch (const ConfigError& e) {
    ValidationReport report;
    for (const Problem& p : e.report().problems()) {
      const bool about_the_id = p.field == "model";
      report.error(
          about_the_id && field.count(flag) ? field[flag]
          : about_the_id                    ? flag
                                            : p.field,
          p.message,
          about_the_id && p.where.file.empty() && where.count(flag) ? where[flag] : p.where);
    }
    throw ConfigError(report);
  }
}

}  // namespace

training::TrainingSetup resolve_train(const TrainFlags& f, io::TrainingScenario& sc) {
  std::map<std::string, SourceLocation> where;
  std::map<std::string, std::string> field;
  ValidationReport report;
  auto err = [&](const std::string& flag, const std::string& msg) {
    report.error(field.count(flag) ? field[flag] : flag, msg,
                 where.count(flag) ? where[flag] : SourceLocation{});
  };
  const std::string model = pick<std::string>(f, "--model", f.model, sc.model, "", where, field);
  const std::string gpu = pick<std::string>(f, "--gpu", f.gpu, sc.gpu, "", where, field);
  if (model.empty()) err("--model", "required: a zoo id or a config.json path (or model.id)");
  if (gpu.empty()) err("--gpu", "required: a device id, see `vramsim list gpus` (or hardware.gpu)");
  throw_if_errors(report);

  training::TrainingPlan p;
  p.num_gpus =
      to_int(pick(f, "--num-gpus", f.num_gpus, sc.num_gpus, std::int64_t{1}, where, field));
  p.tp = to_int(pick(f, "--tp", f.tp, sc.tp, std::int64_t{1}, where, field));
  p.pp = to_int(pick(f, "--pp", f.pp, sc.pp, std::int64_t{1}, where, field));
  p.pp_interleave = to_int(
      pick(f, "--pp-interleave", f.pp_interleave, sc.pp_interleave, std::int64_t{1}, where, field));
  p.micro_batch =
      pick(f, "--micro-batch", f.micro_batch, sc.micro_batch, std::int64_t{1}, where, field);
  p.global_batch =
      pick(f, "--global-batch", f.global_batch, sc.global_batch, std::int64_t{0}, where, field);
  p.seq_len = pick(f, "--seq-len", f.seq_len, sc.seq_len, std::int64_t{2048}, where, field);
  p.sequence_parallel = pick(f, "--sequence-parallel", f.sequence_parallel, sc.sequence_parallel,
                             false, where, field);
  p.offload_optimizer = pick(f, "--offload-optimizer", f.offload_optimizer, sc.offload_optimizer,
                             false, where, field);
  const auto parse = [&](const std::string& flag, const std::string& text, auto from_string,
                         std::string_view names, auto& target) {
    if (text.empty()) return;
    if (auto v = from_string(text)) {
      target = *v;
    } else {
      err(flag, fmt::format("unknown value '{}'; valid: {}", text, names));
    }
  };
  parse("--strategy", pick<std::string>(f, "--strategy", f.strategy, sc.strategy, "", where, field),
        training::strategy_from_string, training::strategy_names(), p.strategy);
  parse("--pp-schedule",
        pick<std::string>(f, "--pp-schedule", f.pp_schedule, sc.pp_schedule, "", where, field),
        training::pipeline_schedule_from_string, training::pipeline_schedule_names(), p.schedule);
  parse(
      "--checkpointing",
      pick<std::string>(f, "--checkpointing", f.checkpointing, sc.checkpointing, "", where, field),
      training::checkpointing_from_string, training::checkpointing_names(), p.checkpointing);
  parse("--precision",
        pick<std::string>(f, "--precision", f.precision, sc.precision, "", where, field),
        training::precision_from_string, training::precision_names(), p.precision);
  parse("--optimizer",
        pick<std::string>(f, "--optimizer", f.optimizer, sc.optimizer, "", where, field),
        training::optimizer_from_string, training::optimizer_names(), p.optimizer);

  const std::filesystem::path root = project_root();
  training::TrainingSetup s{
      load_model_at(model, root / "scenarios" / "models", "--model", where, field),
      io::find_device(gpu, root / "topologies", "--gpu"),
      p,
      {}};
  s.links = training::default_cluster_links(s.device);
  const std::string calibration =
      pick<std::string>(f, "--calibration", f.calibration, sc.calibration, "", where, field);
  if (!calibration.empty()) {
    const std::string at = field.count("--calibration") ? field["--calibration"] : "--calibration";
    s.calibration = cost::load_profile_for_device(calibration, s.device, at);
  }
  const std::string topo =
      pick<std::string>(f, "--topology", f.topology, sc.topology, "", where, field);
  std::optional<int> node_gpus;
  std::string t_node_id;
  if (!topo.empty()) {
    const io::ClusterTopology t = io::load_cluster_topology(
        topo, root / "topologies", field.count("--topology") ? field["--topology"] : "--topology");
    if (t.node) {
      ValidationReport nr;
      hardware::validate_node_for_device(*t.node, s.device, nr, "--topology");
      throw_if_errors(nr);
      if (auto bw = hardware::fabric_bandwidth(*t.node, s.device)) {
        s.links.intra = {*bw, t.node->fabric.latency};
      }
      node_gpus = t.node->num_gpus;
      t_node_id = t.node->id;
    }
    if (t.network_bandwidth) s.links.inter.bandwidth = *t.network_bandwidth;
    if (t.network_latency) s.links.inter.latency = *t.network_latency;
  }
  // Without a node, a job of up to 8 GPUs sits in one node, a larger one in nodes of 8.
  const std::int64_t default_per_node = node_gpus.value_or(std::clamp(p.num_gpus, 1, 8));
  s.plan.gpus_per_node = to_int(pick(f, "--gpus-per-node", f.gpus_per_node, sc.gpus_per_node,
                                     default_per_node, where, field));
  if (node_gpus && s.plan.gpus_per_node > *node_gpus) {
    err("--gpus-per-node", fmt::format("{} GPUs per node exceed the topology's node '{}' of {} "
                                       "GPUs",
                                       s.plan.gpus_per_node, t_node_id, *node_gpus));
  }
  ValidationReport plan_report;
  s.plan.validate(plan_report);
  if (plan_report.ok()) s.plan.validate_for_model(s.model, plan_report);
  for (const Problem& pr : plan_report.problems()) err(pr.field, pr.message);
  throw_if_errors(report);
  return s;
}

MaxMicroBatch find_max_micro_batch(training::TrainingSetup s, const training::Checkpointing& ckpt,
                                   std::vector<TrainProbe>* probes) {
  const std::int64_t m = s.plan.num_micro_batches();
  s.plan.checkpointing = ckpt;
  MaxMicroBatch row{training::to_string(ckpt), 0, {}};
  auto run = [&](std::int64_t mb) {
    s.plan.micro_batch = mb;
    s.plan.global_batch = mb * s.plan.dp() * m;
    training::TrainingResult r =
        training::simulate_training(s, {.num_steps = 1, .record_timeline = false});
    if (probes) {
      probes->push_back(make_train_probe(row.checkpointing, TrainSearch::kMicroBatch, s.plan, r));
    }
    return r;
  };
  std::int64_t lo = 0, hi = 1;
  while (hi <= 4096) {
    training::TrainingResult r = run(hi);
    if (!r.fits) break;
    lo = hi;
    row.result = std::move(r);
    hi *= 2;
  }
  while (hi - lo > 1) {  // lo fits (or is 0), hi does not
    const std::int64_t mid = (lo + hi) / 2;
    training::TrainingResult r = run(mid);
    if (r.fits) {
      lo = mid;
      row.result = std::move(r);
    } else {
      hi = mid;
    }
  }
  row.micro_batch = lo;
  return row;
}

namespace {

int run_train(TrainFlags& f) {
  io::TrainingScenario sc;
  if (!f.scenario.empty()) sc = io::load_training_scenario(f.scenario);
  const training::TrainingSetup setup = resolve_train(f, sc);
  if (f.find_max) {
    // Opened first: an --out in a missing directory fails before any simulation.
    std::optional<io::ResultsWriter> writer;
    if (!f.out.empty()) writer.emplace(f.out);
    std::vector<MaxMicroBatch> rows;
    std::vector<TrainProbe> probes;
    for (const char* policy : {"none", "selective", "every:2", "full"}) {
      rows.push_back(
          find_max_micro_batch(setup, *training::checkpointing_from_string(policy), &probes));
    }
    if (writer) {
      write_max_micro_batch_results(*writer, setup, rows, probes, command_line(), sc.text);
    }
    if (f.format == OutputFormat::kJson) {
      nlohmann::ordered_json j = sweep_json(setup, rows);
      j["num_runs"] = probes.size();
      std::puts(j.dump(2).c_str());
    } else {
      std::fputs(sweep_table(setup, rows).c_str(), stdout);
      if (writer) fmt::print("results written to {}\n", f.out);
    }
    return kExitOk;
  }
  const training::TrainingResult r =
      training::simulate_training(setup, {.num_steps = 2, .record_timeline = !f.out.empty()});
  if (!f.out.empty()) write_train_results(setup, r, f.out, command_line(), sc.text);
  if (f.format == OutputFormat::kJson) {
    std::puts(train_json(setup, r).dump(2).c_str());
  } else {
    std::fputs(train_table(setup, r).c_str(), stdout);
    if (!f.out.empty()) fmt::print("results written to {}\n", f.out);
  }
  return kExitOk;
}

}  // namespace

void add_train_flags(CLI::App& app, TrainFlags& flags) {
  TrainFlags* f = &flags;
  CLI::App* cmd = &app;
  auto add = [&](const std::string& name, auto& target, const std::string& help) {
    f->options[name] = cmd->add_option(name, target, help);
  };
  auto flag = [&](const std::string& name, bool& target, const std::string& help) {
    f->options[name] = cmd->add_flag(name, target, help);
  };
  cmd->add_option("scenario", f->scenario, "Training scenario file (TOML); flags override it")
      ->check(CLI::ExistingFile);
  add("--model", f->model, "Zoo model id (Hugging Face, case-insensitive) or config.json path");
  add("--gpu", f->gpu, "Device id from topologies/devices (see `vramsim list gpus`)");
  add("--num-gpus", f->num_gpus, "GPUs in the job (tp x pp x dp)");
  add("--gpus-per-node", f->gpus_per_node, "GPUs per node (default: the device's node, 8)");
  add("--topology", f->topology,
      "Node id of topologies/nodes, a node file, or a cluster file (node + inter-node network)");
  add("--strategy", f->strategy, std::string(training::strategy_names()));
  add("--tp", f->tp, "Tensor-parallel degree (Megatron)");
  add("--pp", f->pp, "Pipeline-parallel degree");
  add("--pp-schedule", f->pp_schedule, std::string(training::pipeline_schedule_names()));
  add("--pp-interleave", f->pp_interleave, "Model chunks per device (interleaved schedule)");
  flag("--sequence-parallel", f->sequence_parallel, "Megatron sequence parallelism (needs --tp)");
  add("--micro-batch", f->micro_batch, "Sequences per micro-batch per DP rank");
  add("--global-batch", f->global_batch, "Sequences per step (default micro-batch x dp)");
  add("--seq-len", f->seq_len, "Tokens per sequence");
  add("--checkpointing", f->checkpointing, std::string(training::checkpointing_names()));
  add("--precision", f->precision, std::string(training::precision_names()));
  add("--optimizer", f->optimizer, std::string(training::optimizer_names()));
  flag("--offload-optimizer", f->offload_optimizer, "Optimizer state and step on the host");
  add("--calibration", f->calibration,
      "Calibration profile (JSON from vramsim-calibrate) for this GPU: measured GEMM, attention "
      "and copy times replace the datasheet roofline where they cover the shapes");
  cmd->add_option("--out", f->out, "Write an HDF5 results file (see analysis/SCHEMA.md)");
  add_format_option(*cmd, f->format);
}

RunFn register_train(CLI::App& app) {
  auto f = std::make_shared<TrainFlags>();
  CLI::App* cmd = app.add_subcommand(
      "train", "A training step under a parallel plan: memory timeline, peak, step time");
  add_train_flags(*cmd, *f);
  cmd->add_flag("--find-max-micro-batch", f->find_max,
                "Report the largest micro-batch that fits for each checkpointing policy");
  return [cmd, f]() {
    if (!cmd->parsed()) return -1;
    return run_train(*f);
  };
}

}  // namespace vramsim::cli
