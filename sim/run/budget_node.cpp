#include "sim/run/budget_node.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/io/training_scenario.hpp"
#include "sim/run/lmcache_config.hpp"

namespace vramsim::run {

namespace {

// `nvls`: whether the node charges NCCL's NVLS buffers (BudgetAnswer::nvls).
Alternative try_config(const model::ModelSpec& spec, memory::EngineConfig cfg,
                       const hardware::DeviceSpec& device, int tp, bool nvls) {
  Alternative alt;
  alt.gpu_id = device.id;
  alt.tp = tp;
  alt.pp = cfg.pp;
  cfg.tp = tp;
  ValidationReport r;
  memory::validate(cfg, spec, r);
  if (!r.ok()) return alt;  // this split is impossible for the model: not a candidate
  const memory::BudgetResult res =
      memory::compute_budget(spec, cfg, device, memory::default_overheads(nvls));
  alt.fits = res.fits;
  alt.num_gpu_blocks = res.num_gpu_blocks;
  alt.max_concurrency = res.max_concurrency;
  return alt;
}

// The whole KV blocks of `bytes_per_block` (blocks of `block_size` tokens) that an offload
// tier of `size` holds; a size that holds none is refused under `field`, the tier's setting.
std::int64_t whole_kv_blocks(Bytes size, std::string_view field, Bytes bytes_per_block,
                             std::int64_t block_size) {
  const std::int64_t n = size / bytes_per_block;
  if (n == 0) {
    throw ConfigError(std::string(field),
                      fmt::format("{} holds no KV block: one block of {} tokens takes {} bytes "
                                  "on the replica's devices together",
                                  format_bytes(size), block_size, bytes_per_block.count()));
  }
  return n;
}

// LMCache's tiers (KvOffloadBudget's comment): each of the replica's TP x PP workers holds
// max_local_cpu_size of pinned host memory; vLLM's --kv-offloading-size S sets it to S / (TP x
// PP) (vllm/config/vllm.py, _post_init_kv_transfer_config, kv_gb_per_rank), else LMCache's
// configuration or its default 5.0 GiB. A worker holds the whole chunks of its own KV shard
// that fit; the replica's tier is the smallest worker's count (a chunk is useful only when every
// worker holds its shard).
KvOffloadBudget lmcache_offload_budget(const BudgetRequest& req, const memory::EngineConfig& e,
                                       const memory::BudgetResult& r) {
  const LmcacheSettings lm = read_lmcache_config(req.lmcache_config);
  const SourceLocation at{lm.file, 0};
  if (lm.chunk_size % e.block_size != 0) {
    throw ConfigError("engine.lmcache_config",
                      fmt::format("chunk_size {} is not a whole number of vLLM blocks of {} "
                                  "tokens: vramsim keys LMCache's chunks by whole blocks",
                                  lm.chunk_size, e.block_size),
                      at);
  }
  KvOffloadBudget k;
  k.backend = serving::KvOffloadBackend::kLmcache;
  k.chunk_size = lm.chunk_size;
  k.chunk_blocks = lm.chunk_size / e.block_size;
  k.num_workers = std::int64_t{e.tp} * e.pp;
  k.host_bytes_per_worker = req.kv_offloading_size > Bytes(0)
                                ? Bytes(req.kv_offloading_size.count() / k.num_workers)
                                : lmcache_gib(lm.max_local_cpu_size.value_or(
                                      kLmcacheDefaultCpuGib));
  if (req.kv_offloading_disk_size > Bytes(0)) {
    k.disk_bytes_per_worker = Bytes(req.kv_offloading_disk_size.count() / k.num_workers);
  } else if (lm.local_disk) {
    k.disk_bytes_per_worker = lmcache_gib(lm.max_local_disk_size);
  }
  Bytes largest_chunk;  // one worker's share of a chunk, the largest over the replica's workers
  for (const memory::DeviceBudget& d : r.devices) {
    if (d.dp_rank != 0) continue;
    k.bytes_per_block += d.kv_bytes_per_token;
    largest_chunk = std::max(largest_chunk, d.kv_bytes_per_token * lm.chunk_size);
  }
  k.bytes_per_block = k.bytes_per_block * e.block_size;
  if (largest_chunk == Bytes(0)) return k;
  const auto whole_chunks = [&](Bytes per_worker, std::string_view field) {
    const std::int64_t n = per_worker / largest_chunk;
    if (n == 0) {
      throw ConfigError(std::string(field),
                        fmt::format("{} per worker holds no LMCache chunk: one chunk of {} "
                                    "tokens takes {} bytes on a worker",
                                    format_bytes(per_worker), lm.chunk_size,
                                    largest_chunk.count()),
                        at);
    }
    return n;
  };
  k.num_blocks = whole_chunks(k.host_bytes_per_worker, "engine.kv_offloading_size") *
                 k.chunk_blocks;
  k.host_bytes = k.host_bytes_per_worker * k.num_workers;
  if (k.disk_bytes_per_worker > Bytes(0)) {
    k.disk_num_blocks = whole_chunks(k.disk_bytes_per_worker, "engine.kv_offloading_disk_size") *
                        k.chunk_blocks;
    k.disk_bytes = k.disk_num_blocks * k.bytes_per_block;
  }
  return k;
}

}  // namespace

std::optional<hardware::NodeSpec> budget_topology_node(const BudgetRequest& req,
                                                       const hardware::DeviceSpec& device,
                                                       const memory::EngineConfig& engine,
                                                       const std::filesystem::path& root) {
  if (req.topology.empty()) return std::nullopt;
  io::ClusterTopology t =
      io::cluster_topology_for_device(req.topology, device, root / "topologies");
  if (t.default_node) return std::nullopt;
  // NOTE: budget answers for GPUs of one node (its host memory, its fabric's NVLS): engines
  // that span nodes are not what the node sheet describes, so they are refused, not guessed.
  const std::int64_t dp = std::max(1, engine.data_parallel_size);
  const std::int64_t gpus = std::int64_t{engine.tp} * engine.pp * dp;
  if (gpus > t.node->num_gpus) {
    throw ConfigError(
        "hardware.topology",
        fmt::format("node '{}' holds {} GPUs, fewer than the {} this budget runs on (TP {} x "
                    "PP {} x DP {}); give a node of at least {} GPUs, or leave --topology out",
                    t.node->id, t.node->num_gpus, gpus, engine.tp, engine.pp, dp, gpus),
        {t.node->source_file, 0});
  }
  return std::move(t.node);
}

void place_on_node(const BudgetRequest& req, BudgetAnswer& a, const std::filesystem::path& root) {
  a.topology_node = budget_topology_node(req, a.device, a.engine, root);
  if (!req.topology.empty() && !a.topology_node) {
    a.notes.push_back("hardware.topology: a cluster file without a node; the GPU's default node "
                      "sheet holds the KV offload tier, the device sheet decides NVLS");
  }
  a.nvls = a.topology_node ? hardware::has_nvls(*a.topology_node, a.device)
                           : hardware::has_nvls(a.device);
}

KvOffloadBudget kv_offload_budget(const BudgetRequest& req, const memory::EngineConfig& e,
                                  const memory::BudgetResult& r) {
  KvOffloadBudget k;
  // NOTE: checked here rather than by its option row, which takes any string, so that budget
  // and serve both refuse it (the row's round trip needs a second value to try).
  const bool lmcache = req.kv_offloading_backend == "lmcache";
  if (req.kv_offloading_backend != "native" && !lmcache) {
    throw ConfigError("engine.kv_offloading_backend",
                      fmt::format("unknown value '{}'; valid: native (vLLM's "
                                  "OffloadingConnector), lmcache (LMCacheConnectorV1 with "
                                  "LMCache's CPU tier)",
                                  req.kv_offloading_backend));
  }
  if (!lmcache && !req.lmcache_config.empty()) {
    throw ConfigError("engine.lmcache_config",
                      "is LMCache's configuration: give --kv-offloading-backend lmcache too");
  }
  if (lmcache) return lmcache_offload_budget(req, e, r);
  if (req.kv_offloading_size == Bytes(0)) {
    if (req.kv_offloading_disk_size > Bytes(0)) {
      throw ConfigError("engine.kv_offloading_disk_size",
                        "needs engine.kv_offloading_size (--kv-offloading-size): the disk tier "
                        "is written through from the host-memory tier and read back through it");
    }
    return k;
  }
  // One replica's devices: each DP rank has a tier of its own.
  for (const memory::DeviceBudget& d : r.devices) {
    if (d.dp_rank == 0) k.bytes_per_block += d.kv_bytes_per_token;
  }
  k.bytes_per_block = k.bytes_per_block * e.block_size;
  if (k.bytes_per_block == Bytes(0)) return k;
  k.num_blocks = whole_kv_blocks(req.kv_offloading_size, "engine.kv_offloading_size",
                                 k.bytes_per_block, e.block_size);
  k.host_bytes = k.num_blocks * k.bytes_per_block;
  if (req.kv_offloading_disk_size == Bytes(0)) return k;
  k.disk_num_blocks = whole_kv_blocks(req.kv_offloading_disk_size, "engine.kv_offloading_disk_size",
                                      k.bytes_per_block, e.block_size);
  k.disk_bytes = k.disk_num_blocks * k.bytes_per_block;
  return k;
}

KvOffloadHost kv_offload_host(const BudgetAnswer& a, const std::filesystem::path& root) {
  KvOffloadHost h;
  if (a.kv_offload.host_bytes == Bytes(0)) return h;
  const hardware::NodeSpec node =
      a.topology_node ? *a.topology_node
                      : io::default_node_of_device(a.device.id, root / "topologies",
                                                   "hardware.gpu");
  h.node = node.id;
  h.node_file = node.source_file;
  h.from_topology = a.topology_node.has_value();
  h.host_memory = node.host_memory;
  h.num_engines = std::max<std::int64_t>(1, a.engine.data_parallel_size);
  h.host_bytes_per_node = hardware::kv_tier_host_bytes_per_node(
      a.kv_offload.host_bytes, h.num_engines, std::int64_t{a.engine.tp} * a.engine.pp,
      node.num_gpus);
  if (h.host_memory) h.fits = h.host_bytes_per_node <= *h.host_memory;
  return h;
}

void add_alternatives(const BudgetRequest& req, BudgetAnswer& a,
                      const std::filesystem::path& root) {
  const std::filesystem::path topo = root / "topologies";
  for (int tp : {2, 4, 8, 16}) {
    if (tp <= a.engine.tp) continue;
    // With --topology, only what its node holds.
    if (a.topology_node && std::int64_t{tp} * a.engine.pp * a.engine.data_parallel_size >
                               a.topology_node->num_gpus) {
      break;
    }
    Alternative alt = try_config(a.model, a.engine, a.device, tp, a.nvls);
    if (alt.fits) {
      a.larger_tp.push_back(alt);
      break;
    }
  }
  for (const std::string& id : io::device_ids(topo)) {
    if (id == a.device.id) continue;
    const hardware::DeviceSpec other = io::find_device(id, topo);
    memory::EngineConfig cfg = a.engine;
    if (req.max_num_seqs == 0) cfg.max_num_seqs = default_max_num_seqs(other);
    if (req.max_num_batched_tokens == 0) {
      cfg.max_num_batched_tokens = default_max_num_batched_tokens(other);
    }
    // NOTE: another GPU does not populate this node (a node sheet holds one GPU type), so its
    // NVLS follows its device sheet.
    Alternative alt = try_config(a.model, cfg, other, a.engine.tp, hardware::has_nvls(other));
    if (cfg.max_num_seqs != a.engine.max_num_seqs ||
        cfg.max_num_batched_tokens != a.engine.max_num_batched_tokens) {
      // Say when it is vLLM's defaults for that GPU, not its memory, that make the difference.
      alt.why = fmt::format("with vLLM's defaults for it: {} tokens, {} sequences per step "
                            "(here {}, {}), a smaller profile batch",
                            cfg.max_num_batched_tokens, cfg.max_num_seqs,
                            a.engine.max_num_batched_tokens, a.engine.max_num_seqs);
    }
    if (alt.fits) a.other_gpus.push_back(alt);
  }
  std::stable_sort(a.other_gpus.begin(), a.other_gpus.end(),
                   [](const Alternative& x, const Alternative& y) {
                     return x.max_concurrency > y.max_concurrency;
                   });
}

}  // namespace vramsim::run
