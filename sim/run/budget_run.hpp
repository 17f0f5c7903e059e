// The run layer of `vramsim budget` (and of serve, which sizes its KV cache with it): resolving
// vLLM's defaults, computing the per-device budget, and searching what would fit when it does
// not. Callable without the command line; the answer is rendered by sim/cli/budget_output.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/hardware/calibration_record.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/hardware/node_spec.hpp"
#include "sim/memory/budget.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/run/budget_draft.hpp"
#include "sim/serving/expert_parallel.hpp"
#include "sim/serving/kv_cache_manager.hpp"

namespace vramsim::run {

/// The user's request: raw strings and numbers; 0 / "auto" mean "vLLM's default".
struct BudgetRequest {
  std::string model_id;
  /// --revision: the branch, tag or commit of a Hugging Face id (model::ResolveOptions).
  std::string revision = "main";
  std::string gpu_id;
  /// hardware.topology (budget's --topology): a node id of topologies/nodes, a node file or a
  /// cluster file (io::cluster_topology_for_device) whose node holds the GPUs; its host memory
  /// bounds the KV offload tier and its fabric decides NCCL's NVLS buffers. "": the GPU's
  /// default node sheet for the host memory, the device sheet for NVLS. serve passes its
  /// --topology here too (budget_request in serve_config.cpp), so both charge the same NVLS.
  std::string topology;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::string dtype = "auto";
  std::string kv_cache_dtype = "auto";
  std::string quantization = "none";
  std::int64_t max_model_len = 0;
  std::int64_t max_num_seqs = 0;
  std::int64_t max_num_batched_tokens = 0;
  double gpu_memory_utilization = 0.9;
  std::int64_t block_size = 16;
  std::int64_t num_gpu_blocks = 0;
  /// vLLM's --kv-cache-memory-bytes: the KV cache of each device, in bytes; 0: profiled.
  std::int64_t kv_cache_memory_bytes = 0;
  bool enforce_eager = false;
  /// Off: vLLM schedules whole prompts, so its token budget (and the profile run's batch) is at
  /// least max_model_len.
  bool enable_chunked_prefill = true;
  /// Whether the user gave enable_chunked_prefill; unset, a V0 release decides it
  /// (run::vllm_v0_defaults), a V1 release keeps it on.
  bool chunked_prefill_given = true;
  /// For a V0 release (before 0.8, run/vllm_version.hpp): size the KV cache with the start-up
  /// rules of kOldestModelledV1Vllm, saying so in a note (serve and the commands built on it);
  /// false refuses such a release (budget, whose answer is that accounting).
  bool v0_kv_from_v1_rules = false;
  /// vLLM's --kv-offloading-size: the host-memory KV offload tier of the replica, all TP ranks
  /// together (vllm/config/cache.py); 0: none.
  Bytes kv_offloading_size;
  /// vLLM's --kv-offloading-backend: "native" (the OffloadingConnector) or "lmcache"
  /// (LMCacheConnectorV1 with LMCache's CPU tier; without kv_offloading_size, sized by
  /// lmcache_config's max_local_cpu_size or LMCache's default, as --kv-transfer-config
  /// '{"kv_connector":"LMCacheConnectorV1"}' runs it).
  std::string kv_offloading_backend = "native";
  /// LMCache's YAML configuration (LMCACHE_CONFIG_FILE; run/lmcache_config.hpp); "" for
  /// LMCache's defaults. Only with kv_offloading_backend "lmcache".
  std::string lmcache_config;
  /// The KV disk tier behind the offload tier (LMCache's local_disk backend), all TP ranks of
  /// the replica together like kv_offloading_size; 0: none.
  Bytes kv_offloading_disk_size;
  /// Subtract the CUDA-graph estimate from the KV cache even where the release does not by
  /// default (vLLM 0.19 with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1).
  bool subtract_cuda_graph = false;
  /// --vllm-version: the release whose accounting is modelled (run/vllm_version.hpp).
  std::string vllm_version = "0.19.0";
  /// Whether FlashInfer is installed beside vLLM (the vllm/vllm-openai image ships it). It
  /// decides the profile's sampler only on releases that use FlashInfer's kernel when present
  /// (before 0.11.1, run::VllmBehaviour::flashinfer_sampler); later ones ignore it.
  bool flashinfer_installed = true;
  /// Whether the TP ranks reach each other's memory (CUDA peer-to-peer). Without it (ranks on
  /// different nodes, or GPUs whose P2P test fails, as in containers without P2P access) vLLM
  /// turns its custom all-reduce off and NCCL stages through host memory, so no communicator
  /// buffers sit in device memory (answer_budget). Ignored at TP = 1.
  bool gpu_p2p = true;
  std::int64_t seed = 0;
  bool suggest = true;  // when it does not fit, try other TP degrees and GPUs
  /// A calibration profile (kernels/, `vramsim-calibrate`) whose measured overheads replace the
  /// defaults; its device_id must be the GPU's. Empty: datasheet defaults.
  std::string calibration;
  /// vLLM's --speculative-config JSON (sim/serving/speculative.hpp); "" for none. It needs
  /// spec_acceptance_rate ("0.7", or one rate per draft position "0.8,0.6,0.5").
  std::string speculative_config;
  std::string spec_acceptance_rate;
  /// vLLM's --cpu-offload-gb: GiB of weights per device held in host memory; 0: none.
  double cpu_offload_gb = 0.0;
  /// vLLM's LoRAConfig (--enable-lora, --max-loras, --max-lora-rank, --max-cpu-loras,
  /// --lora-dtype, --fully-sharded-loras): memory::LoraConfig. max_cpu_loras 0: max_loras;
  /// lora_dtype "auto": the model's dtype.
  bool enable_lora = false;
  std::int64_t max_loras = 1;
  std::int64_t max_lora_rank = 16;
  std::int64_t max_cpu_loras = 0;
  std::string lora_dtype = "auto";
  bool fully_sharded_loras = false;
  /// vLLM's --data-parallel-size and --enable-expert-parallel (memory::EngineConfig,
  /// serving::ExpertParallelSetup), and its --all2all-backend by name.
  std::int64_t data_parallel_size = 1;
  bool enable_expert_parallel = false;
  std::string all2all_backend = "allgather_reducescatter";
  /// The busiest expert's tokens over the mean per step (>= 1), for the step time only
  /// (serving::ExpertParallelSetup::expert_load_imbalance).
  double expert_load_imbalance = 1.0;
};

/// Another configuration that was tried because the requested one does not fit.
struct Alternative {
  std::string gpu_id;
  int tp = 1;
  int pp = 1;
  bool fits = false;
  std::int64_t num_gpu_blocks = 0;
  double max_concurrency = 0.0;
  std::string why;  // other GPUs: when vLLM's defaults for it differ, the defaults it runs with
};

/// A change of the engine settings on the same GPU and split, tried because the requested
/// configuration does not fit, cheapest first: what users turn before buying GPUs.
struct Suggestion {
  std::string change;  // as flags: "--gpu-memory-utilization 0.95"
  std::string why;     // what it trades
  bool fits = false;
  std::int64_t num_gpu_blocks = 0;
  double max_concurrency = 0.0;
};

/// How far the binding device is from the edge: KV memory beyond what one max_model_len
/// request needs (negative: the shortfall), and that as a share of its usable memory.
struct Margin {
  Bytes bytes;
  double share_of_usable = 0.0;
  /// Within kKnifeEdgeShare of the edge: a vLLM version, driver or allocator difference can
  /// flip the answer; measure the peak at the maximum input and concurrency before relying on it.
  bool knife_edge = false;
};
/// 2% of usable memory: well above the budget's held-out error on vLLM 0.19 start-up logs
/// (0.26% mean, 4.98% worst of KV tokens, which is under 0.3% of usable memory on those runs:
/// tests/validation/README.md) and the CUDA context's variation across drivers (tens of MiB on
/// an 80 GiB device: topologies/devices/h100-sxm.toml), so only a real knife edge is flagged.
inline constexpr double kKnifeEdgeShare = 0.02;

/// The host memory of the KV offload tier (--kv-offloading-size), as vLLM's CPU backend sizes
/// it (vllm/v1/kv_offload/cpu.py, CPUOffloadingSpec: num_blocks = cpu_bytes_to_use //
/// (one worker's bytes per block * world_size)): whole blocks of the replica's KV, every device's
/// share together. All zero without a tier.
struct KvOffloadBudget {
  Bytes bytes_per_block;        // all devices of the replica
  std::int64_t num_blocks = 0;  // blocks of block_size tokens the tier holds
  Bytes host_bytes;             // num_blocks * bytes_per_block: pinned host memory per replica
  /// The disk tier (--kv-offloading-disk-size): whole blocks of bytes_per_block, as LMCache's
  /// LocalDiskBackend fills max_local_disk_size (lmcache/v1/storage_backend/
  /// local_disk_backend.py: it evicts while current size + one chunk exceeds the maximum).
  /// Zero without one.
  std::int64_t disk_num_blocks = 0;
  Bytes disk_bytes;             // disk_num_blocks * bytes_per_block: local disk per replica
  /// LMCache (backend kLmcache): its chunk_size in tokens and in blocks (the tiers' entries),
  /// its workers (TP x PP ranks, each with a CPU tier of its own) and each worker's pinned
  /// host memory: max_local_cpu_size, allocated whole at start-up (LocalCPUBackend.
  /// initialize_allocator), so host_bytes is it times num_workers, not the whole chunks
  /// it holds. num_blocks is the whole chunks the smallest worker's memory holds, in blocks.
  serving::KvOffloadBackend backend = serving::KvOffloadBackend::kNative;
  std::int64_t chunk_size = 0;
  std::int64_t chunk_blocks = 1;
  std::int64_t num_workers = 0;
  Bytes host_bytes_per_worker;
  Bytes disk_bytes_per_worker;
};

/// The KV offload tier against the host memory of the server the GPU sits in: the node of
/// hardware.topology (BudgetRequest::topology) or, without one, the GPU's default node sheet
/// (io::default_node_of_device: h100-sxm -> h100-sxm-8x-nvswitch, a DGX H100 with 2 TiB).
/// Every vLLM engine (each DP rank) pins a tier of its own in the node's memory
/// (hardware::kv_tier_host_bytes_per_node), so this budget's data_parallel_size engines need
/// host_bytes_per_node there.
/// NOTE: a tier above the node's memory is a warning, not a refusal: vLLM pins the tier at
/// start-up and cannot start there, but the node is the sheet's guess and budget's answer is
/// about the GPU (a larger server, or --max-host-memory for plan serve, may hold it). The
/// budget's `fits` stays the GPU's. Empty (node "") without a tier.
struct KvOffloadHost {
  std::string node;                  // the node sheet's id
  std::string node_file;             // its file
  bool from_topology = false;        // the node is hardware.topology's, not the GPU's default
  std::optional<Bytes> host_memory;  // the sheet's host_memory; nullopt: not recorded
  std::int64_t num_engines = 0;      // this budget's engines with a tier (data_parallel_size)
  Bytes host_bytes_per_node;         // their tiers on the node together
  /// host_bytes_per_node <= host_memory; nullopt when the sheet records no host memory.
  std::optional<bool> fits;
};

/// Multi-LoRA's memory beside the per-device slots (DeviceBudget::lora_weights): the CPU
/// adapter cache. All zero without --enable-lora.
struct LoraBudget {
  /// One adapter at max_lora_rank, unsharded, in lora_dtype (memory::lora_adapter_bytes).
  Bytes adapter_bytes;
  /// max_cpu_loras adapters: host memory each worker (device) holds for its LRU cache.
  Bytes host_bytes_per_device;
};

struct BudgetAnswer {
  model::ModelSpec model;
  hardware::DeviceSpec device;
  memory::EngineConfig engine;
  memory::RuntimeOverheads overheads;
  /// The node hardware.topology names (validated for the device, holding the budget's
  /// TP x PP x DP GPUs); nullopt without --topology, or with a cluster file naming no node.
  std::optional<hardware::NodeSpec> topology_node;
  /// Whether the overheads charge NCCL's NVLS buffers for TP > 1: hardware::has_nvls of the
  /// topology's node, else of the device sheet alone.
  bool nvls = false;
  memory::BudgetResult result;
  std::vector<std::string> notes;          // defaults vLLM would pick, and why
  /// Where the weight bytes come from: "safetensors headers (N files)" or "config.json".
  std::string weights_source = "config.json";
  std::string vllm_version;                // the release modelled (request's --vllm-version)
  /// Chunked prefill as the engine runs it: the request's, or a V0 release's default.
  bool enable_chunked_prefill = true;
  /// How far the KV-cache accounting is validated for this setting
  /// (cost/validated_bands.hpp), or why no validated band covers it.
  std::string kv_error_band;
  Margin margin;
  KvOffloadBudget kv_offload;
  KvOffloadHost kv_offload_host;
  LoraBudget lora;
  std::vector<Suggestion> suggestions;     // same GPU and split, engine settings changed
  std::vector<Alternative> larger_tp;      // same GPU, more tensor parallelism
  std::vector<Alternative> other_gpus;     // same TP/PP, other device sheets that fit
  std::int64_t seed = 0;
  std::optional<calibration::CalibrationProfile> calibration;  // when --calibration was given
  /// Speculative decoding's drafter (its memory is also engine.draft); nullopt: off.
  std::optional<SpeculativeDraft> speculative;
  /// The data-parallel MoE group as serve's step-time model takes it (data_parallel_size 1:
  /// none; engine.data_parallel_size and engine.enable_expert_parallel hold the same).
  serving::ExpertParallelSetup expert_parallel;
};

/// vLLM V1's batch defaults for `vllm serve` (vllm/engine/arg_utils.py, EngineArgs batch
/// defaults): 8192 tokens / 1024 sequences on GPUs with >= 70 GiB that are not A100s,
/// otherwise 2048 / 256.
std::int64_t default_max_num_batched_tokens(const hardware::DeviceSpec& device);
std::int64_t default_max_num_seqs(const hardware::DeviceSpec& device);

/// Resolves defaults, validates (ConfigError naming the flag), computes the budget and, when it
/// does not fit and req.suggest is set, the alternatives.
BudgetAnswer answer_budget(const BudgetRequest& req, const std::filesystem::path& project_root);

}  // namespace vramsim::run
