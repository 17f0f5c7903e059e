// The VRAM budget of a vLLM deployment, as vLLM itself computes it at start-up, per device.
//
//   requested  = total device memory x gpu_memory_utilization
//   non_kv     = weights (less those offloaded to host memory, plus a speculative drafter's)
//                + activation peak of the profile run + non-torch memory
//                (a pipeline stage after the first also holds the received hidden states and
//                residual, [max_num_batched_tokens, hidden] each, in its activation peak)
//   kv_cache   = requested - non_kv                                 (minus the CUDA-graph
//                                                                     estimate on vLLM >= 0.21)
//   num_blocks = kv_cache // page_size // layers_per_group          (minimum over all devices)
//   kv_tokens  = num_blocks // num_groups * block_size
//   max_concurrency = num_blocks / blocks one max_model_len request needs
//
// vLLM's code path: vllm/v1/worker/gpu_worker.py Worker.determine_available_memory (memory
// profiling: non_kv_cache_memory = weights_memory + torch_peak_increase + non_torch_increase),
// vllm/v1/core/kv_cache_utils.py get_kv_cache_config_from_groups / get_num_blocks /
// get_max_concurrency_for_kv_cache_config / check_enough_kv_cache_memory, and the hybrid
// grouping of full and sliding-window layers in _get_kv_cache_groups_uniform_page_size.
//
// The CUDA context and the CUDA graphs are allocated outside this arithmetic: vLLM (before
// 0.21) does not subtract the graphs, so they are reported separately as a risk to the
// memory left over by gpu_memory_utilization.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/dtype.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/memory/activation_profile.hpp"
#include "sim/memory/lora_memory.hpp"
#include "sim/model/kv_cache_shape.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/weight_bytes.hpp"

