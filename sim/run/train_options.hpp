// The option schema of training: one row per setting of a training run (its scenario path, its
// flag, its type and unit, its default and where that default comes from, its help text and its
// validation), and the typed, resolved TrainOptions with the origin of every value.
//
// From the table come: the TOML reader of training scenarios (file or text), the CLI11 options
// of `train`, `capacity train` and `compare train` (sim/cli/train_flags.cpp walks the table),
// the one flags-over-scenario-over-default merge (resolve_train_options), the sweepable fields
// of `sweep` grids, the resolved-inputs record stored in results, and the provenance of errors:
// domain code reports config paths ("batch.global_batch"); problem_at() gives each the
// scenario's file:line or the flag that set it. Adding a setting is one row in
// train_options.cpp, a member of TrainOptions, and the code that uses it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/io/sweep_grid.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/run/option_schema.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::run {

/// Every training setting, typed and resolved, with where each value came from.
struct TrainOptions : ResolvedOrigins {  // defaults: TrainingPlan's, written once
  std::string model;        // model.id: zoo id or config.json path
  std::string revision = model::ResolveOptions{}.revision;  // model.revision
  std::string gpu;          // hardware.gpu: device id
  std::int64_t num_gpus = training::TrainingPlan{}.num_gpus;
  std::int64_t gpus_per_node = 0;  // 0: the topology's node, else min(num_gpus, 8)
  std::string topology;     // node id, node file or cluster file; "" for none
  std::string calibration;  // calibration profile path; "" for the datasheet roofline
  training::Strategy strategy = training::TrainingPlan{}.strategy;
  std::int64_t tp = training::TrainingPlan{}.tp;
  std::int64_t cp = training::TrainingPlan{}.cp;
  training::CpComm cp_comm = training::TrainingPlan{}.cp_comm;
  std::int64_t ep = training::TrainingPlan{}.ep;
  double expert_load_imbalance = training::TrainingPlan{}.expert_load_imbalance;
  std::string expert_loads;  // "" or comma-separated tokens per routed expert
  double moe_capacity_factor = training::TrainingPlan{}.moe_capacity_factor;
  bool moe_pad_to_capacity = training::TrainingPlan{}.moe_pad_to_capacity;
  training::OffloadParams offload_params = training::TrainingPlan{}.offload_params;
  double nvme_bandwidth = training::TrainingPlan{}.nvme_gb_per_s;  // GB/s
  std::int64_t pp = training::TrainingPlan{}.pp;
  training::PipelineSchedule pp_schedule = training::TrainingPlan{}.schedule;
  std::int64_t pp_interleave = training::TrainingPlan{}.pp_interleave;
  bool sequence_parallel = training::TrainingPlan{}.sequence_parallel;
  std::int64_t micro_batch = training::TrainingPlan{}.micro_batch;
  std::int64_t global_batch = training::TrainingPlan{}.global_batch;  // 0: micro_batch x dp
  std::int64_t seq_len = training::TrainingPlan{}.seq_len;
  std::string sample_lengths;  // a trace or length CSV: each row's prompt + output is a sample
  training::Packing packing = training::TrainingPlan{}.packing;
  training::Checkpointing checkpointing = training::TrainingPlan{}.checkpointing;
  training::Precision precision = training::TrainingPlan{}.precision;
  training::Optimizer optimizer = training::TrainingPlan{}.optimizer;
  training::OptimizerImpl optimizer_impl = training::TrainingPlan{}.optimizer_impl;
  bool offload_optimizer = training::TrainingPlan{}.offload_optimizer;
  bool fsdp_wrap_embeddings = training::TrainingPlan{}.fsdp_wrap_embeddings;
  training::OffloadDevice offload_optimizer_device =
      training::TrainingPlan{}.offload_optimizer_device;
  std::int64_t sub_group_size = training::TrainingPlan{}.sub_group_size;  // elements
  double cpu_adam_rate = training::TrainingPlan{}.cpu_adam_params_per_second;  // parameters/s
  training::Attention attention = training::TrainingPlan{}.attention;
  training::Kernels kernels = training::TrainingPlan{}.kernels;
  std::optional<training::Framework> framework;  // none: from the strategy and the kernels
  training::Loss loss = training::TrainingPlan{}.loss;
  Bytes ddp_bucket_cap = training::TrainingPlan{}.ddp_bucket;
  std::int64_t reduce_bucket_size = training::TrainingPlan{}.reduce_bucket_size;  // elements
  bool contiguous_gradients = training::TrainingPlan{}.contiguous_gradients;
  bool overlap_comm = training::TrainingPlan{}.overlap_comm;
  std::int64_t max_reuse_distance = training::TrainingPlan{}.max_reuse_distance;  // elements
  // DeepSpeed ZeRO-3's persistence and prefetch, elements (deepspeed_zero3_gather.hpp).
  std::int64_t param_persistence_threshold = training::TrainingPlan{}.param_persistence_threshold;
  std::int64_t model_persistence_threshold = training::TrainingPlan{}.model_persistence_threshold;
  std::int64_t prefetch_bucket_size = training::TrainingPlan{}.prefetch_bucket_size;
  std::int64_t max_live_parameters = training::TrainingPlan{}.max_live_parameters;
  std::string deepspeed_config;  // a ds_config.json whose settings join the scenario's
  /// Set by resolve_train_options: the DeepSpeed configuration's reduce_bucket_size is "auto",
  /// which Hugging Face Trainer fills with hidden_size^2 (resolve_training does, with the model).
  bool reduce_bucket_size_auto = false;
  /// The same for stage3_prefetch_bucket_size (Trainer: int(0.9 hidden_size^2)) and
  /// stage3_param_persistence_threshold (10 hidden_size); zero3 runs only.
  bool prefetch_bucket_size_auto = false;
  bool param_persistence_threshold_auto = false;
  std::int64_t lora_rank = training::Lora{}.rank;  // 0: full-parameter training
  double lora_alpha = training::Lora{}.alpha;
  double lora_dropout = training::Lora{}.dropout;
  std::string lora_targets = "q_proj,v_proj";  // PEFT's default for Llama-style models
  std::string lora_trainable_extra = "none";   // embed_tokens,lm_head,norms or none
  training::BaseQuant base_quant = training::TrainingPlan{}.base_quant;
  bool double_quant = training::TrainingPlan{}.double_quant;
  bool paged_optimizer = training::TrainingPlan{}.paged_optimizer;
};

