#include "sim/memory/budget.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/core/check.hpp"
#include "sim/memory/activation_profile.hpp"
#include "sim/memory/caching_allocator.hpp"
#include "sim/model/kv_cache_shape.hpp"
#include "sim/model/parallelism.hpp"
#include "sim/model/param_count.hpp"
#include "sim/model/weight_bytes.hpp"
#include "sim/model/weight_tensors.hpp"

namespace vramsim::memory {

RuntimeOverheads default_overheads(bool interconnect_is_nvswitch) {
  RuntimeOverheads o;
  // Non-torch memory of one GPU (no communicator): cuBLAS/cuBLASLt and attention-backend
  // workspaces allocated outside PyTorch's allocator. vLLM logs show 0.1-0.3 GiB on single
  // GPUs (e.g. vllm-project/vllm PR #14447: "non_torch_memory takes 0.20GiB"; vLLM 0.19.0 on
  // H100: 0.24-0.27 GiB for most models of tests/validation/vllm_startup_logs.csv).
  o.non_torch_base = MiB(256);
  // What of it the start-up CUDA-graph memory profile of vLLM >= 0.17.1 leaves (graphs captured
  // and cleaned up inside the profiling window; run::vllm_behaviour cites the releases). Fitted:
  // llm-d-planner's version sweep logs 0.13 GiB of non-torch memory for Qwen3-14B on one H100
  // with vLLM 0.17.0 (a fitting run of tests/validation/vllm_startup_logs.csv), against the
  // 256 MiB above; the same settings log 0.13 GiB on 0.15.0 and 0.16.0 (held out) and 0.25 GiB
  // on 0.18.0 (held out). 256 MiB - 0.13 GiB = 123 MiB.
  o.non_torch_graph_profiling = MiB(123);
  // Communicator buffers per device when TP > 1 (all-reduce). NVSwitch nodes: vLLM PR #10511
  // logs Meta-Llama-3-8B on H100 with non_torch 1.79 GiB at TP=1 and 3.58 GiB at TP=2; the
  // difference (NCCL with NVLS buffers plus vLLM's custom all-reduce) is 1.79 GiB.
  // Nodes without NVLS (PCIe-only, and NVLink nodes before Hopper, e.g. A100 NVSwitch):
  // NCCL's default 4 MiB buffer x up to 32 channels x 2 directions x send/recv gives about
  // 0.5 GiB (an estimate: no public log found).
  o.non_torch_comm = interconnect_is_nvswitch ? MiB(1833) : MiB(512);
  // Pipeline parallelism alone (TP = 1) builds no all-reduce communicator. vLLM 0.19.0 on H100
  // logs "non-torch forward increase memory: 0.07GiB" on PP-only ranks, less than a single GPU
  // (llm-d-planner sweep, tests/validation/vllm_startup_logs.csv: Llama-3.1-8B-Instruct PP=2,
  // a fitting run; PP=4 logs the same and is held out). Why it is below non_torch_base is not
  // known (the workspaces may be allocated before the worker's first snapshot). Fitted: 72 MiB.
  o.non_torch_pp_only = MiB(72);
  // The CUDA context with lazy module loading (CUDA >= 11.7): about 0.5 GiB on Hopper-class
  // parts; it exists before vLLM's first snapshot, so vLLM's arithmetic never sees it.
  o.cuda_context = MiB(512);
  // CUDA graphs: vLLM logs "Graph capturing finished ..., took 0.11-0.54 GiB" for 7-8B models
  // with 30-67 graphs; 2 MiB per graph plus the largest graph's activation pool lands there.
  o.cuda_graph_per_graph = MiB(2);
  o.source = "defaults";
  return o;
}

std::vector<std::int64_t> default_capture_sizes(std::int64_t max_num_seqs) {
  std::vector<std::int64_t> sizes = {1, 2, 4};
  for (std::int64_t s = 8; s <= 256; s += 8) sizes.push_back(s);
  for (std::int64_t s = 272; s <= 512; s += 16) sizes.push_back(s);
  std::erase_if(sizes, [&](std::int64_t s) { return s > max_num_seqs; });
  if (sizes.empty()) sizes.push_back(1);
  return sizes;
}

namespace {

bool is_power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Bytes of the rotary cos/sin cache vLLM builds once per stage in the model dtype
// (vllm/model_executor/layers/rotary_embedding: [max_position, rotary_dim]); it shows in
// vLLM's "model weights" figure (Llama-3.1-8B: 14.96 GiB of parameters, 14.99 GiB logged).
Bytes rotary_cache_bytes(const model::ModelSpec& s, DType dtype) {
  if (s.learned_positions > 0 || s.rotary_positions() <= 0) return Bytes(0);
  const std::int64_t rotary_dim =
      s.mla ? s.mla->qk_rope_head_dim
            : static_cast<std::int64_t>(std::llround(static_cast<double>(s.head_dim) *
                                                     s.partial_rotary_factor));
  const std::int64_t bytes = bits_of(dtype) >= 32 ? 4 : 2;
  return Bytes(s.rotary_positions() * rotary_dim * bytes);
}

// The bytes vLLM's "model weights" figure counts for the parameters of one device of `stage`:
// torch.cuda.memory_allocated after load_model (GPUModelRunner.load_model's
// DeviceMemoryProfiler, vllm/utils/mem_utils.py, vllm/utils.py before: the CUDA platform's
// get_current_memory_usage reads max_memory_allocated right after reset_peak_memory_stats;
// it matches dennislee22's 0.10.1.1 logs to 0.0001 GiB, tests/memory/
// budget_weight_blocks_test.cpp). That is the sum of
// the caching allocator's blocks, not of the tensors: each parameter is its own torch.empty at
// model construction, and a large-pool block is only split when more than kSmallSize = 1 MiB
// would remain (CachingAllocator's rules, sim/memory/caching_allocator.hpp). So a parameter of
// 231 MiB (Qwen2.5-72B's down_proj at TP 2: 14,784 x 8,192 x 2 B) holds the whole 232 MiB
// segment: 80 layers x 1 MiB = 0.08 GiB above the tensors' bytes, as its 0.19 log shows
// (67.80 GiB logged; tests/validation/vllm_startup_logs.csv). Parameters follow vLLM's fused
// modules: q/k/v into qkv_proj and gate/up into gate_up_proj, their biases likewise
// (vllm/model_executor/layers/linear.py QKVParallelLinear, MergedColumnParallelLinear), and a
// FusedMoE layer's routed experts into one w13 and one w2 parameter of all experts
// (fused_moe/layer.py create_weights); other copies (vision layers) are a parameter each.
// The rotary cos/sin cache (`rotary`) is allocated with the first layer's attention.
// NOTE: the fp32 temporaries that build the rotary cache (freed and cached before the first
// MLP) are not replayed: they could take a later parameter's block and move a few MiB. A
// quantized matrix is one block with its scales (vLLM allocates them apart), and tensors of a
// few bytes that are not weights (the attention layers' fp32 scale scalars, 512 B blocks) are
// not counted.
Bytes allocated_weight_bytes(const model::ModelSpec& spec, const model::WeightFormat& fmt,
                             model::Parallelism par, int stage, Bytes rotary) {
  const model::LayerRange range = model::stage_layers(spec.num_layers, par.pp, stage);
  const bool first = stage == 0;
  const bool last = stage == par.pp - 1;
  const auto fused_with_previous = [](std::string_view name) {
    return name == "k_proj" || name == "v_proj" || name == "k_proj.bias" ||
           name == "v_proj.bias" || name == "up_proj" || name == "up_proj.bias" ||
           name == "shared_expert.up_proj";
  };
  model::WeightFormat unquantized;
  unquantized.dtype = fmt.dtype;
  CachingAllocator allocator;
  Bytes pending;  // the parameter being assembled from its fused parts
  const auto flush = [&] {
    if (pending > Bytes(0)) allocator.allocate(pending);
    pending = Bytes(0);
  };
  bool rotary_done = rotary <= Bytes(0);
  for (const model::WeightTensor& t : model::weight_tensors(spec)) {
    const bool here = t.layer == model::kPreLayers   ? first
                      : t.layer >= spec.num_layers ? last
                                                   : t.layer >= range.begin && t.layer < range.end;
    if (!here || (t.tied && par.pp == 1)) continue;
    const model::ShardShape sh = model::shard_shape(spec, t, par.tp);
    const model::WeightFormat& f = model::tensor_format(fmt, t, unquantized);
    const Bytes one =
        model::matrix_bytes(f, t.kind, sh.in_features, sh.out_features, t.in_features);
    if (one <= Bytes(0) || sh.copies <= 0) continue;
    if (!fused_with_previous(t.name)) flush();
    if (!rotary_done && t.layer >= range.begin && t.layer < range.end &&
        (t.name == "post_attention_layernorm" || t.name == "router" ||
         t.name == "gate_proj" || t.name == "fc1" || t.name == "shared_expert.gate_proj")) {
      flush();
      allocator.allocate(rotary);  // after the first layer's attention, before its MLP
      rotary_done = true;
    }
    if (t.copies > t.active_copies) {
      pending += sh.copies * one;  // routed experts: one stacked parameter of every expert
    } else if (sh.copies == 1) {
      pending += one;
    } else {
      for (std::int64_t c = 0; c < sh.copies; ++c) allocator.allocate(one);
    }
  }
  flush();
  if (!rotary_done) allocator.allocate(rotary);
  return allocator.allocated();
}

// One KV-cache group type: layers sharing the attention kind (full, or one window size).
struct KvGroupType {
  std::int64_t window = 0;  // 0: full attention
  std::int64_t num_layers = 0;
};

struct KvLayout {
  Bytes page;                        // one block of one layer
  Bytes per_token;                   // all layers of the device, one token
  std::int64_t layers_per_group = 0;
  std::vector<KvGroupType> groups;   // one entry per group (a type may span several groups)
};

// vLLM's grouping: one group when every layer has the same spec; otherwise layers of each type
// are split into groups of `group_size` layers, group_size = the smallest type's count, or the
// largest's when that is under 1.5x the smallest (padding the rest).
KvLayout kv_layout(const model::ModelSpec& spec, const EngineConfig& cfg, int stage) {
  KvLayout out;
  std::map<std::int64_t, std::int64_t> layers_by_window;
  std::vector<model::LayerKv> layers =
      model::kv_layers(spec, cfg.kv_cache_dtype, model::Parallelism{cfg.tp, cfg.pp}, stage);
  VRAMSIM_CHECK(!layers.empty(), "pipeline stage {} has no layers", stage);
  if (cfg.draft && stage == cfg.pp - 1) {
    layers.insert(layers.end(), cfg.draft->kv_layers.begin(), cfg.draft->kv_layers.end());
  }
  out.page = layers.front().bytes_per_token * cfg.block_size;
  const bool uniform_page = std::all_of(layers.begin(), layers.end(), [&](const model::LayerKv& l) {
    return l.bytes_per_token * cfg.block_size == out.page;
  });
  const bool all_full = std::all_of(layers.begin(), layers.end(), [](const model::LayerKv& l) {
    return l.sliding_window == 0;
  });
  if (!uniform_page && all_full) {
    // Full attention throughout, pages of different sizes (a draft model with other KV heads
    // or head size): vLLM's UniformTypeKVCacheSpecs, one group whose block holds one page of
    // every layer (vllm/v1/core/kv_cache_utils.py, _get_kv_cache_groups_uniform_type).
    for (const model::LayerKv& l : layers) out.per_token += l.bytes_per_token;
    out.page = out.per_token * cfg.block_size;
    out.layers_per_group = 1;
    out.groups.push_back({0, static_cast<std::int64_t>(layers.size())});
    return out;
  }
  for (const model::LayerKv& l : layers) {
    // NOTE: vLLM unifies unequal page sizes by growing block sizes; no zoo model needs it.
    VRAMSIM_CHECK(l.bytes_per_token * cfg.block_size == out.page,
                  "layers with different KV page sizes are not modelled (layer {})", l.layer);
    out.per_token += l.bytes_per_token;
    ++layers_by_window[l.sliding_window];
  }
  const auto num_layers = static_cast<std::int64_t>(layers.size());
  if (layers_by_window.size() == 1) {
    out.layers_per_group = num_layers;
    out.groups.push_back({layers_by_window.begin()->first, num_layers});
    return out;
  }
  std::int64_t min_layers = INT64_MAX;
  std::int64_t max_layers = 0;
  for (const auto& [window, n] : layers_by_window) {
    min_layers = std::min(min_layers, n);
    max_layers = std::max(max_layers, n);
  }
  std::int64_t group_size = min_layers;
  if (static_cast<double>(max_layers) < 1.5 * static_cast<double>(min_layers)) {
    group_size = max_layers;
  }
  out.layers_per_group = group_size;
  for (const auto& [window, n] : layers_by_window) {
    for (std::int64_t g = 0; g < ceil_div(n, group_size); ++g) out.groups.push_back({window, n});
  }
  return out;
}

// Blocks one request of max_model_len tokens needs in one group (vLLM's
// max_memory_usage_bytes / page_size of FullAttentionSpec and SlidingWindowSpec).
std::int64_t blocks_for_request(const KvGroupType& g, const EngineConfig& cfg) {
  if (g.window == 0) return ceil_div(cfg.max_model_len, cfg.block_size);
  // The window's last (window - 1) tokens plus one step's new tokens, capped at max_model_len,
  // plus one block because the window need not start on a block boundary.
  const std::int64_t tokens =
      std::min(g.window - 1 + cfg.max_num_batched_tokens, cfg.max_model_len);
  return ceil_div(tokens, cfg.block_size) + 1;
}

std::int64_t blocks_per_request(const KvLayout& layout, const EngineConfig& cfg) {
  std::int64_t blocks = 0;
  for (const KvGroupType& g : layout.groups) blocks += blocks_for_request(g, cfg);
  return blocks;
}

}  // namespace

MoeSplit moe_split(int tp, int data_parallel_size, bool enable_expert_parallel) {
  VRAMSIM_CHECK(tp >= 1 && data_parallel_size >= 1, "tp {} dp {}", tp, data_parallel_size);
  const int group = tp * data_parallel_size;
  // vLLM: use_ep = dp_size * tp_size > 1 and enable_expert_parallel.
  if (enable_expert_parallel && group > 1) return {group, 1};
  return {1, group};
}

std::int64_t local_num_experts(std::int64_t num_experts, int ep_size, int ep_rank) {
  VRAMSIM_CHECK(ep_size >= 1 && ep_size <= num_experts && ep_rank >= 0 && ep_rank < ep_size,
                "EP rank {} of {} over {} experts", ep_rank, ep_size, num_experts);
  const std::int64_t base = num_experts / ep_size;
  return base + (ep_rank < num_experts % ep_size ? 1 : 0);
}

std::int64_t first_local_expert(std::int64_t num_experts, int ep_size, int ep_rank) {
  VRAMSIM_CHECK(ep_size >= 1 && ep_size <= num_experts && ep_rank >= 0 && ep_rank < ep_size,
                "EP rank {} of {} over {} experts", ep_rank, ep_size, num_experts);
  const std::int64_t base = num_experts / ep_size;
  const std::int64_t extra = num_experts % ep_size;
  return base * ep_rank + std::min<std::int64_t>(ep_rank, extra);
}

Bytes routed_expert_bytes_per_expert(const model::ModelSpec& spec, const model::WeightFormat& fmt,
                                     int pp, int stage, int moe_tp) {
  if (!spec.moe) return Bytes(0);
  const model::LayerRange range = model::stage_layers(spec.num_layers, pp, stage);
  model::WeightFormat unquantized;
  unquantized.dtype = fmt.dtype;
  Bytes one;
  for (const model::WeightTensor& t : model::weight_tensors(spec)) {
    // Routed experts (and their biases) live in decoder layers only; shared experts and routers
    // have copies == active_copies and stay with the dense weights.
    if (t.copies <= t.active_copies || t.layer < range.begin || t.layer >= range.end) continue;
    VRAMSIM_CHECK(t.copies == spec.moe->num_experts, "{}: {} copies of {} experts", t.name,
                  t.copies, spec.moe->num_experts);
    const model::ShardShape sh = model::shard_shape(spec, t, moe_tp);
    // The same bytes weight_bytes_on_stage counts per copy (model/weight_bytes.cpp).
    const model::WeightFormat& f = model::tensor_format(fmt, t, unquantized);
    one += model::matrix_bytes(f, t.kind, sh.in_features, sh.out_features, t.in_features);
  }
  return one;
}

Bytes offloaded_weight_bytes(const model::ModelSpec& spec, const model::WeightFormat& fmt,
                             model::Parallelism par, int stage, Bytes budget) {
  if (budget <= Bytes(0)) return Bytes(0);
  const model::LayerRange range = model::stage_layers(spec.num_layers, par.pp, stage);
  // vLLM fuses q, k and v into qkv_proj and gate and up into gate_up_proj (one parameter
  // each, experts' w13 likewise): their tensors here join the parameter before them.
  const auto fused_with_previous = [](std::string_view name) {
    return name == "k_proj" || name == "v_proj" || name == "k_proj.bias" ||
           name == "v_proj.bias" || name == "up_proj" || name == "up_proj.bias" ||
           name == "shared_expert.up_proj";
  };
  Bytes offloaded;
  for (const model::WeightTensor& t : model::weight_tensors(spec)) {
    if (t.layer < range.begin || t.layer >= range.end || t.tied) continue;
    const model::ShardShape sh = model::shard_shape(spec, t, par.tp);
    const Bytes bytes =
        sh.copies * model::matrix_bytes(fmt, t.kind, sh.in_features, sh.out_features);
    if (fused_with_previous(t.name)) {
      offloaded += bytes;  // the rest of a parameter already offloaded
      continue;
    }
    if (offloaded >= budget) break;  // vLLM checks before each parameter
    offloaded += bytes;
  }
  return offloaded;
}

namespace {

// The combinations of --data-parallel-size and --enable-expert-parallel that vLLM refuses or
// that make no sense, and those this model does not cover.
void validate_data_parallel(const EngineConfig& cfg, const model::ModelSpec& spec,
                            ValidationReport& report) {
  const int dp = cfg.data_parallel_size;
  if (dp < 1 || dp > 4096) {
    report.error("engine.data_parallel_size", fmt::format("must be in [1, 4096], got {}", dp));
    return;
  }
  if (cfg.enable_expert_parallel && !spec.moe) {
    report.error("engine.enable_expert_parallel",
                 "the model is dense (no routed experts in its config.json): expert "
                 "parallelism has nothing to shard; leave --enable-expert-parallel off");
    return;
  }
  if (!spec.moe || dp == 1) return;
  const MoeSplit split = moe_split(cfg.tp, dp, cfg.enable_expert_parallel);
  const std::int64_t experts = spec.moe->num_experts;
  if (split.ep_size > experts) {
    report.error("engine.data_parallel_size",
                 fmt::format("the EP group of data_parallel_size x tp = {} devices exceeds the "
                             "model's {} routed experts: some devices would hold none",
                             split.ep_size, experts));
  }
  if (split.ep_size == 1 && spec.moe->expert_intermediate_size % split.moe_tp != 0) {
    // Without EP, FusedMoE splits each expert's intermediate size over dp x tp.
    report.error("engine.data_parallel_size",
                 fmt::format("without --enable-expert-parallel the experts are tensor-parallel "
                             "over data_parallel_size x tp = {} devices, which must divide the "
                             "expert intermediate size {} (moe_intermediate_size)",
                             split.moe_tp, spec.moe->expert_intermediate_size));
  }
  // NOTE: not modelled rather than wrong: the lock-stepped group runs one batch per rank at a
  // time, and the weight offload walks TP-split experts.
  if (cfg.pp > 1) {
    report.error("engine.pp", "pipeline parallelism inside a data-parallel MoE group "
                              "(data_parallel_size > 1) is not modelled");
  }
  if (cfg.cpu_offload > Bytes(0)) {
    report.error("engine.cpu_offload_gb", "weight offload with a data-parallel MoE group "
                                          "(data_parallel_size > 1) is not modelled");
  }
}

}  // namespace

void validate(const EngineConfig& cfg, const model::ModelSpec& spec, ValidationReport& report) {
  const ValidationReport split =
      model::validate_parallelism(spec, model::Parallelism{cfg.tp, cfg.pp});
  for (Problem p : split.problems()) {
    p.field = "engine." + p.field;  // "tp" -> "engine.tp": the setting's path
    report.error(p.field, p.message, p.where);
  }
  if (!is_power_of_two(cfg.block_size) || cfg.block_size > 1024) {
    report.error("engine.block_size",
                 fmt::format("must be a power of two between 1 and 1024, got {}", cfg.block_size));
  }
  if (!(cfg.gpu_memory_utilization > 0.0 && cfg.gpu_memory_utilization <= 1.0)) {
    report.error("engine.gpu_memory_utilization",
                 fmt::format("must be in (0, 1], got {}", cfg.gpu_memory_utilization));
  }
  if (cfg.max_model_len <= 0) {
    report.error("engine.max_model_len", fmt::format("must be positive, got {}", cfg.max_model_len));
  } else if (spec.max_model_len_limit() > 0 && cfg.max_model_len > spec.max_model_len_limit()) {
    report.error("engine.max_model_len",
                 fmt::format("{} exceeds the model's derived max_model_len ({}: "
                             "max_position_embeddings {}, RoPE scaling applied); vLLM refuses "
                             "it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set",
                             cfg.max_model_len, spec.max_model_len_limit(),
                             spec.max_position_embeddings));
  }
  if (cfg.max_num_seqs <= 0) {
    report.error("engine.max_num_seqs", fmt::format("must be positive, got {}", cfg.max_num_seqs));
  }
  if (cfg.max_num_batched_tokens <= 0) {
    report.error("engine.max_num_batched_tokens",
                 fmt::format("must be positive, got {}", cfg.max_num_batched_tokens));
  }
  validate_data_parallel(cfg, spec, report);
  if (cfg.lora) validate_lora(*cfg.lora, spec, cfg.tp, report);
  if (cfg.kv_cache_memory && *cfg.kv_cache_memory <= Bytes(0)) {
    report.error("engine.kv_cache_memory_bytes",
                 fmt::format("must be positive, got {} B", cfg.kv_cache_memory->count()));
  }
  if (cfg.num_gpu_blocks_override && *cfg.num_gpu_blocks_override <= 0) {
    report.error("engine.num_gpu_blocks",
                 fmt::format("must be positive, got {}", *cfg.num_gpu_blocks_override));
  }
}

BudgetResult compute_budget(const model::ModelSpec& spec, const EngineConfig& cfg,
                            const hardware::DeviceSpec& device,
                            const RuntimeOverheads& overheads) {
  return compute_budget(spec, cfg, device.memory_total, device.num_sms, overheads);
}

BudgetResult compute_budget(const model::ModelSpec& spec, const EngineConfig& cfg,
                            Bytes device_total, int num_sms, const RuntimeOverheads& overheads) {
  VRAMSIM_CHECK(num_sms > 0, "compute_budget needs the device's SM count, got {}", num_sms);
  BudgetResult result;
  const model::ParamCount params = model::count_params(spec);
  result.num_params = params.total;
  result.num_active_params = params.active;

  // Non-torch memory per rank: the all-reduce communicators exist only with TP > 1, and the
  // DP/EP group's (the MoE layers' all-gather and reduce-scatter) in a data-parallel MoE group.
  // NOTE: the group's buffers are taken to be the size of the TP communicator's (an estimate:
  // no public start-up log of a DP + EP run shows its non-torch figure).
  const bool group_comm = spec.moe.has_value() && cfg.data_parallel_size > 1;
  // NOTE: the PP-only figure was fitted on 0.19 alone; releases before the CUDA-graph memory
  // profile are not known to differ there, so it is kept for them.
  const Bytes base = cfg.profiles_cuda_graph_memory
                         ? overheads.non_torch_base
                         : max(Bytes(0), overheads.non_torch_base -
                                            overheads.non_torch_graph_profiling);
  const Bytes non_torch = cfg.tp > 1 || group_comm ? base + overheads.non_torch_comm
                          : cfg.pp > 1             ? overheads.non_torch_pp_only
                                                   : base;
  const Bytes usable = round_to_bytes(static_cast<double>(device_total.count()) *
                                      cfg.gpu_memory_utilization);
  const ProfileBatch batch{cfg.max_num_batched_tokens,
                           std::min(cfg.max_num_seqs, cfg.max_num_batched_tokens),
                           cfg.tp,
                           cfg.dtype,
                           num_sms,
                           cfg.sampler};
  const std::vector<std::int64_t> captures =
      cfg.cuda_graph_capture_sizes.empty() ? default_capture_sizes(cfg.max_num_seqs)
                                           : cfg.cuda_graph_capture_sizes;

  std::vector<KvLayout> layouts;  // per PP stage, reused by the max_model_len search below
  layouts.reserve(static_cast<std::size_t>(cfg.pp));
  std::int64_t min_blocks = INT64_MAX;
  std::int64_t request_blocks = 0;
  std::int64_t num_groups = 1;
  const int dp = cfg.data_parallel_size;
  const MoeSplit split = moe_split(cfg.tp, dp, cfg.enable_expert_parallel);
  for (int stage = 0; stage < cfg.pp; ++stage) {
    const model::LayerRange range = model::stage_layers(spec.num_layers, cfg.pp, stage);
    const bool last_stage = stage == cfg.pp - 1;
    const KvLayout& layout = layouts.emplace_back(kv_layout(spec, cfg, stage));
    // Counted from the safetensors headers: their sum (no per-tensor shapes to round);
    // otherwise the allocator's blocks of every parameter (allocated_weight_bytes).
    const Bytes stage_weights =
        cfg.exact_stage_weights
            ? cfg.exact_stage_weights->at(static_cast<std::size_t>(stage)) +
                  rotary_cache_bytes(spec, cfg.dtype)
            : allocated_weight_bytes(spec, cfg.weights, model::Parallelism{cfg.tp, cfg.pp},
                                     stage, rotary_cache_bytes(spec, cfg.dtype));
    // Routed experts: weight_bytes_on_stage holds all of them at the plain TP split; a DP group
    // re-splits them (MoeSplit), each device keeping its EP range or its 1/moe_tp of each.
    const Bytes expert_at_tp =
        routed_expert_bytes_per_expert(spec, cfg.weights, cfg.pp, stage, cfg.tp);
    const Bytes expert_in_group =
        split.moe_tp == cfg.tp
            ? expert_at_tp
            : routed_expert_bytes_per_expert(spec, cfg.weights, cfg.pp, stage, split.moe_tp);
    const std::int64_t num_experts = spec.moe ? spec.moe->num_experts : 0;
    for (int dp_rank = 0; dp_rank < dp; ++dp_rank) {
    for (int rank = 0; rank < cfg.tp; ++rank) {
      DeviceBudget d;
      d.device_index = (dp_rank * cfg.pp + stage) * cfg.tp + rank;
      d.dp_rank = dp_rank;
      d.pp_stage = stage;
      d.tp_rank = rank;
      d.num_layers = range.size();
      d.total = device_total;
      d.usable = usable;
      // The EP group is ordered DP-major, TP inside (vLLM's parallel_state: the EP group spans
      // the DP and TP dimensions of the rank layout).
      const int ep_rank = dp_rank * cfg.tp + rank;
      d.num_local_experts =
          split.ep_size > 1 ? local_num_experts(num_experts, split.ep_size, ep_rank) : num_experts;
      d.first_local_expert =
          split.ep_size > 1 ? first_local_expert(num_experts, split.ep_size, ep_rank) : 0;
      d.expert_weights = d.num_local_experts * expert_in_group;
      d.weights = stage_weights - num_experts * expert_at_tp + d.expert_weights;
      d.weights_offloaded =
          offloaded_weight_bytes(spec, cfg.weights, model::Parallelism{cfg.tp, cfg.pp}, stage,
                                 cfg.cpu_offload);
      if (cfg.draft && last_stage) {
        d.draft_weights = cfg.draft->weights;
        for (const model::LayerKv& l : cfg.draft->kv_layers) {
          d.draft_kv_bytes_per_token += l.bytes_per_token;
        }
      }
      if (cfg.lora) d.lora_weights = lora_slot_bytes(spec, cfg.tp, *cfg.lora, range.size());
      d.activation_peak = activation_peak_bytes(spec, batch, last_stage) +
                          (stage > 0 ? pp_receive_buffer_bytes(spec, batch) : Bytes(0));
      d.non_torch = non_torch;
      d.cuda_context = overheads.cuda_context;
      if (!cfg.enforce_eager) {
        ProfileBatch largest = batch;
        largest.num_tokens = captures.back();
        d.cuda_graph = forward_peak_bytes(spec, largest) +
                       static_cast<std::int64_t>(captures.size()) * overheads.cuda_graph_per_graph;
      }
      d.kv_available = cfg.kv_cache_memory
                           ? *cfg.kv_cache_memory
                           : usable - (d.weights - d.weights_offloaded) - d.draft_weights -
                                 d.lora_weights - d.activation_peak - d.non_torch -
                                 (cfg.subtract_cuda_graph ? d.cuda_graph : Bytes(0));
      d.kv_bytes_per_token = layout.per_token;
      d.page_bytes = layout.page;
      d.layers_per_group = layout.layers_per_group;
      d.num_groups = static_cast<std::int64_t>(layout.groups.size());
      const Bytes block_bytes = layout.page * layout.layers_per_group;
      d.num_gpu_blocks = d.kv_available > Bytes(0) && block_bytes > Bytes(0)
                             ? d.kv_available / block_bytes
                             : 0;
      min_blocks = std::min(min_blocks, d.num_gpu_blocks);
      result.devices.push_back(d);
    }
    }
    // Every stage holds each request's blocks for its own layers; the tightest stage decides.
    request_blocks = std::max(request_blocks, blocks_per_request(layout, cfg));
    num_groups = std::max<std::int64_t>(num_groups, static_cast<std::int64_t>(layout.groups.size()));
  }

  // Stage-major within each DP rank (device_index order); unchanged without DP.
  std::stable_sort(result.devices.begin(), result.devices.end(),
                   [](const DeviceBudget& a, const DeviceBudget& b) {
                     return a.device_index < b.device_index;
                   });
  if (cfg.num_gpu_blocks_override) {
    // An override may exceed what vLLM's profile finds, but not what the device could ever hold.
    for (const DeviceBudget& d : result.devices) {
      const Bytes block_bytes = d.page_bytes * d.layers_per_group;
      if (block_bytes > Bytes(0) && *cfg.num_gpu_blocks_override > device_total / block_bytes) {
        throw ConfigError("engine.num_gpu_blocks",
                          fmt::format("{} blocks of {} each need more than the device's {} in "
                                      "total (at most {} blocks fit)",
                                      *cfg.num_gpu_blocks_override, format_bytes(block_bytes),
                                      format_bytes(device_total), device_total / block_bytes));
      }
    }
  }
  result.num_gpu_blocks = cfg.num_gpu_blocks_override.value_or(min_blocks);
  result.blocks_per_request = request_blocks;
  result.kv_cache_tokens = result.num_gpu_blocks / num_groups * cfg.block_size;
  result.max_concurrency = request_blocks > 0 ? static_cast<double>(result.num_gpu_blocks) /
                                                    static_cast<double>(request_blocks)
                                              : 0.0;
  for (DeviceBudget& d : result.devices) {
    const Bytes block_bytes = d.page_bytes * d.layers_per_group;
    d.kv_cache = block_bytes * result.num_gpu_blocks;
    const Bytes outside = d.cuda_context + (cfg.subtract_cuda_graph ? Bytes(0) : d.cuda_graph);
    const Bytes left = d.total - d.usable;
    d.headroom_shortfall = outside > left ? outside - left : Bytes(0);
    if (cfg.kv_cache_memory) {
      // No profile bounds the cache: the device must hold it beside everything else.
      const Bytes held = (d.weights - d.weights_offloaded) + d.draft_weights + d.lora_weights +
                         d.activation_peak +
                         d.non_torch + d.cuda_context + d.cuda_graph + d.kv_cache;
      d.headroom_shortfall = held > d.total ? held - d.total : Bytes(0);
    }
  }

  // Does one request of max_model_len fit? (vLLM: check_enough_kv_cache_memory.)
  const DeviceBudget* worst = &result.devices.front();
  for (const DeviceBudget& d : result.devices) {
    if (d.kv_available < worst->kv_available) worst = &d;
  }
  const Bytes worst_block = worst->page_bytes * worst->layers_per_group;
  const DeviceBudget* overrun = &result.devices.front();
  for (const DeviceBudget& d : result.devices) {
    if (d.headroom_shortfall > overrun->headroom_shortfall) overrun = &d;
  }
  if (cfg.kv_cache_memory && overrun->headroom_shortfall > Bytes(0)) {
    result.fits = false;
    result.shortfall = overrun->headroom_shortfall;
    result.reason = fmt::format(
        "the KV cache given by kv_cache_memory_bytes ({}) does not fit beside the rest on device "
        "{}: weights, activations, non-torch memory, CUDA context and graphs and the cache come "
        "to {} more than its {}; vLLM reserves it without checking and would run out of memory",
        format_bytes(*cfg.kv_cache_memory), overrun->device_index,
        format_bytes(result.shortfall), format_bytes(overrun->total));
  } else if (worst->kv_available <= Bytes(0) && !cfg.num_gpu_blocks_override) {
    result.fits = false;
    result.shortfall = -worst->kv_available;
    result.reason = fmt::format(
        "no memory left for the KV cache on device {}: weights, activations and non-torch "
        "memory exceed the usable {} by {}",
        worst->device_index, format_bytes(worst->usable), format_bytes(result.shortfall));
  } else if (result.num_gpu_blocks < request_blocks) {
    result.fits = false;
    result.shortfall = worst_block * (request_blocks - result.num_gpu_blocks);
    result.reason = fmt::format(
        "one request of max_model_len {} tokens needs {} KV blocks but only {} fit; {} more "
        "KV cache memory is needed",
        cfg.max_model_len, request_blocks, result.num_gpu_blocks, format_bytes(result.shortfall));
  } else {
    result.fits = true;
  }
  // The longest request the cache could hold (vLLM's estimate_max_model_len, by bisection).
  std::int64_t lo = 0;
  std::int64_t hi = cfg.max_model_len;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    EngineConfig probe = cfg;
    probe.max_model_len = mid;
    std::int64_t need = 0;
    for (const KvLayout& layout : layouts) {
      need = std::max(need, blocks_per_request(layout, probe));
    }
    if (need <= result.num_gpu_blocks) lo = mid; else hi = mid - 1;
  }
  result.max_model_len_that_fits = lo;
  return result;
}

}  // namespace vramsim::memory
