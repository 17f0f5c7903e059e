#include "sim/run/train_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "sim/io/toml_reader.hpp"
#include "sim/run/deepspeed_config.hpp"

namespace vramsim::run {

namespace {

using training::TrainingPlan;

std::string_view checkpointing_names() { return training::checkpointing_names(); }

template <auto M>
RawValue get_training_enum(const TrainOptions& o) {
  return RawValue(std::string(training::to_string(o.*M)));
}

std::string_view framework_choices() { return "auto, pytorch, deepspeed, megatron"; }

// "auto" leaves the framework to the strategy and the kernels (TrainingPlan::framework_in_use).
std::optional<std::string> set_framework(TrainOptions& o, const RawValue& v) {
  const std::string& text = std::get<std::string>(v);
  if (text == "auto") {
    o.framework.reset();
  } else if (auto f = training::framework_from_string(text)) {
    o.framework = *f;
  } else {
    return fmt::format("unknown value '{}'; valid: {}", text, framework_choices());
  }
  return std::nullopt;
}
RawValue get_framework(const TrainOptions& o) {
  return RawValue(std::string(o.framework ? training::to_string(*o.framework) : "auto"));
}

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::optional<std::string> set_lora_targets(TrainOptions& o, const RawValue& v) {
  training::Lora lora;
  if (auto problem = parse_lora_targets(std::get<std::string>(v), lora)) return problem;
  o.lora_targets = std::get<std::string>(v);
  return std::nullopt;
}

std::optional<std::string> set_lora_extra(TrainOptions& o, const RawValue& v) {
  training::Lora lora;
  if (auto problem = parse_lora_extra(std::get<std::string>(v), lora)) return problem;
  o.lora_trainable_extra = std::get<std::string>(v);
  return std::nullopt;
}

std::optional<std::string> set_expert_loads(TrainOptions& o, const RawValue& v) {
  std::vector<double> loads;
  if (auto problem = parse_expert_loads(std::get<std::string>(v), loads)) return problem;
  o.expert_loads = std::get<std::string>(v);
  return std::nullopt;
}

std::optional<std::string> set_lora_rank(TrainOptions& o, const RawValue& v) {
  const std::int64_t r = std::get<std::int64_t>(v);
  if (r < 0 || r > 65536) return fmt::format("must be in 0..65536 (0: LoRA off), got {}", r);
  o.lora_rank = r;
  return std::nullopt;
}

std::optional<std::string> set_loss(TrainOptions& o, const RawValue& v) {
  const std::string& text = std::get<std::string>(v);
  if (auto loss = training::loss_from_string(text)) {
    o.loss = *loss;
    return std::nullopt;
  }
  if (text.starts_with("chunked:")) {
    return fmt::format("'{}': chunked:N needs a whole number of chunks N, 1 <= N <= {}", text,
                       training::kMaxLossChunks);
  }
  return fmt::format("unknown value '{}'; valid: {}", text, training::loss_names());
}

// The names of the two list rows, for their help and the schema tests (any comma-separated
// subset is valid; a model's own linears are checked against the model).
std::string_view lora_target_names() {
  return "q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, all-linear";
}
std::string_view lora_extra_names() { return "none, embed_tokens, lm_head, norms"; }

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
    {"model.revision", "--revision", K::kString, "", "main",
     "Branch, tag or commit of a Hugging Face id (hub cache and hub; as vLLM's --revision)",
     P::kNone, nullptr, set_plain<&O::revision>, get_plain<&O::revision>},
    {"model.attention", "--attention", K::kString, "", kPlanDefault,
     "Attention core: flash (one fused kernel, causal FLOPs) or eager (batched GEMMs over the "
     "full s^2 scores with softmax and dropout, as Megatron-LM 2022)",
     P::kNone, training::attention_names,
     set_enum<&O::attention, training::attention_from_string, training::attention_names>,
     get_training_enum<&O::attention>},
    {"model.kernels", "--kernels", K::kString, "", kPlanDefault,
     "Memory-bound kernels: eager (PyTorch modules as Hugging Face writes them) or megatron "
     "(fused LayerNorm, bias-GeLU, bias-dropout-add, dropout); with ddp or zero1 it also implies "
     "--framework megatron unless one is given",
     P::kNone, training::kernels_names,
     set_enum<&O::kernels, training::kernels_from_string, training::kernels_names>,
     get_training_enum<&O::kernels>},
    {"parallel.framework", "--framework", K::kString, "", "auto",
     "The framework that owns gradients and optimizer: pytorch (DDP bucket copies; fsdp-*), "
     "deepspeed (ZeRO 0-3 with its IPG bucket, fp32 step conversion and reuse) or megatron "
     "(fp32 main gradients under bf16, reduced in place; zero1 = distributed optimizer); auto: "
     "fsdp-* pytorch, zero* deepspeed, except zero1 and ddp under --kernels megatron",
     P::kNone, framework_choices, set_framework, get_framework},
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
    {"parallel.cp", "--cp", K::kInt, "", kPlanDefault,
     "Context-parallel degree: each rank holds seq_len / cp tokens of every sequence",
     P::kNone, nullptr, set_plain<&O::cp>, get_plain<&O::cp>},
    {"parallel.cp_comm", "--cp-comm", K::kString, "", kPlanDefault,
     "How context-parallel ranks exchange attention inputs: ring (Megatron-LM / "
     "TransformerEngine, torchtitan) or all-to-all (DeepSpeed-Ulysses)",
     P::kNone, training::cp_comm_names,
     set_enum<&O::cp_comm, training::cp_comm_from_string, training::cp_comm_names>,
     get_training_enum<&O::cp_comm>},
    {"parallel.ep", "--ep", K::kInt, "", kPlanDefault,
     "Expert-parallel degree (MoE): routed experts split over ep of the cp x dp ranks",
     P::kNone, nullptr, set_plain<&O::ep>, get_plain<&O::ep>},
    {"parallel.expert_load_imbalance", "--expert-load-imbalance", K::kDouble, "ratio",
     "1: uniform routing, the lower bound",
     "MoE: the busiest expert's tokens over the mean (>= 1); with --ep the rank holding it "
     "computes and receives that much more; it depends on the model and the data",
     P::kNone, nullptr, set_plain<&O::expert_load_imbalance>,
     get_plain<&O::expert_load_imbalance>},
    {"parallel.expert_loads", "--expert-loads", K::kString, "",
     "none: --expert-load-imbalance",
     "MoE: measured routing, tokens (or shares) per routed expert in expert order, "
     "comma-separated (e.g. Megatron-LM's per-expert token counts); expert i sits on EP rank "
     "i / (experts / ep); the busiest rank's load and the tokens the capacity drops follow",
     P::kNone, nullptr, set_expert_loads, get_plain<&O::expert_loads>},
    {"parallel.moe_capacity_factor", "--moe-capacity-factor", K::kDouble, "ratio",
     "0: dropless",
     "MoE expert capacity as a multiple of the balanced load (Megatron-LM "
     "--moe-expert-capacity-factor): tokens beyond it are dropped",
     P::kNone, nullptr, set_plain<&O::moe_capacity_factor>, get_plain<&O::moe_capacity_factor>},
    {"parallel.fsdp_wrap_embeddings", "--fsdp-wrap-embeddings", K::kBool, "", kPlanDefault,
     "PyTorch FSDP (fsdp-full, hsdp): the embedding and head are FSDP units of their own "
     "(torchtune's custom_sharded_layers tok_embeddings, output), resharded after forward; "
     "without it they sit in the root unit, unsharded from forward to the end of backward (the "
     "other strategies have no root unit: ZeRO-3 frees every block after use)",
     P::kNone, nullptr, set_plain<&O::fsdp_wrap_embeddings>,
     get_plain<&O::fsdp_wrap_embeddings>},
    {"parallel.moe_pad_to_capacity", "--moe-pad-to-capacity", K::kBool, "", kPlanDefault,
     "Pad every expert's input to its capacity (Megatron-LM "
     "--moe-pad-expert-input-to-capacity; needs --moe-capacity-factor)",
     P::kNone, nullptr, set_plain<&O::moe_pad_to_capacity>, get_plain<&O::moe_pad_to_capacity>},
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
    {"batch.sample_lengths", "--sample-lengths", K::kString, "",
     "none: every sequence is seq_len tokens of data",
     "The dataset's sample lengths: a trace file (any --trace-format) or a length CSV "
     "(num_prefill_tokens,num_decode_tokens,...), each row's prompt + output tokens one sample, "
     "truncated to --seq-len; with --packing they shape the step and count its tokens of data",
     P::kFile, nullptr, set_plain<&O::sample_lengths>, get_plain<&O::sample_lengths>},
    {"batch.packing", "--packing", K::kString, "", kPlanDefault,
     "How samples fill sequences: padded (each micro-batch padded to its longest sample), "
     "concat (concatenated to --seq-len, attention across samples) or documents (concatenated, "
     "attention within each sample: varlen / document mask)",
     P::kNone, training::packing_names,
     set_enum<&O::packing, training::packing_from_string, training::packing_names>,
     get_training_enum<&O::packing>},
    {"memory.checkpointing", "--checkpointing", K::kString, "", kPlanDefault,
     "Activation checkpointing", P::kNone, checkpointing_names,
     set_enum<&O::checkpointing, training::checkpointing_from_string, checkpointing_names>,
     get_training_enum<&O::checkpointing>},
    {"memory.loss", "--loss", K::kString, "", kPlanDefault,
     "How the lm head and cross-entropy hold the logits: vocab-parallel (Megatron-LM: the fp32 "
     "softmax of all logits kept), full (Hugging Face transformers: bf16 logits, an fp32 copy "
     "and the fp32 log-softmax), chunked:N (torchtune CEWithChunkedOutputLoss, N chunks of "
     "tokens; its recipes use 8), fused (Liger fused linear cross-entropy)",
     P::kNone, training::loss_names, set_loss, get_training_enum<&O::loss>},
    {"memory.precision", "--precision", K::kString, "", kPlanDefault,
     "Compute and state precision", P::kNone, training::precision_names,
     set_enum<&O::precision, training::precision_from_string, training::precision_names>,
     get_training_enum<&O::precision>},
    {"memory.optimizer", "--optimizer", K::kString, "", kPlanDefault, "Optimizer", P::kNone,
     training::optimizer_names,
     set_enum<&O::optimizer, training::optimizer_from_string, training::optimizer_names>,
     get_training_enum<&O::optimizer>},
    {"memory.optimizer_impl", "--optimizer-impl", K::kString, "", kPlanDefault,
     "How torch.optim's Adam/AdamW steps (PyTorch only): fused (fused=True, Hugging Face "
     "Trainer's default from torch 2.8) or foreach (torch.optim's default on CUDA: a pass per "
     "operation and a copy of one state at the step)",
     P::kNone, training::optimizer_impl_names,
     set_enum<&O::optimizer_impl, training::optimizer_impl_from_string,
              training::optimizer_impl_names>,
     get_training_enum<&O::optimizer_impl>},
    {"memory.offload_optimizer", "--offload-optimizer", K::kBool, "", kPlanDefault,
     "Optimizer state and step on the host", P::kNone, nullptr, set_plain<&O::offload_optimizer>,
     get_plain<&O::offload_optimizer>},
    {"memory.offload_optimizer_device", "--offload-optimizer-device", K::kString, "",
     kPlanDefault,
     "Where --offload-optimizer keeps master weights and optimizer states: cpu (host memory) "
     "or nvme (ZeRO-Infinity, zero3; fp32 gradients too, swapped through host buffers; needs "
     "--nvme-bandwidth); the step runs on the CPU either way",
     P::kNone, training::offload_device_names,
     set_enum<&O::offload_optimizer_device, training::offload_device_from_string,
              training::offload_device_names>,
     get_training_enum<&O::offload_optimizer_device>},
    {"memory.sub_group_size", "--sub-group-size", K::kInt, "elements", kPlanDefault,
     "DeepSpeed ZeRO-3's zero_optimization.sub_group_size: the optimizer steps (and with "
     "NVMe swaps) its partition in sub-groups of this many elements",
     P::kNone, nullptr, set_plain<&O::sub_group_size>, get_plain<&O::sub_group_size>},
    {"memory.cpu_adam_rate", "--cpu-adam-rate", K::kDouble, "parameters/s",
     "1e9: an assumption of the order ZeRO-Offload reports (DeepSpeed's tutorial log of a DGX-2 "
     "host: 1.62e9)",
     "Parameters per second the host's CPU Adam (DeepSpeedCPUAdam) updates for one GPU with "
     "--offload-optimizer; your host's: parameters per GPU / DeepSpeed's optimizer_step time",
     P::kNone, nullptr, set_plain<&O::cpu_adam_rate>, get_plain<&O::cpu_adam_rate>},
    {"memory.offload_params", "--offload-params", K::kString, "", kPlanDefault,
     "Where ZeRO-3 / FSDP parameter shards rest: none, cpu (ZeRO-Offload, FSDP CPUOffload) or "
     "nvme (ZeRO-Infinity); each block's shard is fetched before its all-gather (needs "
     "--offload-optimizer)",
     P::kNone, training::offload_params_names,
     set_enum<&O::offload_params, training::offload_params_from_string,
              training::offload_params_names>,
     get_training_enum<&O::offload_params>},
    {"hardware.nvme_bandwidth", "--nvme-bandwidth", K::kDouble, "GB/s",
     "0: none (required with --offload-params nvme or --offload-optimizer-device nvme)",
     "Read/write bandwidth of the NVMe drives one GPU's offloaded shards use (decimal GB/s)",
     P::kNone, nullptr, set_plain<&O::nvme_bandwidth>, get_plain<&O::nvme_bandwidth>},
    {"parallel.ddp_bucket_cap", "--ddp-bucket-cap", K::kBytes, "bytes", kPlanDefault,
     "Gradient bucket of the bucketed all-reduce (ddp, fsdp-no-shard, zero1), with its unit "
     "(PyTorch DDP's bucket_cap_mb, which is MiB)",
     P::kNone, nullptr, set_bytes<&O::ddp_bucket_cap>, get_bytes<&O::ddp_bucket_cap>},
    {"parallel.reduce_bucket_size", "--reduce-bucket-size", K::kInt, "elements", kPlanDefault,
     "DeepSpeed ZeRO's zero_optimization.reduce_bucket_size (zero1/2/3 under DeepSpeed, see "
     "--framework; other runs ignore it): elements of its gradient reduction bucket, a buffer "
     "in the gradient dtype (Hugging Face Trainer's \"auto\" writes hidden_size^2)",
     P::kNone, nullptr, set_plain<&O::reduce_bucket_size>, get_plain<&O::reduce_bucket_size>},
    {"parallel.contiguous_gradients", "--contiguous-gradients", K::kBool, "", kPlanDefault,
     "DeepSpeed ZeRO's contiguous_gradients: the reduction bucket is a preallocated flat buffer",
     P::kNone, nullptr, set_plain<&O::contiguous_gradients>,
     get_plain<&O::contiguous_gradients>},
    {"parallel.overlap_comm", "--overlap-comm", K::kBool, "",
     "false (DeepSpeed's default for zero1 and zero2; ZeRO-3 keeps one bucket either way)",
     "DeepSpeed ZeRO-1/2's overlap_comm: reductions overlap the backward, with two buckets",
     P::kNone, nullptr, set_plain<&O::overlap_comm>, get_plain<&O::overlap_comm>},
    {"parallel.deepspeed_config", "--deepspeed-config", K::kString, "", "none",
     "A DeepSpeed configuration (ds_config.json, as deepspeed.initialize or Hugging Face "
     "Trainer's --deepspeed take it): its ZeRO stage, offload, buckets, precision, optimizer "
     "and batch sizes set the run; a flag or scenario value must agree with it; keys that "
     "change nothing here are accepted, others refused by name (sim/run/deepspeed_config.hpp)",
     P::kFile, nullptr, set_plain<&O::deepspeed_config>, get_plain<&O::deepspeed_config>},
    {"parallel.max_reuse_distance", "--stage3-max-reuse-distance", K::kInt, "elements",
     kPlanDefault,
     "DeepSpeed ZeRO-3's stage3_max_reuse_distance: a block's gathered parameters stay until "
     "its backward when the parameters used in between are fewer (the head always, the last "
     "layers of small models)",
     P::kNone, nullptr, set_plain<&O::max_reuse_distance>, get_plain<&O::max_reuse_distance>},
    {"parallel.param_persistence_threshold", "--stage3-param-persistence-threshold", K::kInt,
     "elements", kPlanDefault,
     "DeepSpeed ZeRO-3's stage3_param_persistence_threshold (zero3 only): a parameter tensor of "
     "at most this many elements (the norms, biases) is not partitioned: whole on every GPU, "
     "never gathered",
     P::kNone, nullptr, set_plain<&O::param_persistence_threshold>,
     get_plain<&O::param_persistence_threshold>},
    {"parallel.model_persistence_threshold", "--stage3-model-persistence-threshold", K::kInt,
     "elements", kPlanDefault,
     "DeepSpeed ZeRO-3's stage3_model_persistence_threshold (zero3 only): the most elements "
     "persistent in all (tensors past it, in module order, are partitioned; default unlimited)",
     P::kNone, nullptr, set_plain<&O::model_persistence_threshold>,
     get_plain<&O::model_persistence_threshold>, {}, {}, kNoIntBound},  // sys.maxsize: any int64
    {"parallel.prefetch_bucket_size", "--stage3-prefetch-bucket-size", K::kInt, "elements",
     kPlanDefault,
     "DeepSpeed ZeRO-3's stage3_prefetch_bucket_size (zero3 only): elements of the next blocks' "
     "parameters all-gathered ahead while a block computes; 0: each gather waits for its block",
     P::kNone, nullptr, set_plain<&O::prefetch_bucket_size>,
     get_plain<&O::prefetch_bucket_size>},
    {"parallel.max_live_parameters", "--stage3-max-live-parameters", K::kInt, "elements",
     kPlanDefault,
     "DeepSpeed ZeRO-3's stage3_max_live_parameters (zero3 only): no prefetch while this many "
     "gathered elements are alive (a block's own parameters are gathered regardless)",
     P::kNone, nullptr, set_plain<&O::max_live_parameters>, get_plain<&O::max_live_parameters>},
    {"lora.rank", "--lora-rank", K::kInt, "", "0: LoRA off (full-parameter training)",
     "LoRA rank r of the adapters (PEFT LoraConfig r); 0 trains every parameter", P::kNone,
     nullptr, set_lora_rank, get_plain<&O::lora_rank>},
    {"lora.alpha", "--lora-alpha", K::kDouble, "", "training::Lora (sim/training/training_plan.hpp)",
     "LoRA alpha (the adapters' output scaled by alpha / r; no memory or time of its own)",
     P::kNone, nullptr, set_plain<&O::lora_alpha>, get_plain<&O::lora_alpha>},
    {"lora.dropout", "--lora-dropout", K::kDouble, "", "training::Lora (0: no dropout)",
     "LoRA dropout on the adapters' input; > 0 keeps a dropped copy and its mask per adapter",
     P::kNone, nullptr, set_plain<&O::lora_dropout>, get_plain<&O::lora_dropout>},
    {"lora.targets", "--lora-targets", K::kString, "", "PEFT's default for Llama: q_proj,v_proj",
     "Linear modules that get adapters, as PEFT names them (q_proj,k_proj,v_proj,o_proj,"
     "gate_proj,up_proj,down_proj), or all-linear (every decoder linear, not lm_head)",
     P::kNone, lora_target_names, set_lora_targets, get_plain<&O::lora_targets>},
    {"lora.trainable_extra", "--lora-trainable-extra", K::kString, "", "none",
     "Base modules trained beside the adapters (PEFT modules_to_save): embed_tokens, lm_head, "
     "norms, comma-separated, or none",
     P::kNone, lora_extra_names, set_lora_extra, get_plain<&O::lora_trainable_extra>},
    {"lora.base_quant", "--base-quant", K::kString, "", kPlanDefault,
     "Storage of the frozen base's decoder linears (bitsandbytes): none, nf4 / fp4 (QLoRA, "
     "4-bit, 64-value blocks), int8 (LLM.int8())",
     P::kNone, training::base_quant_names,
     set_enum<&O::base_quant, training::base_quant_from_string, training::base_quant_names>,
     get_training_enum<&O::base_quant>},
    {"lora.double_quant", "--double-quant", K::kBool, "", kPlanDefault,
     "bnb_4bit_use_double_quant: the 4-bit blocks' absmax quantized to 8 bits (nf4 / fp4)",
     P::kNone, nullptr, set_plain<&O::double_quant>, get_plain<&O::double_quant>},
    {"memory.paged_optimizer", "--paged-optimizer", K::kBool, "", kPlanDefault,
     "bitsandbytes paged optimizer (paged_adamw_32bit / paged_adamw_8bit): its states in "
     "unified memory, counted in host memory (the driver pages them out when the GPU is full)",
     P::kNone, nullptr, set_plain<&O::paged_optimizer>, get_plain<&O::paged_optimizer>},
};

}  // namespace

