#include "sim/run/budget_results.hpp"

#include "sim/core/check.hpp"
#include "sim/hardware/node_spec.hpp"
#include "sim/io/results_file.hpp"
#include "sim/io/typed_columns.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/run/host_stream_rate.hpp"

#include <algorithm>

namespace vramsim::run {

namespace {

// Whether the budget has a data-parallel group or expert parallelism (their fields are
// written only then, so that other budgets keep their shape).
bool has_dp_group(const memory::EngineConfig& e) {
  return e.data_parallel_size > 1 || e.enable_expert_parallel;
}

nlohmann::ordered_json device_json(const memory::DeviceBudget& d, const memory::BudgetResult& r,
                                   std::int64_t block_size, bool dp_group) {
  nlohmann::ordered_json j;
  j["device_index"] = d.device_index;
  if (dp_group) j["dp_rank"] = d.dp_rank;
  j["pp_stage"] = d.pp_stage;
  j["tp_rank"] = d.tp_rank;
  if (dp_group && d.num_local_experts > 0) {
    j["num_local_experts"] = d.num_local_experts;
    j["first_local_expert"] = d.first_local_expert;
    j["expert_weights_bytes"] = d.expert_weights.count();
  }
  j["num_layers"] = d.num_layers;
  j["num_params"] = r.num_params;
  j["total_memory_bytes"] = d.total.count();
  j["usable_memory_bytes"] = d.usable.count();
  j["weights_bytes"] = d.weights.count();
  j["activation_peak_bytes"] = d.activation_peak.count();
  j["non_torch_bytes"] = d.non_torch.count();
  j["cuda_graph_bytes"] = d.cuda_graph.count();
  j["cuda_context_bytes"] = d.cuda_context.count();
  j["kv_cache_bytes"] = d.kv_cache.count();
  j["kv_bytes_per_token"] = d.kv_bytes_per_token.count();
  j["num_gpu_blocks"] = r.num_gpu_blocks;
  j["num_gpu_blocks_device"] = d.num_gpu_blocks;
  j["kv_cache_tokens"] = r.num_gpu_blocks / std::max<std::int64_t>(1, d.num_groups) * block_size;
  j["max_concurrency"] = r.max_concurrency;
  j["fits"] = r.fits;
  // The CUDA context and graphs beyond what gpu_memory_utilization leaves (an OOM risk), not a
  // shortfall of the budget: that is the one `shortfall_bytes`.
  j["outside_budget_overrun_bytes"] = d.headroom_shortfall.count();
  // Present only when the setting is on, so that budgets without it stay as they were.
  if (d.weights_offloaded > Bytes(0)) {
    j["weights_offloaded_bytes"] = d.weights_offloaded.count();
    j["weights_on_device_bytes"] = (d.weights - d.weights_offloaded).count();
    j["host_memory_bytes"] = d.weights_offloaded.count();
  }
  if (d.draft_weights > Bytes(0) || d.draft_kv_bytes_per_token > Bytes(0)) {
    j["draft_weights_bytes"] = d.draft_weights.count();
    j["draft_kv_bytes_per_token"] = d.draft_kv_bytes_per_token.count();
  }
  if (d.lora_weights > Bytes(0)) j["lora_weights_bytes"] = d.lora_weights.count();
  return j;
}

}  // namespace

const memory::DeviceBudget& headline_device(const memory::BudgetResult& r) {
  VRAMSIM_CHECK(!r.devices.empty(), "a budget without devices has no headline row");
  return *std::min_element(r.devices.begin(), r.devices.end(),
                           [](const memory::DeviceBudget& x, const memory::DeviceBudget& y) {
                             return x.num_gpu_blocks < y.num_gpu_blocks;
                           });
}

nlohmann::ordered_json speculative_json(const serving::SpeculativeConfig& c) {
  nlohmann::ordered_json spec;
  spec["method"] = std::string(serving::to_string(c.method));
  spec["model"] = c.model;
  spec["num_speculative_tokens"] = c.num_speculative_tokens;
  spec["acceptance_rates"] = c.acceptance_rates;
  spec["expected_tokens_per_step"] = c.expected_tokens_per_step();
  return spec;
}

std::string nvls_source(const BudgetAnswer& a) {
  return a.topology_node ? "node sheet " + a.topology_node->id : "device sheet " + a.device.id;
}

nlohmann::ordered_json budget_json(const BudgetAnswer& a) {
  const memory::BudgetResult& r = a.result;
  const memory::EngineConfig& e = a.engine;
  nlohmann::ordered_json j;
  j["model"] = a.model.name;
  j["gpu"] = a.device.id;
  j["tp"] = e.tp;
  j["pp"] = e.pp;
  j["dtype"] = std::string(to_string(e.dtype));
  j["kv_cache_dtype"] = std::string(to_string(e.kv_cache_dtype));
  j["quantization"] = std::string(model::to_string(e.weights.quantization));
  j["max_model_len"] = e.max_model_len;
  j["max_num_seqs"] = e.max_num_seqs;
  j["max_num_batched_tokens"] = e.max_num_batched_tokens;
  j["gpu_memory_utilization"] = e.gpu_memory_utilization;
  j["block_size"] = e.block_size;
  j["vllm_version"] = a.vllm_version;
  j["subtract_cuda_graph"] = e.subtract_cuda_graph;
  // Present only when given, so that other budgets keep their shape.
  if (e.kv_cache_memory) j["kv_cache_memory_bytes"] = e.kv_cache_memory->count();
  if (a.topology_node) {
    j["topology_node"] = a.topology_node->id;
    j["topology_node_file"] = a.topology_node->source_file;
    j["topology_node_num_gpus"] = a.topology_node->num_gpus;
    j["topology_node_fabric"] = std::string(hardware::to_string(a.topology_node->fabric.kind));
  }
  // --cpu-offload-gb: the pinned host-to-device rate the offloaded weights cross at in every
  // step, and where it comes from (run::host_copy_rate), as serve times them.
  if (headline_device(a.result).weights_offloaded > Bytes(0)) {
    const HostStreamRate stream = host_copy_rate(a, HostCopyDirection::kHostToDevice);
    j["weights_stream_bytes_per_s"] = stream.rate.bytes_per_second();
    j["weights_stream_source"] = stream.source;
  }
  // Whether the non-torch memory holds NCCL's NVLS buffers (BudgetAnswer::nvls), and which
  // sheet said so; present where communicator buffers are charged (TP > 1).
  if (e.tp > 1) {
    j["nvls"] = a.nvls;
    j["nvls_from"] = nvls_source(a);
  }
  // The headline: the most constrained device's row, flat, as DESIGN.md names the fields.
  const bool dp_group = has_dp_group(e);
  if (dp_group) {
    j["data_parallel_size"] = e.data_parallel_size;
    j["enable_expert_parallel"] = e.enable_expert_parallel;
    const memory::MoeSplit split =
        memory::moe_split(e.tp, e.data_parallel_size, e.enable_expert_parallel);
    j["expert_parallel_size"] = split.ep_size;
    j["num_devices"] = e.data_parallel_size * e.tp * e.pp;
  }
  const nlohmann::ordered_json head = device_json(headline_device(r), r, e.block_size, dp_group);
  for (const auto& [k, v] : head.items()) {
    if (k != "device_index" && k != "dp_rank" && k != "pp_stage" && k != "tp_rank" &&
        k != "first_local_expert") {
      j[k] = v;
    }
  }
  j["num_active_params"] = r.num_active_params;
  j["blocks_per_request"] = r.blocks_per_request;
  j["max_model_len_that_fits"] = r.max_model_len_that_fits;
  j["reason"] = r.reason;
  j["shortfall_bytes"] = r.shortfall.count();
  j["margin_bytes"] = a.margin.bytes.count();
  j["margin_share_of_usable"] = a.margin.share_of_usable;
  j["knife_edge"] = a.margin.knife_edge;
  j["kv_offload_num_blocks"] = a.kv_offload.num_blocks;
  j["kv_offload_host_bytes"] = a.kv_offload.host_bytes.count();
  // LMCache's tier only, so that other budgets' output keeps its shape.
  if (a.kv_offload.backend == serving::KvOffloadBackend::kLmcache) {
    j["kv_offload_backend"] = "lmcache";
    j["lmcache_chunk_size"] = a.kv_offload.chunk_size;
    j["lmcache_num_workers"] = a.kv_offload.num_workers;
    j["lmcache_host_bytes_per_worker"] = a.kv_offload.host_bytes_per_worker.count();
  }
  // The tier against its node's host memory (KvOffloadHost): present only with a tier, so that
  // other budgets' output keeps its shape; null where the node sheet records none.
  if (const KvOffloadHost& h = a.kv_offload_host; !h.node.empty()) {
    j["kv_offload_node"] = h.node;
    j["kv_offload_node_file"] = h.node_file;
    j["kv_offload_node_from_topology"] = h.from_topology;
    j["kv_offload_node_host_memory_bytes"] =
        h.host_memory ? nlohmann::ordered_json(h.host_memory->count()) : nlohmann::ordered_json();
    j["kv_offload_host_bytes_per_node"] = h.host_bytes_per_node.count();
    j["kv_offload_fits_host_memory"] =
        h.fits ? nlohmann::ordered_json(*h.fits) : nlohmann::ordered_json();
  }
  // Present only with the disk tier, so that other budgets' output keeps its shape.
  if (a.kv_offload.disk_num_blocks > 0) {
    j["kv_offload_disk_num_blocks"] = a.kv_offload.disk_num_blocks;
    j["kv_offload_disk_bytes"] = a.kv_offload.disk_bytes.count();
  }
  j["calibration_source"] = a.overheads.source;
  j["kv_error_band"] = a.kv_error_band;
  j["weights_source"] = a.weights_source;
  j["notes"] = a.notes;
  if (a.speculative) j["speculative"] = speculative_json(a.speculative->config);
  if (a.engine.lora) {
    const memory::LoraConfig& l = *a.engine.lora;
    j["lora"] = {{"max_loras", l.max_loras},
                 {"max_lora_rank", l.max_lora_rank},
                 {"max_cpu_loras", l.max_cpu_loras},
                 {"lora_dtype", std::string(to_string(l.dtype))},
                 {"fully_sharded_loras", l.fully_sharded},
                 {"adapter_bytes", a.lora.adapter_bytes.count()},
                 {"host_bytes_per_device", a.lora.host_bytes_per_device.count()}};
  }
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const memory::DeviceBudget& d : r.devices) {
    devices.push_back(device_json(d, r, e.block_size, dp_group));
  }
  j["devices"] = devices;
  auto alt_json = [](const std::vector<Alternative>& alts) {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const Alternative& x : alts) {
      arr.push_back({{"gpu", x.gpu_id}, {"tp", x.tp}, {"pp", x.pp}, {"fits", x.fits},
                     {"num_gpu_blocks", x.num_gpu_blocks}, {"max_concurrency", x.max_concurrency},
                     {"why", x.why}});
    }
    return arr;
  };
  nlohmann::ordered_json suggestions = nlohmann::ordered_json::array();
  for (const Suggestion& x : a.suggestions) {
    suggestions.push_back({{"change", x.change}, {"why", x.why}, {"fits", x.fits},
                           {"num_gpu_blocks", x.num_gpu_blocks},
                           {"max_concurrency", x.max_concurrency}});
  }
  j["suggestions"] = suggestions;
  j["fits_with_larger_tp"] = alt_json(a.larger_tp);
  j["fits_on_other_gpus"] = alt_json(a.other_gpus);
  return j;
}

