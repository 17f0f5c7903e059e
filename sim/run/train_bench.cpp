#include "sim/run/train_bench.hpp"

#include <algorithm>
#include <chrono>

#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/run/plan_train_run.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::run {

using namespace vramsim::training;  // NOTE: the benchmark builds many plans; names stay short

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TrainBenchResult run_train_bench(const std::filesystem::path& root, std::int64_t num_plans) {
  TrainBenchResult out;
  const hardware::DeviceSpec h100 = io::find_device("h100-sxm", root / "topologies");
  const ClusterLinks links = default_cluster_links(h100);
  {
    TrainingPlan p;
    p.num_gpus = 64;
    p.tp = 8;
    p.pp = 8;
    p.schedule = PipelineSchedule::k1F1B;
    p.sequence_parallel = true;
    p.micro_batch = 1;
    p.global_batch = 32;
    p.seq_len = 4096;
    const TrainingSetup s{
        model::load_model("meta-llama/Llama-3.1-70B", root / "scenarios" / "models"), h100, p,
        links};
    const auto t0 = std::chrono::steady_clock::now();
    const TrainingResult r = simulate_training(s, {.num_steps = 2, .record_timeline = true});
    out.step_wall_s = seconds_since(t0);
    out.step_num_ops = r.graph.ops.size();
    out.step_num_events = r.num_events;
    out.step_simulated_s = r.step_time.seconds();
  }
  {
    const model::ModelSpec spec =
        model::load_model("meta-llama/Llama-3.1-8B", root / "scenarios" / "models");
    const Strategy strategies[] = {Strategy::kDdp,   Strategy::kZero1,      Strategy::kZero2,
                                   Strategy::kZero3, Strategy::kFsdpFull,   Strategy::kFsdpGradOp,
                                   Strategy::kHsdp,  Strategy::kFsdpNoShard};
    const char* policies[] = {"none", "selective", "every:2", "full"};
    const int gpus[] = {8, 16, 32, 64};
    const int tps[] = {1, 2, 4, 8};
    const int pps[] = {1, 2, 4, 8};
    const auto t0 = std::chrono::steady_clock::now();
    std::int64_t i = 0;
    while (out.sweep_num_plans < num_plans) {
      const std::int64_t k = i++;
      TrainingPlan p;
      p.strategy = strategies[k % 8];
      p.checkpointing = *checkpointing_from_string(policies[(k / 8) % 4]);
      p.num_gpus = gpus[(k / 32) % 4];
      p.tp = tps[(k / 128) % 4];
      p.pp = pps[(k / 512) % 4];
      p.micro_batch = 1 + (k / 2048) % 4;
      p.seq_len = 4096;
      if (p.num_gpus % (p.tp * p.pp) != 0) continue;
      p.global_batch = p.micro_batch * p.dp() * 2 * p.pp;
      ValidationReport report;
      p.validate(report);
      p.validate_for_model(spec, report);
      if (!report.ok()) continue;
      const TrainingSetup s{spec, h100, p, links};
      const TrainingResult r = simulate_training(s, {.num_steps = 1, .record_timeline = false});
      ++out.sweep_num_plans;
      if (r.fits) ++out.sweep_num_fit;
    }
    out.sweep_wall_s = seconds_since(t0);
  }
  return out;
}

PlanTrainBenchResult run_plan_train_bench(int jobs, int num_micro_batch_values) {
  PlanTrainRequest q;
  q.options = resolve_train_options(load_train_scenario_text(
      "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "num_gpus = 64\n[batch]\nglobal_batch = 256\nseq_len = 4096\n",
      "bench-plan-train.toml"));
  for (int k = 0; k < std::clamp(num_micro_batch_values, 1, 7); ++k) {
    q.micro_batches.push_back(std::int64_t{1} << k);
  }
  q.jobs = std::max(1, jobs);
  const auto t0 = std::chrono::steady_clock::now();
  const PlanTrainAnswer a = plan_train(q);
  PlanTrainBenchResult out;
  out.wall_s = seconds_since(t0);
  out.jobs = q.jobs;
  out.num_plans = a.counts.num_plans;
  out.num_simulated = a.counts.num_simulated;
  out.num_fit = a.counts.num_fit;
  if (!a.fastest.empty()) out.fastest_step_time_s = a.rows[a.fastest.front()].step_time.seconds();
  return out;
}

}  // namespace vramsim::run
