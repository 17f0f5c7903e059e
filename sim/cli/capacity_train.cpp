#include "sim/cli/capacity_train.hpp"

#include <fmt/format.h>

#include "sim/cli/train_search_output.hpp"

namespace vramsim::cli {
namespace {

// The longest sequence (a multiple of kSeqLenStep, at most 1M tokens) that fits at micro-batch 1.
// Every simulated step is appended to `probes`.
std::int64_t max_seq_len(training::TrainingSetup s, std::vector<TrainProbe>& probes) {
  const std::int64_t m = s.plan.num_micro_batches();
  s.plan.micro_batch = 1;
  s.plan.global_batch = s.plan.dp() * m;
  const auto fits = [&](std::int64_t steps) {
    s.plan.seq_len = steps * kSeqLenStep;
    const training::TrainingResult r =
        training::simulate_training(s, {.num_steps = 1, .record_timeline = false});
    probes.push_back(make_train_probe(training::to_string(s.plan.checkpointing),
                                      TrainSearch::kSeqLen, s.plan, r));
    return r.fits;
  };
  std::int64_t lo = 0;
  std::int64_t hi = 1;
  while (hi * kSeqLenStep <= (std::int64_t{1} << 20) && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi * kSeqLenStep > (std::int64_t{1} << 20)) return lo * kSeqLenStep;
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    if (fits(mid)) lo = mid; else hi = mid;
  }
  return lo * kSeqLenStep;
}

}  // namespace

std::vector<TrainCapacityRow> capacity_train(const TrainFlags&, training::TrainingSetup& setup,
                                             std::vector<TrainProbe>* probes) {
  std::vector<TrainCapacityRow> rows;
  for (const char* policy : {"none", "selective", "every:2", "full"}) {
    training::TrainingSetup s = setup;
    s.plan.checkpointing = *training::checkpointing_from_string(policy);
    TrainCapacityRow row;
    row.checkpointing = policy;
    std::vector<TrainProbe> mine;
    const MaxMicroBatch mb = find_max_micro_batch(s, s.plan.checkpointing, &mine);
    row.max_micro_batch = mb.micro_batch;
    row.tokens_per_s_at_max_micro_batch = mb.micro_batch > 0 ? mb.result.tokens_per_s : 0.0;
    row.max_seq_len = max_seq_len(s, mine);
    row.num_runs = static_cast<std::int64_t>(mine.size());
    if (probes) probes->insert(probes->end(), mine.begin(), mine.end());
    rows.push_back(row);
  }
  return rows;
}

nlohmann::ordered_json capacity_train_json(const training::TrainingSetup& setup,
                                           const std::vector<TrainCapacityRow>& rows) {
  nlohmann::ordered_json j;
  j["mode"] = "train";
  j["model"] = setup.model.name;
  j["gpu"] = setup.device.id;
  j["num_gpus"] = setup.plan.num_gpus;
  j["strategy"] = training::to_string(setup.plan.strategy);
  j["tp"] = setup.plan.tp;
  j["pp"] = setup.plan.pp;
  j["seq_len"] = setup.plan.seq_len;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  std::int64_t num_runs = 0;
  for (const TrainCapacityRow& r : rows) {
    list.push_back({{"checkpointing", r.checkpointing},
                    {"max_micro_batch", r.max_micro_batch},
                    {"max_seq_len", r.max_seq_len},
                    {"tokens_per_s_at_max_micro_batch", r.tokens_per_s_at_max_micro_batch},
                    {"num_runs", r.num_runs}});
    num_runs += r.num_runs;
  }
  j["plans"] = list;
  j["num_runs"] = num_runs;
  return j;
}

std::string capacity_train_table(const training::TrainingSetup& setup,
                                 const std::vector<TrainCapacityRow>& rows) {
  const training::TrainingPlan& p = setup.plan;
  std::string out = fmt::format("{} on {} x {}: {}, TP={} PP={}\n", setup.model.name, p.num_gpus,
                                setup.device.id, training::to_string(p.strategy), p.tp, p.pp);
  out += fmt::format("{:<14}{:>26}{:>28}{:>14}\n", "checkpointing",
                     fmt::format("max micro-batch @ {}", p.seq_len), "max seq_len @ micro-batch 1",
                     "tokens/s");
  for (const TrainCapacityRow& r : rows) {
    out += fmt::format("{:<14}{:>26}{:>28}{:>14.0f}\n", r.checkpointing, r.max_micro_batch,
                       r.max_seq_len, r.tokens_per_s_at_max_micro_batch);
  }
  return out;
}

}  // namespace vramsim::cli