void write_budget_results(const BudgetAnswer& a, const std::filesystem::path& out,
                          const std::string& command_line, const std::string& scenario_text,
                          const nlohmann::ordered_json& settings) {
  io::ResultsWriter w(out);
  nlohmann::ordered_json inputs = budget_json(a);
  inputs.erase("devices");
  if (!settings.is_null()) inputs["settings"] = settings;
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line,
                        .scenario_text = scenario_text,
                        .seed = a.seed,
                        .inputs = inputs.dump(),
                        .calibration_source = a.overheads.source,
                        .created_by = "vramsim budget"});
  write_budget_table(w, a);
  w.finish();
}

void write_budget_table(io::ResultsWriter& w, const BudgetAnswer& a) {
  const memory::BudgetResult& r = a.result;
  // One typed row per device; engine-wide values repeat on every row (SCHEMA.md, /budget).
  std::vector<io::TypedRecord> rows;
  const bool offload = a.engine.cpu_offload > Bytes(0);
  const bool draft = a.engine.draft.has_value();
  const bool dp_group = has_dp_group(a.engine);
  for (const memory::DeviceBudget& d : r.devices) {
    io::TypedRecord& row = rows.emplace_back();
    row.add("device_index", d.device_index);
    if (dp_group) {
      row.add("dp_rank", d.dp_rank)
          .add("num_local_experts", d.num_local_experts)
          .add("first_local_expert", d.first_local_expert)
          .add("expert_weights_bytes", d.expert_weights);
    }
    row
        .add("pp_stage", d.pp_stage)
        .add("tp_rank", d.tp_rank)
        .add("num_params", r.num_params)
        .add("weights_bytes", d.weights)
        .add("activation_peak_bytes", d.activation_peak)
        .add("non_torch_bytes", d.non_torch)
        .add("cuda_graph_bytes", d.cuda_graph)
        .add("kv_cache_bytes", d.kv_cache)
        .add("kv_bytes_per_token", d.kv_bytes_per_token)
        .add("num_gpu_blocks", r.num_gpu_blocks)
        .add("kv_cache_tokens", r.kv_cache_tokens)
        .add("max_concurrency", io::Ratio{r.max_concurrency})
        .add("fits", r.fits)
        .add("total_memory_bytes", d.total)
        .add("usable_memory_bytes", d.usable)
        .add("kv_offload_num_blocks", a.kv_offload.num_blocks)
        .add("kv_offload_host_bytes", a.kv_offload.host_bytes);
    // Columns of settings that are on only, so that other budgets' tables keep their shape.
    if (a.kv_offload.disk_num_blocks > 0) {
      row.add("kv_offload_disk_num_blocks", a.kv_offload.disk_num_blocks)
          .add("kv_offload_disk_bytes", a.kv_offload.disk_bytes);
    }
    if (offload) {
      row.add("weights_offloaded_bytes", d.weights_offloaded)
          .add("host_memory_bytes", d.weights_offloaded);
    }
    if (draft) {
      row.add("draft_weights_bytes", d.draft_weights)
          .add("draft_kv_bytes_per_token", d.draft_kv_bytes_per_token);
    }
    if (a.engine.lora) {
      row.add("lora_weights_bytes", d.lora_weights)
          .add("lora_host_bytes", a.lora.host_bytes_per_device);
    }
  }
  io::TypedRecord::write_rows(w, "/budget", rows);
  w.set_string_attribute("/budget", "model", a.model.name);
  w.set_string_attribute("/budget", "gpu", a.device.id);
  w.set_int_attribute("/budget", "fits", r.fits ? 1 : 0);
  w.set_string_attribute("/budget", "reason", r.reason);
  w.set_string_attribute("/budget", "weights_source", a.weights_source);
}

}  // namespace vramsim::run
