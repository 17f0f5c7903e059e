#include "sim/cli/capacity_train.hpp"

#include <fmt/format.h>

namespace vramsim::cli {

std::string capacity_train_table(const training::TrainingSetup& setup,
                                 const std::vector<run::TrainCapacityRow>& rows) {
  const training::TrainingPlan& p = setup.plan;
  std::string out = fmt::format("{} on {} x {}: {}, TP={} PP={}\n", setup.model.name, p.num_gpus,
                                setup.device.id, training::to_string(p.strategy), p.tp, p.pp);
  out += fmt::format("{:<14}{:>26}{:>28}{:>14}\n", "checkpointing",
                     fmt::format("max micro-batch @ {}", p.seq_len), "max seq_len @ micro-batch 1",
                     "tokens/s");
  for (const run::TrainCapacityRow& r : rows) {
    out += fmt::format("{:<14}{:>26}{:>28}{:>14.0f}\n", r.checkpointing, r.max_micro_batch,
                       r.max_seq_len, r.tokens_per_s_at_max_micro_batch);
  }
  return out;
}

}  // namespace vramsim::cli
