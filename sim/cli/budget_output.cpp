// A budget answer as a table for people; its JSON and HDF5 records are the run layer's
// (sim/run/budget_results.hpp).
#include "sim/cli/budget_report.hpp"

#include "sim/hardware/node_spec.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/run/host_stream_rate.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace vramsim::cli {

namespace {

std::string weights_name(const memory::EngineConfig& e) {
  if (e.weights.quantization == model::QuantMethod::kNone) {
    return std::string(to_string(e.weights.dtype));
  }
  return fmt::format("{} ({:.3g} bits/weight, rest {})", model::to_string(e.weights.quantization),
                     model::nominal_bits_per_weight(e.weights), to_string(e.weights.dtype));
}

}  // namespace

std::string budget_table(const BudgetAnswer& a) {
  const memory::BudgetResult& r = a.result;
  const memory::EngineConfig& e = a.engine;
  const memory::DeviceBudget& d = run::headline_device(r);
  const int num_devices = e.data_parallel_size * e.tp * e.pp;
  const bool dp_group = e.data_parallel_size > 1 || e.enable_expert_parallel;
  const memory::MoeSplit split =
      memory::moe_split(e.tp, e.data_parallel_size, e.enable_expert_parallel);
  std::string out;
  auto line = [&](std::string_view label, Bytes b, std::string_view note = "") {
    const double share = d.usable.count() > 0 ? 100.0 * static_cast<double>(b.count()) /
                                                    static_cast<double>(d.usable.count())
                                              : 0.0;
    out += fmt::format("  {:<34} {:>12} {:>7.1f}%  {}\n", label, format_bytes(b), share, note);
  };
  out += fmt::format("{} on {} x {} ({}), TP={} PP={}{}\n", a.model.name, num_devices,
                     a.device.name, a.device.id, e.tp, e.pp,
                     !dp_group ? std::string()
                     : split.ep_size > 1
                         ? fmt::format(" DP={} EP={}", e.data_parallel_size, split.ep_size)
                         : fmt::format(" DP={}", e.data_parallel_size));
  out += fmt::format("  {:.2f} B parameters ({:.2f} B active); weights {}, KV cache {}\n",
                     static_cast<double>(r.num_params) / 1e9,
                     static_cast<double>(r.num_active_params) / 1e9, weights_name(e),
                     to_string(e.kv_cache_dtype));
  out += fmt::format("  max_model_len {}, max_num_seqs {}, max_num_batched_tokens {}, "
                     "block_size {}; vLLM {}\n",
                     e.max_model_len, e.max_num_seqs, e.max_num_batched_tokens, e.block_size,
                     a.vllm_version);
  if (a.topology_node) {
    const hardware::NodeSpec& n = *a.topology_node;
    out += fmt::format("  node {} (--topology): {} GPUs on {}, NCCL NVLS buffers {}; {}\n",
                       n.id, n.num_gpus, hardware::to_string(n.fabric.kind),
                       a.nvls ? "yes" : "no", n.source_file);
  }
  out += "\n";
  if (num_devices > 1) {
    out += fmt::format("Per device (the tightest: device {}, PP stage {}, {} layers):\n",
                       d.device_index, d.pp_stage, d.num_layers);
  }
  out += fmt::format("  {:<34} {:>12}\n", "device memory (runtime total)", format_bytes(d.total));
  out += fmt::format("  {:<34} {:>12} {:>7.1f}%\n",
                     fmt::format("x gpu_memory_utilization {:.2f}{}", e.gpu_memory_utilization,
                                 e.kv_cache_memory ? " (unused)" : ""),
                     format_bytes(d.usable), 100.0);
  line("- model weights", d.weights, "parameters + rotary cache");
  if (dp_group && d.num_local_experts > 0) {
    line("  of which routed experts", d.expert_weights,
         split.ep_size > 1 ? fmt::format("experts {}-{} of {} (EP rank {})",
                                         d.first_local_expert,
                                         d.first_local_expert + d.num_local_experts - 1,
                                         a.model.moe->num_experts,
                                         d.dp_rank * e.tp + d.tp_rank)
                           : fmt::format("all {}, each split {} ways", d.num_local_experts,
                                         split.moe_tp));
  }
  if (d.weights_offloaded > Bytes(0)) {
    line("+ weights offloaded to host memory", d.weights_offloaded,
         fmt::format("--cpu-offload-gb: streamed over the host link every step"));
  }
  if (a.speculative && a.speculative->memory) {
    line("- draft weights (speculative)", d.draft_weights, a.speculative->memory->label);
  }
  if (e.lora) {
    line("- LoRA adapter slots", d.lora_weights,
         fmt::format("{} x rank {} {}{}", e.lora->max_loras, e.lora->max_lora_rank,
                     to_string(e.lora->dtype), e.lora->fully_sharded ? ", fully sharded" : ""));
  }
  line("- activation peak (profile run)", d.activation_peak,
       fmt::format("{} tokens, sampler over {} requests", e.max_num_batched_tokens,
                   std::min(e.max_num_seqs, e.max_num_batched_tokens)));
  line("- non-torch memory", d.non_torch,
       e.tp > 1 && a.overheads.non_torch_comm <= Bytes(0)
           ? "library workspaces (no GPU P2P: no communicator buffers in device memory)"
       : e.tp > 1 ? fmt::format("workspaces + NCCL{}/custom all-reduce buffers",
                                a.nvls ? " (with NVLS)" : " (no NVLS)")
       : num_devices > 1 ? "workspaces + NCCL/custom all-reduce buffers"
                         : "library workspaces");
  if (e.subtract_cuda_graph) line("- CUDA graphs (estimate)", d.cuda_graph, "vLLM >= 0.21");
  line(e.kv_cache_memory ? "KV cache (kv_cache_memory_bytes)" : "= KV cache", d.kv_cache,
       fmt::format("{} blocks x {} tokens x {} layers/group", r.num_gpu_blocks, e.block_size,
                   d.layers_per_group));
  if (d.kv_available > d.kv_cache) {
    line("  (left over, under one block)", d.kv_available - d.kv_cache);
  }
  if (e.kv_cache_memory) {
    // No profile: the cache is what was given, and nothing in vLLM checks the device holds it.
    const Bytes held = (d.weights - d.weights_offloaded) + d.draft_weights + d.lora_weights +
                       d.activation_peak + d.non_torch + d.cuda_context + d.cuda_graph + d.kv_cache;
    out += fmt::format("\n  CUDA context {}, CUDA graphs {} (estimate); all held: {} of the "
                       "device's {}{}\n",
                       format_bytes(d.cuda_context), format_bytes(d.cuda_graph),
                       format_bytes(held), format_bytes(d.total),
                       d.headroom_shortfall > Bytes(0)
                           ? fmt::format(", {} over: out of memory", format_bytes(d.headroom_shortfall))
                           : fmt::format(", {} spare", format_bytes(d.total - held)));
  } else {
  out += fmt::format("\n  outside the budget: CUDA context {}, CUDA graphs {} (estimate){}\n",
                     format_bytes(d.cuda_context),
                     e.subtract_cuda_graph ? "subtracted above" : format_bytes(d.cuda_graph),
                     d.headroom_shortfall > Bytes(0)
                         ? fmt::format("; they exceed the {} left by gpu_memory_utilization "
                                       "by {}: risk of out-of-memory",
                                       format_bytes(d.total - d.usable),
                                       format_bytes(d.headroom_shortfall))
                         : fmt::format(", within the {} left by gpu_memory_utilization",
                                       format_bytes(d.total - d.usable)));
  }
  out += fmt::format("\nKV cache: {} blocks = {} tokens at {}/token per device{}\n",
                     r.num_gpu_blocks, r.kv_cache_tokens, format_bytes(d.kv_bytes_per_token),
                     d.draft_kv_bytes_per_token > Bytes(0)
                         ? fmt::format(" ({} of it the draft's layers)",
                                       format_bytes(d.draft_kv_bytes_per_token))
                         : "");
  if (d.weights_offloaded > Bytes(0)) {
    out += fmt::format("Host memory per device: {} of offloaded weights ({} for all {} "
                       "devices)\n",
                       format_bytes(d.weights_offloaded),
                       format_bytes(num_devices * d.weights_offloaded), num_devices);
    const run::HostStreamRate stream =
        run::host_copy_rate(a, run::HostCopyDirection::kHostToDevice);
    out += fmt::format("Offloaded weights cross to the device every step at {:.1f} GB/s: {}\n",
                       stream.rate.bytes_per_second() / 1e9, stream.source);
  }
  if (e.lora) {
    out += fmt::format("LoRA: {} per device in adapter slots; host memory per device {} for the "
                       "CPU cache of {} adapter(s) of {} each (rank {}, an upper bound)\n",
                       format_bytes(d.lora_weights), format_bytes(a.lora.host_bytes_per_device),
                       e.lora->max_cpu_loras, format_bytes(a.lora.adapter_bytes),
                       e.lora->max_lora_rank);
  }
  if (a.speculative) {
    const serving::SpeculativeConfig& sc = a.speculative->config;
    out += fmt::format("Speculative decoding: {}, k = {}, {:.3f} expected tokens per step\n",
                       serving::to_string(sc.method), sc.num_speculative_tokens,
                       sc.expected_tokens_per_step());
  }
  if (dp_group && r.devices.size() > 1) {
    // Each DP rank is an engine with its own KV cache, sized from its own devices.
    out += fmt::format("Per device ({} DP ranks, each with its own KV cache of the blocks "
                       "above):\n",
                       e.data_parallel_size);
    for (const memory::DeviceBudget& x : r.devices) {
      const std::string experts =
          x.num_local_experts == 0 ? std::string("dense")
          : split.ep_size > 1
              ? fmt::format("experts {}-{}", x.first_local_expert,
                            x.first_local_expert + x.num_local_experts - 1)
              : fmt::format("all {} experts / {}", x.num_local_experts, split.moe_tp);
      out += fmt::format("  device {:<3} DP rank {:<3} TP rank {:<3} {:<20} weights {:>10}, "
                         "KV cache {:>10} ({} blocks fit)\n",
                         x.device_index, x.dp_rank, x.tp_rank, experts, format_bytes(x.weights),
                         format_bytes(x.kv_cache), x.num_gpu_blocks);
    }
  }
  out += fmt::format("Maximum concurrency for {} tokens per request: {:.2f}x\n", e.max_model_len,
                     r.max_concurrency);
  if (a.kv_offload.num_blocks > 0) {
    out += fmt::format("KV offload tier (host memory, per replica): {} blocks = {} tokens, {} "
                       "pinned\n",
                       a.kv_offload.num_blocks, a.kv_offload.num_blocks * e.block_size,
                       format_bytes(a.kv_offload.host_bytes));
    if (a.kv_offload.backend == serving::KvOffloadBackend::kLmcache) {
      out += fmt::format("  LMCache: {} worker(s) x {} of pinned host memory each "
                         "(max_local_cpu_size), chunks of {} tokens ({} blocks): {} chunks\n",
                         a.kv_offload.num_workers, format_bytes(a.kv_offload.host_bytes_per_worker),
                         a.kv_offload.chunk_size, a.kv_offload.chunk_blocks,
                         a.kv_offload.num_blocks / a.kv_offload.chunk_blocks);
    }
  }
  if (const run::KvOffloadHost& h = a.kv_offload_host; !h.node.empty()) {
    const std::string from = h.from_topology ? " (--topology)" : " (the GPU's default)";
    if (!h.host_memory) {
      out += fmt::format("  host memory: node sheet {}{} records none (host_memory); not "
                         "checked\n",
                         h.node, from);
    } else if (*h.fits) {
      out += fmt::format("  host memory: {} engine(s) pin {} of the {} host_memory of node sheet "
                         "{}{}\n",
                         h.num_engines, format_bytes(h.host_bytes_per_node),
                         format_bytes(*h.host_memory), h.node, from);
    } else {
      out += fmt::format("  WARNING: engine.kv_offloading_size (--kv-offloading-size): {} "
                         "engine(s) pin {} of host memory, more than the {} host_memory of node "
                         "sheet {}{} ({}); vLLM pins the tier at start-up, so it cannot start "
                         "on that server: lower --kv-offloading-size or use a server with more "
                         "memory{}\n",
                         h.num_engines, format_bytes(h.host_bytes_per_node),
                         format_bytes(*h.host_memory), h.node, from, h.node_file,
                         h.from_topology ? "" : ", or give --topology your server's node sheet");
    }
  }
  if (a.kv_offload.disk_num_blocks > 0) {
    out += fmt::format("KV disk tier (local disk, per replica): {} blocks = {} tokens, {} of "
                       "disk space\n",
                       a.kv_offload.disk_num_blocks, a.kv_offload.disk_num_blocks * e.block_size,
                       format_bytes(a.kv_offload.disk_bytes));
  }
  const run::Margin& m = a.margin;
  if (r.fits) {
    out += fmt::format("Fits: yes, {} of KV memory beyond one {}-token request ({:.1f}% of "
                       "usable memory)\n",
                       format_bytes(m.bytes), e.max_model_len, 100.0 * m.share_of_usable);
  } else {
    out += fmt::format("Fits: NO. {} ({:.2f}% of usable memory)\n", r.reason,
                       -100.0 * m.share_of_usable);
  }
  if (m.knife_edge) {
    out += fmt::format("  On a knife edge: within {:.0f}% of usable memory of the answer "
                       "flipping. A vLLM version, driver or allocator difference can decide it: "
                       "measure the peak at the longest input and the highest concurrency before "
                       "relying on it.\n",
                       100.0 * run::kKnifeEdgeShare);
  }
  if (!r.fits) {
    // The settings that make it fit alone, cheapest first; the others are named once.
    std::string tried;
    bool any = false;
    for (const run::Suggestion& x : a.suggestions) {
      if (!x.fits) {
        tried += (tried.empty() ? "" : ", ") + x.change;
        continue;
      }
      if (!any) out += "  Cheapest first, on the same GPUs:\n";
      any = true;
      out += fmt::format("    {:<32} fits, {:.2f}x concurrency: {}\n", x.change,
                         x.max_concurrency, x.why);
    }
    if (!tried.empty()) out += fmt::format("  Alone, these do not make it fit: {}.\n", tried);
    if (r.max_model_len_that_fits > 0 && r.max_model_len_that_fits < e.max_model_len) {
      out += fmt::format("  --max-model-len {} would fit one request.\n",
                         r.max_model_len_that_fits);
    }
    for (const Alternative& x : a.larger_tp) {
      out += fmt::format("  --tp {} fits on {}: {} blocks, {:.2f}x concurrency.\n", x.tp,
                         x.gpu_id, x.num_gpu_blocks, x.max_concurrency);
    }
    if (!a.other_gpus.empty()) {
      std::string gpus;
      for (const Alternative& x : a.other_gpus) {
        gpus += fmt::format("{}{} ({:.2f}x{})", gpus.empty() ? "" : ", ", x.gpu_id,
                            x.max_concurrency, x.why.empty() ? "" : ", " + x.why);
      }
      out += fmt::format("  At TP={} it fits on: {}.\n", e.tp, gpus);
    }
  }
  out += fmt::format("Validated: {}\n", a.kv_error_band);
  out += fmt::format("Weights from: {}\n", a.weights_source);
  for (const std::string& n : a.notes) out += fmt::format("note: {}\n", n);
  return out;
}

}  // namespace vramsim::cli
