#include "sim/cli/capacity_train.hpp"

#include <fmt/format.h>


namespace vramsim::cli {

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