std::optional<std::string> parse_lora_targets(std::string_view targets, training::Lora& lora) {
  lora.targets.clear();
  lora.all_linear = false;
  if (targets == "all-linear") {
    lora.all_linear = true;
    return std::nullopt;
  }
  for (std::string_view name : split_commas(targets)) {
    if (name == "all-linear") return "all-linear stands alone (it names every linear)";
    const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '.';
    });
    if (!ok) {
      return fmt::format("'{}' is not a module name: give comma-separated names "
                         "(q_proj,v_proj) or all-linear",
                         name);
    }
    lora.targets.emplace_back(name);
  }
  return std::nullopt;
}

std::optional<std::string> parse_expert_loads(std::string_view text, std::vector<double>& loads) {
  loads.clear();
  if (text.empty()) return std::nullopt;
  const std::vector<std::string_view> items = split_commas(text);
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string_view item = items[i];
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    double v = 0.0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() ||
        !(v >= 0.0 && v <= 1e18)) {
      return fmt::format("item {} ('{}') is not a load: give comma-separated numbers >= 0, one "
                         "per routed expert",
                         i + 1, item);
    }
    loads.push_back(v);
  }
  return std::nullopt;
}

std::optional<std::string> parse_lora_extra(std::string_view extra, training::Lora& lora) {
  lora.train_embeddings = lora.train_lm_head = lora.train_norms = false;
  if (extra == "none") return std::nullopt;
  for (std::string_view name : split_commas(extra)) {
    if (name == "embed_tokens") {
      lora.train_embeddings = true;
    } else if (name == "lm_head") {
      lora.train_lm_head = true;
    } else if (name == "norms") {
      lora.train_norms = true;
    } else {
      return fmt::format("unknown module '{}'; valid: embed_tokens, lm_head, norms "
                         "(comma-separated), or none",
                         name);
    }
  }
  return std::nullopt;
}

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

