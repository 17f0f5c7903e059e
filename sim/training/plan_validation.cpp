// TrainingPlan::validate and validate_for_model (training_plan.hpp): every problem of a plan,
// on its scenario path, before anything is simulated.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <tuple>

#include "sim/core/check.hpp"
#include "sim/model/weight_tensors.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::training {

namespace {

// Why a framework does not run a strategy (framework_runs is false).
std::string framework_refusal(Framework framework, Strategy strategy) {
  switch (framework) {
    case Framework::kPytorch:
      return fmt::format("{} is DeepSpeed's ZeRO (or, zero1, Megatron-LM's distributed "
                         "optimizer); PyTorch shards with FSDP: fsdp-grad-op (gradients and "
                         "optimizer states) or fsdp-full (everything)",
                         to_string(strategy));
    case Framework::kDeepspeed:
      return fmt::format("{} is PyTorch's FSDP; DeepSpeed shards with its ZeRO stages: zero1, "
                         "zero2, zero3 (ddp is its stage 0)",
                         to_string(strategy));
    case Framework::kMegatron:
      return fmt::format("Megatron-LM's data parallelism is its DDP (ddp) or its distributed "
                         "optimizer (zero1); {} is not modelled under it (Megatron-FSDP is not)",
                         to_string(strategy));
  }
  VRAMSIM_UNREACHABLE("invalid Framework");
}

}  // namespace

