#include "sim/run/train_options.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/io/toml_reader.hpp"

namespace vramsim::run {

namespace {

using training::TrainingPlan;

std::string_view checkpointing_names() { return "none, full, selective, every:K"; }

template <auto M>
RawValue get_training_enum(const TrainOptions& o) {
  return RawValue(std::string(training::to_string(o.*M)));
}

using O = TrainOptions;
using K = ValueKind;
using P = PathRule;
constexpr std::string_view kPlanDefault = "TrainingPlan (sim/training/training_plan.hpp)";

// The schema. Defaults are TrainOptions' initial values (those of TrainingPlan); `get` reads
// them back, so they are written once.
constexpr TrainOptionRow kRows[] = {
    {"model.id", "--model", K::kString, "", "required",
     "Zoo model id (Hugging Face, case-insensitive) or config.json path", P::kModel, nullptr,
     set_plain<&O::model>, get_plain<&O::model>},
    {"model.attention", "--attention", K::kString, "", kPlanDefault,
     "Attention core: flash (one fused kernel, causal FLOPs) or eager (batched GEMMs over the "
     "full s^2 scores with softmax and dropout, as Megatron-LM 2022)",
     P::kNone, training::attention_names,
     set_enum<&O::attention, training::attention_from_string, training::attention_names>,
     get_training_enum<&O::attention>},
    {"model.kernels", "--kernels", K::kString, "", kPlanDefault,
     "Memory-bound kernels: eager (PyTorch modules as Hugging Face writes them) or megatron "
     "(fused LayerNorm, bias-GeLU, bias-dropout-add, dropout; the optimizer step over fp32 "
     "main gradients)",
     P::kNone, training::kernels_names,
     set_enum<&O::kernels, training::kernels_from_string, training::kernels_names>,
     get_training_enum<&O::kernels>},
    {"hardware.gpu", "--gpu", K::kString, "", "required",
     "Device id from topologies/devices (see `vramsim list gpus`)", P::kNone, nullptr,
     set_plain<&O::gpu>, get_plain<&O::gpu>},
    {"hardware.num_gpus", "--num-gpus", K::kInt, "GPUs", kPlanDefault,
     "GPUs in the job (tp x pp x dp)", P::kNone, nullptr, set_plain<&O::num_gpus>,
     get_plain<&O::num_gpus>},
    {"hardware.gpus_per_node", "--gpus-per-node", K::kInt, "GPUs",
     "the topology's node, else min(num_gpus, 8) (one node up to 8 GPUs)",
     "GPUs per node (default: the device's node, 8)", P::kNone, nullptr,
     set_plain<&O::gpus_per_node>, get_plain<&O::gpus_per_node>},
    {"hardware.topology", "--topology", K::kString, "", "none: the device's default links",
     "Node id of topologies/nodes, a node file, or a cluster file (node + inter-node network)",
     P::kFileOrId, nullptr, set_plain<&O::topology>, get_plain<&O::topology>},
    {"hardware.calibration", "--calibration", K::kString, "", "none: the datasheet roofline",
     "Calibration profile (JSON from vramsim-calibrate) for this GPU: measured GEMM, attention "
     "and copy times replace the datasheet roofline where they cover the shapes",
     P::kFile, nullptr, set_plain<&O::calibration>, get_plain<&O::calibration>},
    {"parallel.strategy", "--strategy", K::kString, "", kPlanDefault,
     "Data-parallel sharding", P::kNone,
     training::strategy_names,
     set_enum<&O::strategy, training::strategy_from_string, training::strategy_names>,
     get_training_enum<&O::strategy>},
    {"parallel.tp", "--tp", K::kInt, "", kPlanDefault, "Tensor-parallel degree (Megatron)",
     P::kNone, nullptr, set_plain<&O::tp>, get_plain<&O::tp>},
    {"parallel.pp", "--pp", K::kInt, "", kPlanDefault, "Pipeline-parallel degree", P::kNone,
     nullptr, set_plain<&O::pp>, get_plain<&O::pp>},
    {"parallel.pp_schedule", "--pp-schedule", K::kString, "", kPlanDefault,
     "Pipeline schedule", P::kNone, training::pipeline_schedule_names,
     set_enum<&O::pp_schedule, training::pipeline_schedule_from_string,
              training::pipeline_schedule_names>,
     get_training_enum<&O::pp_schedule>},
    {"parallel.pp_interleave", "--pp-interleave", K::kInt, "chunks", kPlanDefault,
     "Model chunks per device (interleaved schedule)", P::kNone, nullptr,
     set_plain<&O::pp_interleave>, get_plain<&O::pp_interleave>},
    {"parallel.sequence_parallel", "--sequence-parallel", K::kBool, "", kPlanDefault,
     "Megatron sequence parallelism (needs --tp)", P::kNone, nullptr,
     set_plain<&O::sequence_parallel>, get_plain<&O::sequence_parallel>},
    {"batch.micro_batch", "--micro-batch", K::kInt, "sequences", kPlanDefault,
     "Sequences per micro-batch per DP rank", P::kNone, nullptr, set_plain<&O::micro_batch>,
     get_plain<&O::micro_batch>},
    {"batch.global_batch", "--global-batch", K::kInt, "sequences", "0: micro_batch x dp",
     "Sequences per step (default micro-batch x dp)", P::kNone, nullptr,
     set_plain<&O::global_batch>, get_plain<&O::global_batch>},
    {"batch.seq_len", "--seq-len", K::kInt, "tokens", kPlanDefault, "Tokens per sequence",
     P::kNone, nullptr, set_plain<&O::seq_len>, get_plain<&O::seq_len>},
    {"memory.checkpointing", "--checkpointing", K::kString, "", kPlanDefault,
     "Activation checkpointing", P::kNone, checkpointing_names,
     set_enum<&O::checkpointing, training::checkpointing_from_string, checkpointing_names>,
     get_training_enum<&O::checkpointing>},
    {"memory.precision", "--precision", K::kString, "", kPlanDefault,
     "Compute and state precision", P::kNone, training::precision_names,
     set_enum<&O::precision, training::precision_from_string, training::precision_names>,
     get_training_enum<&O::precision>},
    {"memory.optimizer", "--optimizer", K::kString, "", kPlanDefault, "Optimizer", P::kNone,
     training::optimizer_names,
     set_enum<&O::optimizer, training::optimizer_from_string, training::optimizer_names>,
     get_training_enum<&O::optimizer>},
    {"memory.offload_optimizer", "--offload-optimizer", K::kBool, "", kPlanDefault,
     "Optimizer state and step on the host", P::kNone, nullptr, set_plain<&O::offload_optimizer>,
     get_plain<&O::offload_optimizer>},
    {"parallel.ddp_bucket_cap", "--ddp-bucket-cap", K::kBytes, "bytes", kPlanDefault,
     "Gradient bucket of the bucketed all-reduce (ddp, fsdp-no-shard, zero1), with its unit "
     "(PyTorch DDP's bucket_cap_mb, which is MiB)",
     P::kNone, nullptr, set_bytes<&O::ddp_bucket_cap>, get_bytes<&O::ddp_bucket_cap>},
};

}  // namespace

std::span<const TrainOptionRow> train_option_rows() { return kRows; }

const TrainOptionRow* find_train_option(std::string_view path_or_flag) {
  return find_option(train_option_rows(), path_or_flag);
}

TrainScenario load_train_scenario(const std::filesystem::path& file) {
  return load_scenario_file(train_option_rows(), file);
}

TrainScenario load_train_scenario_text(std::string_view text, std::string name,
                                       const std::filesystem::path& base_dir) {
  return load_scenario_text(train_option_rows(), text, std::move(name), base_dir);
}

TrainOptions resolve_train_options(const TrainScenario& scenario, const GivenValues& flags) {
  ValidationReport report;
  TrainOptions o = resolve_options(train_option_rows(), scenario, flags, report);
  if (o.model.empty()) {
    report.error("model.id", "required: a zoo id or a config.json path (or model.id)");
  }
  if (o.gpu.empty()) {
    report.error("hardware.gpu",
                 "required: a device id, see `vramsim list gpus` (or hardware.gpu)");
  }
  throw_if_errors(report);
  return o;
}

ValidationReport located(const TrainOptions& o, const ValidationReport& report) {
  return located(train_option_rows(), o, report);
}

io::ScenarioFields training_scenario_fields() { return scenario_fields(train_option_rows()); }

nlohmann::ordered_json resolved_inputs_json(const TrainOptions& o) {
  return resolved_inputs_json(train_option_rows(), o);
}

}  // namespace vramsim::run
