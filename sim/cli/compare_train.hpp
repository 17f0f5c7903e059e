// `vramsim compare train`: one GPU (when it fits) against N GPUs under DDP, ZeRO-1/2/3, FSDP and
// tensor parallelism, at the same micro-batch and micro-batches per step per data-parallel rank
// (weak scaling: each data-parallel rank keeps its batch, so tokens/s measure the speed-up).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "sim/cli/train_config.hpp"

namespace vramsim::cli {

struct CompareTrainFlags {
  TrainFlags train;
  int num_gpus = 2;
  std::optional<double> price_per_gpu_hour;
};

struct TrainOption {
  std::string name;  // "1 GPU", "DDP x2", "ZeRO-3 x2", "TP=2"
  int num_gpus = 1;
  bool valid = false;      // the plan is possible for this model (else `reason`)
  std::string reason;
  training::TrainingSetup setup;
  training::TrainingResult result;
  double speedup = 0.0;            // tokens/s against the one-GPU option (0: undefined)
  double scaling_efficiency = 0.0; // speedup / num_gpus
};

struct CompareTrainAnswer {
  std::vector<TrainOption> options;  // [0] is one GPU
  std::string verdict;
  std::optional<double> price_per_gpu_hour;
};

CompareTrainAnswer compare_train(const CompareTrainFlags& f);
nlohmann::ordered_json compare_train_json(const CompareTrainAnswer& a);
std::string compare_train_table(const CompareTrainAnswer& a);

}  // namespace vramsim::cli
