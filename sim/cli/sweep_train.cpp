#include "sim/cli/sweep_train.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"

namespace vramsim::cli {

namespace {

int to_int(std::int64_t v) { return static_cast<int>(std::clamp<std::int64_t>(v, -1, 1 << 30)); }

/// Files problems under the scenario field (and its file:line) that set the value a
/// TrainingPlan::validate flag name stands for.
class Where {
 public:
  template <class T>
  T value(const std::string& flag, const std::optional<io::Located<T>>& v, T fallback) {
    if (!v) return fallback;
    at_[flag] = {v->field, v->where};
    return v->value;
  }
  void error(const std::string& flag, const std::string& message) {
    const auto it = at_.find(flag);
    if (it == at_.end()) {
      report.error(flag, message);
    } else {
      report.error(it->second.first, message, it->second.second);
    }
  }
  ValidationReport report;

 private:
  std::map<std::string, std::pair<std::string, SourceLocation>> at_;
};

/// `load()`, with problems that name no file placed at the scenario value `v` that asked for it.
template <class Load>
auto at_value(const io::Located<std::string>& v, Load load) {
  try {
    return load();
  } catch (const ConfigError& e) {
    ValidationReport report;
    for (const Problem& p : e.report().problems()) {
      const bool unplaced = p.where.file.empty();
      report.error(unplaced ? v.field : p.field, p.message, unplaced ? v.where : p.where);
    }
    throw ConfigError(report);
  }
}

}  // namespace

training::TrainingSetup resolve_training_point(const io::TrainingScenario& sc) {
  Where w;
  const std::string model = w.value<std::string>("--model", sc.model, "");
  const std::string gpu = w.value<std::string>("--gpu", sc.gpu, "");
  if (model.empty()) w.error("model.id", "required: a zoo id or a config.json path");
  if (gpu.empty()) w.error("hardware.gpu", "required: a device id, see `vramsim list gpus`");
  throw_if_errors(w.report);

  training::TrainingPlan p;
  p.num_gpus = to_int(w.value("--num-gpus", sc.num_gpus, std::int64_t{1}));
  p.tp = to_int(w.value("--tp", sc.tp, std::int64_t{1}));
  p.pp = to_int(w.value("--pp", sc.pp, std::int64_t{1}));
  p.pp_interleave = to_int(w.value("--pp-interleave", sc.pp_interleave, std::int64_t{1}));
  p.micro_batch = w.value("--micro-batch", sc.micro_batch, std::int64_t{1});
  p.global_batch = w.value("--global-batch", sc.global_batch, std::int64_t{0});
  p.seq_len = w.value("--seq-len", sc.seq_len, std::int64_t{2048});
  p.sequence_parallel = w.value("--sequence-parallel", sc.sequence_parallel, false);
  p.offload_optimizer = w.value("--offload-optimizer", sc.offload_optimizer, false);
  const auto parse = [&](const std::string& flag, const std::optional<io::Located<std::string>>& v,
                         auto from_string, std::string_view names, auto& target) {
    const std::string text = w.value<std::string>(flag, v, "");
    if (text.empty()) return;
    if (auto parsed = from_string(text)) {
      target = *parsed;
    } else {
      w.error(flag, fmt::format("unknown value '{}'; valid: {}", text, names));
    }
  };
  parse("--strategy", sc.strategy, training::strategy_from_string, training::strategy_names(),
        p.strategy);
  parse("--pp-schedule", sc.pp_schedule, training::pipeline_schedule_from_string,
        training::pipeline_schedule_names(), p.schedule);
  parse("--checkpointing", sc.checkpointing, training::checkpointing_from_string,
        "none, full, selective, every:K", p.checkpointing);
  parse("--precision", sc.precision, training::precision_from_string,
        training::precision_names(), p.precision);
  parse("--optimizer", sc.optimizer, training::optimizer_from_string,
        training::optimizer_names(), p.optimizer);
  throw_if_errors(w.report);

  const std::filesystem::path root = project_root();
  training::TrainingSetup s{
      at_value(*sc.model, [&] { return model::load_model(model, root / "scenarios" / "models"); }),
      at_value(*sc.gpu, [&] { return io::find_device(gpu, root / "topologies", "hardware.gpu"); }),
      p,
      {}};
  s.links = training::default_cluster_links(s.device);
  std::optional<int> node_gpus;
  if (sc.topology) {
    // TODO(sweep): load_cluster_topology takes a node id or a node file on the trainfix branch.
    const io::ClusterTopology t = io::load_cluster_topology(sc.topology->value);
    if (t.node) {
      const hardware::NodeSpec node = io::find_node(*t.node, root / "topologies", "node");
      ValidationReport nr;
      hardware::validate_node_for_device(node, s.device, nr, "node");
      throw_if_errors(nr);
      if (auto bw = hardware::fabric_bandwidth(node, s.device)) {
        s.links.intra = {*bw, node.fabric.latency};
      }
      node_gpus = node.num_gpus;
    }
    if (t.network_bandwidth) s.links.inter.bandwidth = *t.network_bandwidth;
    if (t.network_latency) s.links.inter.latency = *t.network_latency;
  }
  // As `vramsim train`: the node's GPUs, else one node of up to 8 GPUs.
  const std::int64_t default_per_node = node_gpus.value_or(std::clamp(p.num_gpus, 1, 8));
  s.plan.gpus_per_node = to_int(w.value("--gpus-per-node", sc.gpus_per_node, default_per_node));
  if (!sc.gpus_per_node) {
    s.plan.gpus_per_node = to_int(std::min<std::int64_t>(default_per_node, s.plan.num_gpus));
  }
  ValidationReport plan_report;
  s.plan.validate(plan_report);
  if (plan_report.ok()) s.plan.validate_for_model(s.model, plan_report);
  for (const Problem& pr : plan_report.problems()) w.error(pr.field, pr.message);
  throw_if_errors(w.report);
  return s;
}

}  // namespace vramsim::cli