void TrainingPlan::validate(ValidationReport& report) const {
  const auto positive = [&](std::string_view path, std::int64_t v) {
    if (v < 1) report.error(std::string(path), fmt::format("must be at least 1, got {}", v));
    return v >= 1;
  };
  const bool ok = positive("hardware.num_gpus", num_gpus) & positive("parallel.tp", tp) &
                  positive("parallel.pp", pp) & positive("parallel.cp", cp) &
                  positive("parallel.ep", ep) & positive("hardware.gpus_per_node", gpus_per_node);
  positive("batch.micro_batch", micro_batch);
  positive("batch.seq_len", seq_len);
  positive("parallel.pp_interleave", pp_interleave);
  // Upper bounds far beyond any real job, so that products of these (tokens, ranks, seconds in
  // int64 ns) cannot overflow: 2^24 ranks or tokens per sequence, 2^20 sequences per
  // micro-batch, 2^24 per step.
  bool bounded = true;
  const auto at_most = [&](std::string_view path, std::int64_t v, std::int64_t max) {
    if (v <= max) return;
    report.error(std::string(path), fmt::format("must be at most {} (far beyond any real job), "
                                                "got {}",
                                                max, v));
    bounded = false;
  };
  constexpr std::int64_t kMaxCount = std::int64_t{1} << 24;
  at_most("hardware.num_gpus", num_gpus, kMaxCount);
  at_most("parallel.tp", tp, kMaxCount);
  at_most("parallel.pp", pp, kMaxCount);
  at_most("parallel.cp", cp, kMaxCount);
  at_most("parallel.ep", ep, kMaxCount);
  at_most("hardware.gpus_per_node", gpus_per_node, kMaxCount);
  at_most("batch.micro_batch", micro_batch, std::int64_t{1} << 20);
  at_most("batch.seq_len", seq_len, kMaxCount);
  at_most("batch.global_batch", global_batch, kMaxCount);
  at_most("parallel.pp_interleave", pp_interleave, 1024);
  if (!bounded) return;
  if (global_batch < 0) {
    report.error("batch.global_batch", fmt::format("must be positive (or 0 for micro_batch x dp), "
                                               "got {}",
                                               global_batch));
  }
  if (ddp_bucket <= Bytes(0)) report.error("ddp_bucket", "must be positive");
  if (checkpointing.kind == CheckpointKind::kEveryK && checkpointing.every < 1) {
    report.error("memory.checkpointing", "every:K needs K >= 1");
  }
  if (loss.kind == LossKind::kChunked && (loss.chunks < 1 || loss.chunks > kMaxLossChunks)) {
    report.error("memory.loss", fmt::format("chunked:N needs 1 <= N <= {}, got {}",
                                            kMaxLossChunks, loss.chunks));
  }
  if (schedule != PipelineSchedule::kInterleaved && pp_interleave != 1) {
    report.error("parallel.pp_interleave", "only the interleaved schedule takes V > 1");
  }
  if (!ok) return;
  if (static_cast<std::int64_t>(tp) * cp * pp > num_gpus || num_gpus % (tp * cp * pp) != 0) {
    if (cp > 1) {
      report.error("hardware.num_gpus",
                   fmt::format("must be a multiple of tp x cp x pp = {} x {} x {} = {}, got {}",
                               tp, cp, pp, static_cast<std::int64_t>(tp) * cp * pp, num_gpus));
    } else {
      report.error("hardware.num_gpus",
                   fmt::format("must be a multiple of tp x pp = {} x {} = {}, got {}", tp, pp,
                               tp * pp, num_gpus));
    }
    return;
  }
  if (ep > 1 && grad_group() % ep != 0) {
    report.error("parallel.ep",
                 fmt::format("expert parallelism splits the experts over ranks of the cp x dp = "
                             "{} x {} = {} ranks that hold the same dense weights; {} does not "
                             "divide {}",
                             cp, dp(), grad_group(), ep, grad_group()));
  }
  if (cp > 1) {
    if (attention == Attention::kEager) {
      report.error("parallel.cp",
                   "context parallelism runs fused attention kernels (TransformerEngine's and "
                   "torchtitan's ring attention, Ulysses over flash attention); --attention "
                   "eager with --cp > 1 is not a combination they run");
    }
    if (cp_comm == CpComm::kRing && seq_len % (2 * cp) != 0) {
      report.error("batch.seq_len",
                   fmt::format("ring context parallelism splits each sequence into 2 x cp = {} "
                               "chunks (two per rank, balancing the causal mask, as Megatron-LM "
                               "does); {} tokens are not a multiple of {}",
                               2 * cp, seq_len, 2 * cp));
    } else if (cp_comm == CpComm::kAllToAll && seq_len % cp != 0) {
      report.error("batch.seq_len",
                   fmt::format("all-to-all context parallelism gives each rank seq_len / cp "
                               "tokens; {} tokens are not a multiple of cp = {}",
                               seq_len, cp));
    }
  }
  if (micro_batch >= 1 && global_batch > 0 && global_batch % (micro_batch * dp()) != 0) {
    report.error("batch.global_batch",
                 fmt::format("must be a multiple of micro_batch x dp = {} x {} = {}, got {}",
                             micro_batch, dp(), micro_batch * dp(), global_batch));
  }
  // NOTE: 2^32 tokens per micro-batch and 2^34 per step (the largest real steps hold ~1.6 * 10^7
  // tokens) keep FLOPs, bytes and step times in range on the slowest device sheet.
  const double seq = static_cast<double>(seq_len);
  if (static_cast<double>(micro_batch) * seq > 0x1p32) {
    report.error("batch.micro_batch", fmt::format("micro_batch x seq_len = {} tokens per "
                                              "micro-batch, more than 2^32",
                                              micro_batch * seq_len));
  } else if (static_cast<double>(effective_global_batch()) * seq > 0x1p34) {
    report.error("batch.global_batch", fmt::format("{} sequences of {} tokens per step, more than "
                                               "2^34 tokens",
                                               effective_global_batch(), seq_len));
  }
  if (num_gpus > gpus_per_node && num_gpus % gpus_per_node != 0) {
    report.error("hardware.gpus_per_node",
                 fmt::format("{} GPUs do not fill whole nodes of {}", num_gpus, gpus_per_node));
  }
  if (sequence_parallel && tp == 1) {
    report.error("parallel.sequence_parallel", "needs --tp > 1 (it splits the TP-replicated part)");
  }
  if (schedule == PipelineSchedule::kInterleaved) {
    if (pp_interleave < 2) {
      report.error("parallel.pp_interleave",
                   "the interleaved schedule needs V >= 2 chunks per device");
    }
    if (pp > 1 && num_micro_batches() % pp != 0) {
      report.error("batch.global_batch",
                   fmt::format("the interleaved schedule needs the number of micro-batches ({}) "
                               "to be a multiple of pp ({})",
                               num_micro_batches(), pp));
    }
  }
  if (!(expert_load_imbalance >= 1.0 && expert_load_imbalance <= 1e6)) {
    report.error("parallel.expert_load_imbalance",
                 fmt::format("the busiest expert's tokens over the mean: at least 1 (uniform "
                             "routing), got {}",
                             expert_load_imbalance));
  }
  if (!expert_loads.empty()) {
    double sum = 0.0;
    for (std::size_t i = 0; i < expert_loads.size(); ++i) {
      const double v = expert_loads[i];
      if (!(v >= 0.0 && v <= 1e18)) {
        report.error("parallel.expert_loads",
                     fmt::format("expert {}'s load must be a finite number >= 0, got {}", i, v));
      }
      sum += v;
    }
    if (!(sum > 0.0)) {
      report.error("parallel.expert_loads", "every expert's load is 0: nothing is routed");
    }
    if (expert_load_imbalance != 1.0) {
      report.error("parallel.expert_load_imbalance",
                   "give the routing once: --expert-loads (measured per expert) or "
                   "--expert-load-imbalance (the busiest expert alone), not both");
    }
  }
  if (!(moe_capacity_factor >= 0.0 && moe_capacity_factor <= 1e6)) {
    report.error("parallel.moe_capacity_factor",
                 fmt::format("must be 0 (dropless) or positive, got {}", moe_capacity_factor));
  }
  if (moe_pad_to_capacity && !(moe_capacity_factor > 0.0)) {
    report.error("parallel.moe_pad_to_capacity",
                 "padding expert inputs to capacity needs a capacity factor "
                 "(--moe-capacity-factor > 0), as Megatron-LM requires");
  }
  if (ep > 1 && lora.enabled()) {
    report.error("parallel.ep", "LoRA with expert parallelism is not modelled (adapters on "
                                "sharded experts); use --ep 1");
  }
  if (lora.rank < 0 || lora.rank > 65536) {
    report.error("lora.rank", fmt::format("must be in 0..65536 (0: LoRA off), got {}", lora.rank));
  }
  if (lora.enabled()) {
    if (!(lora.alpha > 0.0)) {
      report.error("lora.alpha", fmt::format("must be positive, got {}", lora.alpha));
    }
    if (!(lora.dropout >= 0.0 && lora.dropout < 1.0)) {
      report.error("lora.dropout", fmt::format("must be in [0, 1), got {}", lora.dropout));
    }
    if (lora.targets.empty() && !lora.all_linear) {
      report.error("lora.targets", "names no module: give q_proj,v_proj,... or all-linear");
    }
  } else if (base_quant != BaseQuant::kNone) {
    report.error("lora.base_quant",
                 fmt::format("a {} base is frozen: it needs LoRA adapters to train "
                             "(--lora-rank > 0)",
                             to_string(base_quant)));
  }
  if (offload_params != OffloadParams::kNone) {
    if (strategy != Strategy::kZero3 && strategy != Strategy::kFsdpFull &&
        strategy != Strategy::kHsdp) {
      report.error("memory.offload_params",
                   fmt::format("parameter offload fetches each block's shard before its "
                               "all-gather; {} does not gather parameters per block (use zero3, "
                               "fsdp-full or hsdp)",
                               to_string(strategy)));
    }
    if (!offload_optimizer) {
      report.error("memory.offload_params",
                   "parameters offloaded while the optimizer steps on the device is not a "
                   "configuration DeepSpeed or FSDP runs (FSDP's CPUOffload moves both): add "
                   "--offload-optimizer");
    }
    if (lora.enabled()) {
      report.error("memory.offload_params", "parameter offload with LoRA is not modelled");
    }
    if (offload_params == OffloadParams::kNvme && strategy != Strategy::kZero3) {
      // FSDP's CPUOffload has no NVMe tier; ZeRO-Infinity's offload_param device nvme is
      // DeepSpeed stage 3's (partitioned_param_swapper.py).
      report.error("memory.offload_params",
                   fmt::format("parameters on NVMe are ZeRO-Infinity's, which needs zero3 (got "
                               "{}); FSDP offloads to the CPU only",
                               to_string(strategy)));
    }
  }
  const bool on_nvme = offload_params == OffloadParams::kNvme || optimizer_on_nvme();
  if (on_nvme && !(nvme_gb_per_s > 0.0 && nvme_gb_per_s < 1e6)) {
    report.error("hardware.nvme_bandwidth",
                 fmt::format("{} on NVMe need the read/write bandwidth of the drives one GPU "
                             "uses, in GB/s (no device or node sheet gives it), got {}",
                             offload_params == OffloadParams::kNvme ? "parameters"
                                                                    : "optimizer states",
                             nvme_gb_per_s));
  }
  if (offload_optimizer_device == OffloadDevice::kNvme) {
    if (!offload_optimizer) {
      report.error("memory.offload_optimizer_device",
                   "nvme says where offloaded optimizer states rest: add --offload-optimizer");
    } else if (strategy != Strategy::kZero3) {
      // Only ZeRO-3 swaps optimizer states (stage3.py's optimizer_swapper); stage 1/2 and
      // FSDP offload to host memory only.
      report.error("memory.offload_optimizer_device",
                   fmt::format("optimizer states on NVMe are ZeRO-Infinity's, which needs zero3 "
                               "(got {}); DeepSpeed ZeRO-1/2 and FSDP offload to the CPU only",
                               to_string(strategy)));
    }
  }
  if (packing != Packing::kPadded && !samples) {
    report.error("batch.packing",
                 fmt::format("{} packing concatenates the dataset's samples: give their lengths "
                             "with --sample-lengths (without them every sequence is seq_len "
                             "tokens of data already)",
                             to_string(packing)));
  }
  if (sub_group_size < 1) {
    report.error("memory.sub_group_size",
                 fmt::format("must be at least 1 element, got {}", sub_group_size));
  }
  if (!(cpu_adam_params_per_second > 0) || !std::isfinite(cpu_adam_params_per_second)) {
    report.error("memory.cpu_adam_rate",
                 fmt::format("must be a positive number of parameters per second, got {}",
                             cpu_adam_params_per_second));
  }
  if (reduce_bucket_size < 1) {
    report.error("parallel.reduce_bucket_size",
                 fmt::format("must be at least 1 element, got {}", reduce_bucket_size));
  }
  if (max_reuse_distance < 0) {
    report.error("parallel.max_reuse_distance",
                 fmt::format("must be at least 0 elements, got {}", max_reuse_distance));
  }
  // DeepSpeed ZeRO-3's persistence and prefetch settings (deepspeed/runtime/zero/config.py:
  // each ge=0), which nothing but its stage 3 reads: set away from their defaults for another
  // run they would change nothing, so they are refused rather than ignored.
  const bool zero3 = strategy == Strategy::kZero3 && deepspeed_zero();
  for (const auto& [path, value, fallback] :
       {std::tuple{"parallel.param_persistence_threshold", param_persistence_threshold,
                   kDefaultParamPersistenceThreshold},
        std::tuple{"parallel.model_persistence_threshold", model_persistence_threshold,
                   kDefaultModelPersistenceThreshold},
        std::tuple{"parallel.prefetch_bucket_size", prefetch_bucket_size,
                   kDefaultPrefetchBucketSize},
        std::tuple{"parallel.max_live_parameters", max_live_parameters,
                   kDefaultMaxLiveParameters}}) {
    if (value < 0) {
      report.error(path, fmt::format("must be at least 0 elements, got {}", value));
    } else if (value != fallback && !zero3) {
      report.error(path, fmt::format("is DeepSpeed ZeRO-3's (stage3_{}); this run is {} under "
                                     "{}: use --strategy zero3 with DeepSpeed, or leave it out",
                                     std::string_view(path).substr(9), to_string(strategy),
                                     to_string(framework_in_use())));
    }
  }
  if (framework && !framework_runs(*framework, strategy)) {
    report.error("parallel.framework", framework_refusal(*framework, strategy));
  }
  if (deepspeed_zero() && strategy != Strategy::kZero1 && pp > 1) {
    // deepspeed/runtime/pipe/engine.py: "ZeRO-2 and ZeRO-3 are incompatible with pipeline
    // parallelism".
    report.error("parallel.strategy",
                 fmt::format("DeepSpeed's pipeline engine refuses {} (\"ZeRO-2 and ZeRO-3 are "
                             "incompatible with pipeline parallelism\"): use zero1, or PyTorch's "
                             "fsdp-full with --framework pytorch",
                             to_string(strategy)));
  }
  if (deepspeed_stage0() && precision == Precision::kBf16Mixed && pp > 1) {
    // engine.py _do_optimizer_sanity_check: bf16 under the pipeline engine takes BF16_Optimizer.
    report.error("parallel.framework",
                 "DeepSpeed without ZeRO under pipeline parallelism runs bf16 with its "
                 "BF16_Optimizer (fp32 gradient accumulation), which is not modelled: use zero1");
  }
  if (precision == Precision::kBf16Amp) {
    // Autocast over fp32 weights is how DDP (and one GPU) runs mixed precision in Hugging Face
    // Trainer / accelerate; the sharded frameworks and Megatron-LM hold their own casts.
    if (strategy != Strategy::kDdp && strategy != Strategy::kFsdpNoShard) {
      report.error("memory.precision",
                   fmt::format("bf16-amp (autocast over fp32 weights) is modelled for ddp and "
                               "fsdp-no-shard; {} casts its sharded parameters itself (FSDP's "
                               "MixedPrecision, DeepSpeed's bf16): use bf16-mixed",
                               to_string(strategy)));
    }
    if (framework_in_use() == Framework::kMegatron) {
      report.error("memory.precision",
                   "Megatron-LM keeps bf16 parameters and fp32 main gradients, not autocast: use "
                   "bf16-mixed with Megatron-LM");
    }
    if (framework_in_use() == Framework::kDeepspeed) {
      report.error("memory.precision",
                   "DeepSpeed casts the model itself (its bf16 / fp16 sections), not PyTorch "
                   "autocast: use bf16-mixed with DeepSpeed");
    }
    if (lora.enabled() || base_quant != BaseQuant::kNone) {
      report.error("memory.precision",
                   "bf16-amp with LoRA is not modelled (autocast caches only weights that "
                   "require grad, so a frozen base is cast again at every use): use bf16 or "
                   "bf16-mixed");
    }
  }
  if (optimizer_impl == OptimizerImpl::kForeach) {
    const bool adam = optimizer == Optimizer::kAdamW || optimizer == Optimizer::kAdam;
    if (framework_in_use() != Framework::kPytorch) {
      report.error("memory.optimizer_impl",
                   fmt::format("foreach is torch.optim's; {} steps with its own fused Adam",
                               framework_in_use() == Framework::kDeepspeed ? "DeepSpeed"
                                                                           : "Megatron-LM"));
    } else if (!adam || paged_optimizer) {
      report.error("memory.optimizer_impl",
                   "foreach is modelled for torch.optim's Adam and AdamW (--optimizer adam or "
                   "adamw, not paged)");
    } else if (offload_optimizer) {
      report.error("memory.optimizer_impl",
                   "the offloaded step runs on the CPU, where torch.optim does not default to "
                   "foreach and the device holds none of its intermediates: leave it fused");
    }
  }
  if (checkpointing.kind == CheckpointKind::kSelectiveOp) {
    // torchtitan's op-level policy as its own Llama modules run it (activation_memory.hpp,
    // part 3); elsewhere the saved ops differ.
    std::string why;
    if (tp > 1 || cp > 1) {
      why = "with tensor or context parallelism (row-parallel partial sums, reduce-scatters "
            "and ring attention change what it keeps); use tp = cp = 1";
    } else if (attention == Attention::kEager) {
      why = "with eager attention (it keeps SDPA's outputs); use --attention flash";
    } else if (kernels == Kernels::kMegatron) {
      why = "over Megatron-LM's kernels (it is torchtitan's policy over its PyTorch modules)";
    } else if (framework_in_use() != Framework::kPytorch) {
      why = "under DeepSpeed or Megatron-LM (it is torchtitan's, a PyTorch FSDP/DDP policy)";
    } else if (lora.enabled()) {
      why = "with LoRA (torchtitan trains full parameters)";
    }
    if (!why.empty()) {
      report.error("memory.checkpointing", fmt::format("selective-op is not modelled {}", why));
    }
  }
  if (paged_optimizer && offload_optimizer) {
    report.error("memory.paged_optimizer",
                 "a paged optimizer keeps its states in unified memory and steps on the GPU; "
                 "--offload-optimizer moves them and the step to the CPU: choose one");
  }
  if (offload_optimizer && optimizer == Optimizer::kAdam8bit) {
    report.error("memory.offload_optimizer",
                 "8-bit Adam states cannot be offloaded here (bitsandbytes "
                 "paged optimizers are not modelled)");
  }
}

