// A DeepSpeed configuration (the ds_config.json of deepspeed.initialize, or Hugging Face
// Trainer's --deepspeed) read into training settings, so `train --deepspeed-config FILE` answers
// for the configuration a user already has. Keys follow DeepSpeed's documentation
// (https://www.deepspeed.ai/docs/config-json/) and deepspeed/runtime/zero/config.py:
//
//   key                                       setting
//   train_micro_batch_size_per_gpu            batch.micro_batch
//   train_batch_size                          batch.global_batch
//   gradient_accumulation_steps               batch.global_batch = micro x steps x dp
//   bf16.enabled / fp16.enabled               memory.precision bf16-mixed / fp16-mixed (neither
//                                             section: fp32, DeepSpeed's default)
//   optimizer.type                            memory.optimizer (Adam, AdamW)
//   zero_optimization.stage                   parallel.strategy ddp, zero1, zero2, zero3
//   zero_optimization.offload_optimizer.device memory.offload_optimizer(_device) (none, cpu, nvme)
//   zero_optimization.offload_param.device    memory.offload_params (none, cpu, nvme)
//   zero_optimization.sub_group_size          memory.sub_group_size
//   zero_optimization.reduce_bucket_size      parallel.reduce_bucket_size
//   zero_optimization.contiguous_gradients    parallel.contiguous_gradients
//   zero_optimization.overlap_comm            parallel.overlap_comm (ZeRO-3's default: true)
//   zero_optimization.stage3_max_reuse_distance parallel.max_reuse_distance
//   zero_optimization.stage3_param_persistence_threshold parallel.param_persistence_threshold
//   zero_optimization.stage3_model_persistence_threshold parallel.model_persistence_threshold
//   zero_optimization.stage3_prefetch_bucket_size parallel.prefetch_bucket_size
//   zero_optimization.stage3_max_live_parameters parallel.max_live_parameters
//
// "auto" (Hugging Face Trainer fills it from its own arguments) leaves the setting to the
// command line, the scenario or the default, except reduce_bucket_size, which Trainer sets to
// hidden_size^2, and for zero3 stage3_prefetch_bucket_size (int(0.9 hidden_size^2)) and
// stage3_param_persistence_threshold (10 hidden_size). A value the command line or the scenario
// also sets must agree with it (Trainer refuses mismatches too). Keys that change nothing this
// model counts are accepted (see kAccepted in the .cpp); any other key is refused by name, so
// that nothing is silently ignored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "sim/core/error.hpp"
#include "sim/run/option_schema.hpp"

namespace vramsim::run {

struct DeepSpeedSettings {
  /// Scenario paths and their values, each at the file (and the key's line).
  GivenValues values;
  /// zero_optimization.reduce_bucket_size "auto": hidden_size^2 once the model is known.
  bool reduce_bucket_size_auto = false;
  /// stage3_prefetch_bucket_size / stage3_param_persistence_threshold "auto": int(0.9
  /// hidden_size^2) / 10 hidden_size for a zero3 run (transformers integrations/deepspeed.py).
  bool prefetch_bucket_size_auto = false;
  bool param_persistence_threshold_auto = false;
  /// gradient_accumulation_steps, when given as a number.
  std::optional<std::int64_t> gradient_accumulation_steps;
};

/// Reads `file`; every problem goes to `report` on "parallel.deepspeed_config" at the file (and
/// line where it can be placed).
DeepSpeedSettings read_deepspeed_config(const std::filesystem::path& file,
                                        ValidationReport& report);

}  // namespace vramsim::run