/// `targets` ("q_proj,v_proj" or "all-linear") and `extra` ("embed_tokens,lm_head,norms" or
/// "none") into `lora` (rank, alpha and dropout untouched); the problem when a list is malformed.
std::optional<std::string> parse_lora_targets(std::string_view targets, training::Lora& lora);
std::optional<std::string> parse_lora_extra(std::string_view extra, training::Lora& lora);
/// "1200,800.5,..." into `loads` (one number per routed expert, each finite and >= 0; "" for
/// none); the problem when the list is malformed.
std::optional<std::string> parse_expert_loads(std::string_view text, std::vector<double>& loads);

using TrainOptionRow = OptionRow<TrainOptions>;

/// The schema, in scenario order.
std::span<const TrainOptionRow> train_option_rows();
/// The row of a scenario path or a flag; nullptr when none.
const TrainOptionRow* find_train_option(std::string_view path_or_flag);

/// The values a training scenario writes, read with the schema. `text` is named `name` in
/// messages; relative paths are taken relative to `base_dir`. Throws ConfigError with every
/// problem at its file:line, unknown keys with "did you mean".
using TrainScenario = ScenarioValues;
TrainScenario load_train_scenario(const std::filesystem::path& file);
TrainScenario load_train_scenario_text(std::string_view text, std::string name,
                                       const std::filesystem::path& base_dir = {});

/// The one merge: per setting, the flag, else the scenario, else the default; every value is
/// converted and validated by its row and its origin recorded. `model.id` and `hardware.gpu`
/// are required. Throws ConfigError with every problem, each at its origin (problem_at).
TrainOptions resolve_train_options(const TrainScenario& scenario, const GivenValues& flags = {});

/// Every problem of `report` whose field is a schema path and which has no location yet, given
/// the scenario's file:line when the scenario set that setting.
ValidationReport located(const TrainOptions& o, const ValidationReport& report);

/// The fields a sweep grid may set in training scenarios (every row), and those holding paths.
io::ScenarioFields training_scenario_fields();

/// The resolved inputs, one entry per row: {"path": {"value": ..., "origin": "default" |
/// "file:line" | "--flag"}}, stored in results.
nlohmann::ordered_json resolved_inputs_json(const TrainOptions& o);

}  // namespace vramsim::run
