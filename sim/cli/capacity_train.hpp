// `vramsim capacity train`: for the user's parallel plan, under each checkpointing policy, the
// largest micro-batch that fits (at the plan's sequence length) and the longest sequence that
// fits (at micro-batch 1).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/cli/train_config.hpp"

namespace vramsim::cli {

struct TrainCapacityRow {
  std::string checkpointing;
  std::int64_t max_micro_batch = 0;  // at the plan's seq_len; 0: not even 1 fits
  std::int64_t max_seq_len = 0;      // at micro-batch 1, a multiple of kSeqLenStep; 0: none
  double tokens_per_s_at_max_micro_batch = 0.0;
  std::int64_t num_runs = 0;  // simulations both searches ran for this policy
};

/// Sequence lengths are searched in steps of this many tokens (a multiple of every TP degree
/// and of the usual attention tile).
inline constexpr std::int64_t kSeqLenStep = 128;

/// Both searches under each policy ("none", "selective", "every:2", "full"). When `probes` is
/// given, every simulated step is appended to it, in order.
std::vector<TrainCapacityRow> capacity_train(const TrainFlags& f, training::TrainingSetup& setup,
                                             std::vector<TrainProbe>* probes = nullptr);
nlohmann::ordered_json capacity_train_json(const training::TrainingSetup& setup,
                                           const std::vector<TrainCapacityRow>& rows);
std::string capacity_train_table(const training::TrainingSetup& setup,
                                 const std::vector<TrainCapacityRow>& rows);

}  // namespace vramsim::cli