namespace vramsim::memory {

/// Memory the runtime takes that the model's shapes do not decide. Each default is documented
/// where it is built (default_overheads); a calibration profile replaces them.
struct RuntimeOverheads {
  Bytes non_torch_base;         // cuBLAS/attention workspaces outside PyTorch, one GPU
  /// Part of non_torch_base the start-up CUDA-graph memory profile leaves (vLLM >= 0.17.1);
  /// taken off for releases that do not run it (EngineConfig::profiles_cuda_graph_memory).
  Bytes non_torch_graph_profiling;
  Bytes non_torch_comm;         // communicator buffers (NCCL, custom all-reduce) when TP > 1
  Bytes non_torch_pp_only;      // the whole non-torch figure of a rank when TP = 1 and PP > 1
  Bytes cuda_context;           // the CUDA context; outside vLLM's budget
  Bytes cuda_graph_per_graph;   // per captured graph, on top of its activation pool
  std::string source;           // "defaults" or the calibration file
};

/// `interconnect_is_nvswitch`: a node where NCCL allocates NVLink SHARP (NVLS) buffers, an
/// NVSwitch node of Hopper or later (callers decide: hardware::has_nvls).
RuntimeOverheads default_overheads(bool interconnect_is_nvswitch);

/// A speculative-decoding drafter's memory on each device, built by the run layer from
/// --speculative-config (sim/run/speculative_draft.hpp): its own weights (those it shares with
/// the target are not counted again) and the KV layers it adds to the cache. vLLM registers the
/// draft's attention layers beside the target's (vllm/v1/worker/gpu_model_runner.py
/// get_kv_cache_spec walks every Attention layer of the forward context), so a block, and the
/// KV bytes per token, cover both; the drafter sits on the last pipeline stage.
struct DraftMemory {
  std::string label;                      // "eagle3 yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
  Bytes weights;                          // one device's
  std::vector<model::LayerKv> kv_layers;  // one device's (full attention)
};

/// vLLM engine arguments that decide memory. Built by the CLI or a scenario, then validated.
struct EngineConfig {
  int tp = 1;
  int pp = 1;
  DType dtype = DType::kBf16;           // activations and unquantized weights
  model::WeightFormat weights;          // weight storage (dtype or quantization)
  DType kv_cache_dtype = DType::kBf16;  // "auto" resolves to dtype
  std::int64_t max_model_len = 0;
  std::int64_t max_num_seqs = 256;
  std::int64_t max_num_batched_tokens = 2048;
  double gpu_memory_utilization = 0.9;
  std::int64_t block_size = 16;
  std::optional<std::int64_t> num_gpu_blocks_override;
  /// --kv-cache-memory-bytes: the KV cache of every device, as given. vLLM then skips the memory
  /// profile for the KV size and ignores gpu_memory_utilization (vllm/v1/worker/gpu_worker.py,
  /// determine_available_memory); nothing checks that it fits beside the rest, so compute_budget
  /// does. nullopt: sized from the profile.
  std::optional<Bytes> kv_cache_memory;
  bool enforce_eager = false;        // no CUDA graphs
  bool subtract_cuda_graph = false;  // vLLM >= 0.21 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1)
  std::vector<std::int64_t> cuda_graph_capture_sizes;  // empty: vLLM's default list
  /// The top-k/top-p implementation of the dummy sampler run (vLLM 0.19: the Triton kernel).
  SamplerKind sampler = SamplerKind::kTritonTopKTopP;
  /// vLLM >= 0.17.1 captures dummy CUDA graphs inside the memory-profiling window
  /// (run::vllm_behaviour); earlier releases lack RuntimeOverheads::non_torch_graph_profiling.
  bool profiles_cuda_graph_memory = true;
  /// Speculative decoding's drafter; nullopt: none (ngram has no weights and no KV either).
  std::optional<DraftMemory> draft;
  /// --cpu-offload-gb (per device): decoder-layer weights held in host memory instead (see
  /// offloaded_weight_bytes); zero: none.
  Bytes cpu_offload;
  /// --enable-lora: vLLM's LoRAConfig; its stacked adapter slots are allocated at model load
  /// (lora_memory.hpp) and counted in the profile's weights, so they shrink the KV cache.
  /// nullopt: LoRA off.
  std::optional<LoraConfig> lora;
  /// --data-parallel-size: engines (DP ranks) of tp x pp devices each; every rank holds the
  /// attention and dense weights and its own KV cache (see MoeSplit for the routed experts).
  int data_parallel_size = 1;
  /// --enable-expert-parallel: an MoE model's routed experts sharded over the EP group
  /// (data_parallel_size x tp devices) instead of tensor-parallel (see MoeSplit).
  bool enable_expert_parallel = false;
  /// Weight bytes of one device per pipeline stage counted from the checkpoint's safetensors
  /// headers (model/safetensors_header.hpp); nullopt: derived from config.json
  /// (weight_bytes_on_stage). Only set without data or expert parallelism.
  std::optional<std::vector<Bytes>> exact_stage_weights;
};

/// How vLLM splits the routed experts of an MoE model over a data-parallel group
/// (vllm/model_executor/layers/fused_moe/config.py, FusedMoEParallelConfig.make): the MoE
/// layers see one flattened group of dp x tp devices. With expert parallelism that group is
/// the EP group (ep_size = dp x tp) and each device holds whole experts (moe_tp = 1); without
/// it the experts are tensor-parallel over the whole group (moe_tp = dp x tp, ep_size = 1).
/// With dp = 1 and no EP this is the plain TP split (moe_tp = tp).
struct MoeSplit {
  int ep_size = 1;
  int moe_tp = 1;
};
MoeSplit moe_split(int tp, int data_parallel_size, bool enable_expert_parallel);

/// Routed experts EP rank `ep_rank` of `ep_size` holds under vLLM's default linear placement
/// (vllm/model_executor/layers/fused_moe/layer.py determine_expert_map,
/// expert_placement_strategy "linear"): contiguous ranges of num_experts / ep_size experts, the
/// first num_experts % ep_size ranks one more each (128 experts over 3 ranks: 43, 43, 42).
/// Requires 1 <= ep_size <= num_experts and 0 <= ep_rank < ep_size.
std::int64_t local_num_experts(std::int64_t num_experts, int ep_size, int ep_rank);
/// The first global expert index of that range (rank 1 of 128 over 3: 43).
std::int64_t first_local_expert(std::int64_t num_experts, int ep_size, int ep_rank);

/// Bytes of ONE routed expert over every MoE layer of pipeline stage `stage` on one device,
/// each expert's matrices split `moe_tp` ways as FusedMoE splits them without EP (its
/// intermediate size / moe_tp); 0 for a dense model. weight_bytes_on_stage counts
/// num_experts of these at moe_tp = tp.
Bytes routed_expert_bytes_per_expert(const model::ModelSpec& spec, const model::WeightFormat& fmt,
                                     int pp, int stage, int moe_tp);

/// The weight bytes vLLM moves to host memory on one device of `stage` for --cpu-offload-gb =
/// `budget` (vllm/model_executor/models/utils.py maybe_offload_to_cpu, applied by make_layers
/// to each decoder layer in order): parameter by parameter, layer after layer, until the bytes
/// offloaded reach the budget, so the last parameter may overshoot it; embeddings, final norm
/// and lm_head stay on the device. At most every decoder layer's weights.
Bytes offloaded_weight_bytes(const model::ModelSpec& spec, const model::WeightFormat& fmt,
                             model::Parallelism par, int stage, Bytes budget);

/// Reports every problem of `cfg` for `spec` (TP must divide the heads, block size a power of
/// two, utilization in (0, 1], ...), each under its flag name.
void validate(const EngineConfig& cfg, const model::ModelSpec& spec, ValidationReport& report);

/// vLLM's default CUDA-graph capture sizes up to max_num_seqs: 1, 2, 4, then steps of 8 to 256,
/// then steps of 16 (vllm/config/compilation.py, cudagraph_capture_sizes).
std::vector<std::int64_t> default_capture_sizes(std::int64_t max_num_seqs);

struct DeviceBudget {
  int device_index = 0;  // dp_rank * (pp * tp) + pp_stage * tp + tp_rank
  int dp_rank = 0;       // the data-parallel engine it belongs to (0 without DP)
  int pp_stage = 0;
  int tp_rank = 0;
  /// Routed experts on this device (MoE models): all of them without EP (each split moe_tp
  /// ways), the device's contiguous range with EP (local_num_experts); 0 for dense models.
  std::int64_t num_local_experts = 0;
  std::int64_t first_local_expert = 0;
  /// Of `weights`, the routed experts' bytes.
  Bytes expert_weights;
  std::int64_t num_layers = 0;  // decoder layers on this device
  Bytes total;                  // as the runtime reports it
  Bytes usable;                 // total x gpu_memory_utilization
  Bytes weights;                // parameters + rotary cache (vLLM's "model weights")
  /// Of `weights`, the bytes held in host memory (--cpu-offload-gb); not in device memory.
  Bytes weights_offloaded;
  Bytes draft_weights;          // speculative decoding's drafter (EngineConfig::draft)
  Bytes lora_weights;           // --enable-lora: the stacked adapter slots (lora_slot_bytes)
  Bytes draft_kv_bytes_per_token;  // of kv_bytes_per_token, the drafter's layers
  Bytes activation_peak;
  Bytes non_torch;
  Bytes cuda_graph;
  Bytes cuda_context;
  Bytes kv_cache;               // what vLLM hands the KV cache (num_blocks x block bytes)
  Bytes kv_available;           // before rounding to whole blocks; negative when nothing left
  Bytes kv_bytes_per_token;     // all this device's layers, one token
  Bytes page_bytes;             // one block of one layer
  std::int64_t layers_per_group = 0;
  std::int64_t num_groups = 0;
  std::int64_t num_gpu_blocks = 0;  // this device alone, before the minimum over devices
  /// Memory beyond `usable` still needed by the context and graphs; > 0 is an OOM risk. With
  /// EngineConfig::kv_cache_memory: everything the device holds beyond its total.
  Bytes headroom_shortfall;
};

struct BudgetResult {
  std::int64_t num_params = 0;
  std::int64_t num_active_params = 0;
  /// One per (dp rank, pp stage, tp rank), in that order (device_index).
  std::vector<DeviceBudget> devices;
  /// Minimum over devices, or the override. With data parallelism each DP rank sizes its own
  /// cache from its own devices' free memory (vLLM runs one engine per rank); the ranks differ
  /// only when the experts do not divide evenly, and then this is the smallest rank's count
  /// (each device's own is in devices[].num_gpu_blocks).
  std::int64_t num_gpu_blocks = 0;
  std::int64_t kv_cache_tokens = 0;
  std::int64_t blocks_per_request = 0;  // for one max_model_len request
  double max_concurrency = 0.0;
  bool fits = false;
  /// When it does not fit: why, in one sentence, with the shortfall in bytes.
  std::string reason;
  Bytes shortfall;
  /// The longest max_model_len one request could have with this KV cache (0: none).
  std::int64_t max_model_len_that_fits = 0;
};

/// The budget of `spec` under `cfg` on devices with `device_total` bytes and `num_sms`
/// streaming multiprocessors each (num_sms sizes the sampler's per-SM buffer; it must be
/// positive). Requires validate() to have passed. Not fitting is a result (fits = false), not
/// an error.
BudgetResult compute_budget(const model::ModelSpec& spec, const EngineConfig& cfg,
                            Bytes device_total, int num_sms, const RuntimeOverheads& overheads);

/// compute_budget on `device` (its memory_total and num_sms).
BudgetResult compute_budget(const model::ModelSpec& spec, const EngineConfig& cfg,
                            const hardware::DeviceSpec& device,
                            const RuntimeOverheads& overheads);

}  // namespace vramsim::memory