namespace {

// `first` (flags over the scenario) with the settings of its DeepSpeed configuration between
// the flags and the scenario's own values; a setting the flags or the scenario also give must
// agree with the configuration.
TrainOptions with_deepspeed_config(const TrainOptions& first, const TrainScenario& scenario,
                                   const GivenValues& flags, ValidationReport& report) {
  DeepSpeedSettings ds = read_deepspeed_config(first.deepspeed_config, report);
  const TrainOptions alone =
      resolve_options(train_option_rows(), TrainScenario{"", "", ds.values}, {}, report);
  TrainScenario merged = scenario;
  for (auto& [path, given] : ds.values) {
    if (!flags.contains(path) && !scenario.values.contains(path)) {
      merged.values[path] = std::move(given);
      continue;
    }
    const TrainOptionRow* row = find_train_option(path);
    const RawValue mine = row->get(first), theirs = row->get(alone);
    if (mine == theirs) continue;
    const Origin& at = first.origin(path);
    const std::string who = at.kind == OriginKind::kFlag
                                ? at.flag
                                : fmt::format("{}:{}", at.where.file, at.where.line);
    report.error(path,
                 fmt::format("{} sets {} but the DeepSpeed configuration sets {}: they must agree",
                             who, raw_to_toml(mine), raw_to_toml(theirs)),
                 given.origin.where);
  }
  TrainOptions o = resolve_options(train_option_rows(), merged, flags, report);
  o.reduce_bucket_size_auto = ds.reduce_bucket_size_auto &&
                              o.origin("parallel.reduce_bucket_size").kind == OriginKind::kDefault;
  o.prefetch_bucket_size_auto =
      ds.prefetch_bucket_size_auto &&
      o.origin("parallel.prefetch_bucket_size").kind == OriginKind::kDefault;
  o.param_persistence_threshold_auto =
      ds.param_persistence_threshold_auto &&
      o.origin("parallel.param_persistence_threshold").kind == OriginKind::kDefault;
  if (ds.gradient_accumulation_steps && o.tp > 0 && o.pp > 0 && o.cp > 0) {
    // DeepSpeed: train_batch_size = micro-batch x accumulation steps x data-parallel ranks.
    const std::int64_t dp = o.num_gpus / (o.tp * o.pp * o.cp);
    const std::int64_t global = o.micro_batch * *ds.gradient_accumulation_steps * dp;
    if (o.origin("batch.global_batch").kind == OriginKind::kDefault) {
      o.global_batch = global;
    } else if (o.global_batch != global) {
      report.error("batch.global_batch",
                   fmt::format("{} sequences, but the DeepSpeed configuration's "
                               "gradient_accumulation_steps {} x micro-batch {} x {} "
                               "data-parallel ranks is {}",
                               o.global_batch, *ds.gradient_accumulation_steps, o.micro_batch,
                               dp, global),
                   {first.deepspeed_config, 0});
    }
  }
  return o;
}

}  // namespace

TrainOptions resolve_train_options(const TrainScenario& scenario, const GivenValues& flags) {
  ValidationReport report;
  TrainOptions o = resolve_options(train_option_rows(), scenario, flags, report);
  if (!o.deepspeed_config.empty() && report.ok()) {
    o = with_deepspeed_config(o, scenario, flags, report);
  }
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