void TrainingPlan::validate_for_model(const model::ModelSpec& spec,
                                      ValidationReport& report) const {
  if (tp < 1 || pp < 1 || cp < 1 || ep < 1) return;
  if (ep > 1) {
    if (!spec.moe) {
      report.error("parallel.ep", fmt::format("expert parallelism needs a mixture-of-experts "
                                              "model; {} has no routed experts",
                                              spec.name));
    } else if (spec.moe->num_experts % ep != 0) {
      report.error("parallel.ep", fmt::format("{} routed experts do not split evenly over {} "
                                              "expert-parallel ranks",
                                              spec.moe->num_experts, ep));
    }
  }
  if (spec.moe && checkpointing.kind == CheckpointKind::kSelectiveOp) {
    report.error("memory.checkpointing",
                 fmt::format("selective-op is modelled for dense decoder layers; {} has routed "
                             "experts (their grouped matmuls are not in torchtitan's save list)",
                             spec.name));
  }
  if (spec.moe && !expert_loads.empty() &&
      static_cast<std::int64_t>(expert_loads.size()) != spec.moe->num_experts) {
    report.error("parallel.expert_loads",
                 fmt::format("{} loads for {}'s {} routed experts: give one per expert, in "
                             "expert order",
                             expert_loads.size(), spec.name, spec.moe->num_experts));
  }
  if (!spec.moe && (expert_load_imbalance != 1.0 || !expert_loads.empty() ||
                    moe_capacity_factor != 0.0 || moe_pad_to_capacity)) {
    report.error(expert_load_imbalance != 1.0 ? "parallel.expert_load_imbalance"
                 : !expert_loads.empty()      ? "parallel.expert_loads"
                                              : "parallel.moe_capacity_factor",
                 fmt::format("routing settings need a mixture-of-experts model; {} has no routed "
                             "experts",
                             spec.name));
  }
  if (cp > 1 && cp_comm == CpComm::kAllToAll) {
    // Ulysses gives each rank num_heads / (tp * cp) heads of the whole sequence.
    const std::int64_t heads = spec.num_attention_heads / tp;
    const std::int64_t kv_heads = spec.mla ? heads : spec.num_kv_heads / tp;
    if (heads % cp != 0 || kv_heads % cp != 0) {
      report.error("parallel.cp",
                   fmt::format("all-to-all context parallelism splits the heads of each TP rank "
                               "({} query, {} key/value) over the {} ranks; they must divide "
                               "evenly (use --cp-comm ring)",
                               heads, kv_heads, cp));
    }
  }
  // Megatron-LM's tensor-parallel split: every sharded dimension divides evenly over the TP
  // group, and query groups (KV heads) are split, never replicated (megatron/core/transformer,
  // num_query_groups % tensor_model_parallel_size == 0).
  const auto divides = [&](std::int64_t size, std::string_view what) {
    if (size > 0 && size % tp != 0) {
      report.error("parallel.tp", fmt::format("tensor-parallel size {} does not divide {} = {} "
                                       "(Megatron splits it evenly over the TP ranks)",
                                       tp, what, size));
    }
  };
  divides(spec.num_attention_heads, "num_attention_heads");
  if (!spec.mla) divides(spec.num_kv_heads, "num_key_value_heads");
  const bool has_dense_mlp = std::any_of(spec.layers.begin(), spec.layers.end(),
                                         [](const model::LayerSpec& l) { return !l.moe; });
  if (has_dense_mlp) divides(spec.intermediate_size, "intermediate_size");
  if (spec.moe) {
    divides(spec.moe->expert_intermediate_size, "the expert intermediate size");
    divides(spec.moe->shared_intermediate_size, "the shared expert intermediate size");
  }
  if (lora.enabled() && !lora.all_linear) {
    std::vector<std::string_view> linears;
    for (const model::WeightTensor& t : model::weight_tensors(spec)) {
      if (t.layer < 0 || t.layer >= spec.num_layers) continue;
      if (t.kind != model::TensorKind::kLinear && t.kind != model::TensorKind::kExpertLinear) {
        continue;
      }
      if (std::find(linears.begin(), linears.end(), t.name) == linears.end()) {
        linears.push_back(t.name);
      }
    }
    for (const std::string& target : lora.targets) {
      Lora one;
      one.targets = {target};
      const bool found = std::any_of(linears.begin(), linears.end(),
                                     [&](std::string_view n) { return one.targets_module(n); });
      if (!found) {
        report.error("lora.targets",
                     fmt::format("'{}' is not a linear module of {}'s decoder layers; they are: "
                                 "{} (or all-linear)",
                                 target, spec.name, fmt::join(linears, ", ")));
      }
    }
  }
  const std::int64_t chunks = static_cast<std::int64_t>(pp) * std::max(1, pp_interleave);
  if (chunks > spec.num_layers) {
    report.error(pp_interleave > 1 ? "parallel.pp_interleave" : "parallel.pp",
                 fmt::format("pp x V = {} model chunks exceed the model's {} layers", chunks,
                             spec.num_layers));
  }
}

}  // namespace vramsim::training
