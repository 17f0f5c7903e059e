// A training simulation as tables for people; its JSON and HDF5 records are the run layer's
// (sim/run/train_results.hpp).
#include "sim/cli/train_report.hpp"

#include "sim/core/check.hpp"
#include "sim/training/lora.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace vramsim::cli {

namespace {

using training::DeviceResult;
using training::MemoryCategory;

// The binding device (run::binding_device): the headline row.
const DeviceResult& binding(const training::TrainingResult& r) {
  const DeviceResult* d = run::binding_device(r);
  VRAMSIM_CHECK(d != nullptr, "a training result without devices has no headline row");
  return *d;
}

}  // namespace

std::string train_table(const training::TrainingSetup& s, const training::TrainingResult& r) {
  const training::TrainingPlan& p = s.plan;
  std::string out =
      fmt::format("{} on {} x {} ({} per node): TP={} PP={}{}{} DP={}, {} ({}), {}, {}, "
                  "checkpointing {}\n",
                  s.model.name, p.num_gpus, s.device.id, p.gpus_per_node, p.tp, p.pp,
                  p.cp > 1 ? fmt::format(" CP={}", p.cp) : "",
                  p.ep > 1 ? fmt::format(" EP={}", p.ep) : "", p.dp(), to_string(p.strategy),
                  to_string(p.framework_in_use()), to_string(p.precision), to_string(p.optimizer),
                  to_string(p.checkpointing));
  out += fmt::format("  micro-batch {} x {} micro-batches x DP {} = {} sequences of {} tokens",
                     p.micro_batch, r.num_micro_batches, p.dp(), p.effective_global_batch(),
                     p.seq_len);
  if (p.pp > 1) out += fmt::format(", schedule {}", to_string(p.schedule));
  if (p.cp > 1) {
    out += fmt::format("\n  context parallel CP={} ({}): {} tokens of each sequence per rank",
                       p.cp, to_string(p.cp_comm), p.seq_len / p.cp);
  }
  if (p.samples) {
    const double data = p.data_tokens_per_sequence();
    out += fmt::format("\n  samples: {} lengths, mean {:.0f} tokens after truncation to {}; ",
                       p.samples->num_samples(), p.samples->mean(p.seq_len), p.seq_len);
    if (p.pads_samples()) {
      training::TrainingPlan mean = p;
      mean.shape_mean_batch = true;
      out += fmt::format("padded: micro-batches of {} padded to {} tokens on average (the step "
                         "time), {} at the longest (the memory), {:.1f}% of computed tokens "
                         "padding",
                         p.micro_batch, mean.shaped_seq_len(), p.shaped_seq_len(),
                         100.0 * (1.0 - data / static_cast<double>(mean.shaped_seq_len())));
    } else {
      out += fmt::format("{} packing: {:.1f} samples per sequence, no padding{}",
                         to_string(p.packing), static_cast<double>(p.seq_len) / p.samples->mean(p.seq_len),
                         p.packing == training::Packing::kDocuments
                             ? ", attention within each sample"
                             : ", attention across samples");
    }
  }
  if (p.ep > 1) {
    out += fmt::format("\n  expert parallel EP={}: {} of {} routed experts per rank, their "
                       "gradients reduced over an expert data-parallel group of {}",
                       p.ep, s.model.moe ? s.model.moe->num_experts / p.ep : 0,
                       s.model.moe ? s.model.moe->num_experts : 0, p.expert_grad_group());
  }
  if (s.model.moe && (p.expert_load_imbalance != 1.0 || !p.expert_loads.empty() ||
                      p.moe_capacity_factor > 0.0)) {
    out += fmt::format("\n  MoE routing{}: busiest expert {:.2f}x the mean, capacity {}{}: the "
                       "busiest rank's experts take {:.2f}x their balanced tokens",
                       p.expert_loads.empty() ? "" : " (measured per expert)",
                       p.busiest_expert_load(),
                       p.moe_capacity_factor > 0.0 ? fmt::format("{:.2f}x", p.moe_capacity_factor)
                                                   : std::string("dropless"),
                       p.moe_pad_to_capacity ? " (padded)" : "",
                       p.moe_routed_load(*s.model.moe));
    if (p.moe_dropped_fraction() > 0.0) {
      out += fmt::format(", dropping {:.1f}% of {}", 100.0 * p.moe_dropped_fraction(),
                         p.expert_loads.empty() ? "the busiest expert's tokens"
                                                : "all routed tokens");
    }
  }
  if (p.lora.enabled()) {
    const training::LoraParamCount c = training::count_lora_params(s.model, p);
    out += fmt::format("\n  LoRA r={} alpha={} on {}{}: trainable params: {} || all params: {} "
                       "|| trainable%: {:.4f}",
                       p.lora.rank, p.lora.alpha,
                       p.lora.all_linear ? std::string("all-linear")
                                         : fmt::format("{}", fmt::join(p.lora.targets, ",")),
                       p.base_quant == training::BaseQuant::kNone
                           ? std::string()
                           : fmt::format(", base {}{}", to_string(p.base_quant),
                                         p.double_quant && p.base_quant != training::BaseQuant::kInt8
                                             ? " (double quant)"
                                             : ""),
                       c.trainable, c.all, c.trainable_percent());
    const DeviceResult& hd = binding(r);
    const auto st = static_cast<std::size_t>(hd.stage);
    if (st < r.stages.size()) {
      out += fmt::format("\n  frozen base on the fullest device: {}",
                         format_bytes(r.stages[st].frozen_weights));
    }
  }
  out += fmt::format("\n\nMemory per device at its allocated peak (one row per pipeline stage; "
                     "loss {}):\n",
                     to_string(p.loss));
  out += fmt::format("  {:<6}", "stage");
  for (int k = 0; k < training::kNumMemoryCategories; ++k) {
    out += fmt::format(" {:>12}", to_string(static_cast<MemoryCategory>(k)).substr(0, 12));
  }
  out += fmt::format(" {:>12} {:>12} {:>12}  {}\n", "allocated", "reserved", "+ctx/nccl", "fits");
  for (const DeviceResult& d : r.devices) {
    out += fmt::format("  {:<6}", d.stage);
    for (const Bytes b : d.at_peak) out += fmt::format(" {:>12}", format_bytes(b));
    out += fmt::format(" {:>12} {:>12} {:>12}  {}\n", format_bytes(d.peak_allocated),
                       format_bytes(d.peak_reserved), format_bytes(d.non_allocator),
                       d.fits ? "yes" : fmt::format("NO, short by {}", format_bytes(d.shortfall)));
  }
  const DeviceResult& h = binding(r);
  out += fmt::format("  device memory {}; the fullest device needs {} (activation peak {})\n",
                     format_bytes(h.capacity), format_bytes(h.peak_reserved + h.non_allocator),
                     format_bytes(h.activation_peak));
  if ((p.offload_optimizer || p.paged_optimizer) &&
      static_cast<std::size_t>(h.stage) < r.stages.size()) {
    const training::StagePlan& st = r.stages[static_cast<std::size_t>(h.stage)];
    out += fmt::format("  host memory for the model state: {} per GPU, {} per node ({}{})\n",
                       format_bytes(st.host_state), format_bytes(run::host_bytes_per_node(s, r)),
                       p.paged_optimizer      ? "paged optimizer states"
                       : p.optimizer_on_nvme() ? "swap buffers of the optimizer states on NVMe"
                                               : "offloaded master weights, optimizer states, "
                                                 "gradient partition",
                       p.offload_params == training::OffloadParams::kCpu   ? ", parameter shard"
                       : p.offload_params == training::OffloadParams::kNvme ? ", parameter swap buffers"
                                                                            : "");
    const bool params_on_nvme = p.offload_params == training::OffloadParams::kNvme;
    if (params_on_nvme || p.optimizer_on_nvme()) {
      out += fmt::format("  NVMe for {}: {} per GPU, {:.3f} s of reads and writes each step at "
                         "{} GB/s\n",
                         params_on_nvme && p.optimizer_on_nvme()
                             ? "the parameter shard and the optimizer states"
                         : params_on_nvme ? "the parameter shard"
                                          : "the optimizer states and fp32 gradients",
                         format_bytes(st.nvme_state), st.offload_nvme.seconds(),
                         p.nvme_gb_per_s);
    }
    if (p.offload_optimizer) {
      const std::string bound = run::offload_bound_by(st);
      out += fmt::format("  offloaded step: PCIe {:.3f} s, CPU Adam {:.3f} s{}: {} binds{}\n",
                         st.offload_pcie.seconds(), st.offload_cpu.seconds(),
                         params_on_nvme || p.optimizer_on_nvme()
                             ? fmt::format(", NVMe {:.3f} s", st.offload_nvme.seconds())
                             : "",
                         bound == "cpu_adam" ? "CPU Adam" : bound == "nvme" ? "NVMe" : "PCIe",
                         p.offload_params != training::OffloadParams::kNone
                             ? " (parameter shards are fetched per block, gradients sent down "
                               "per block, on the communication stream)"
                             : "");
    }
  }
  out += "\nStep time per stage:\n";
  const bool cp_ep = p.cp > 1 || p.ep > 1;
  out += fmt::format("  {:<6} {:>10} {:>10} {:>10}", "stage", "step", "compute", "tp comm");
  if (cp_ep) out += fmt::format(" {:>10} {:>10}", "cp comm", "ep comm");
  out += fmt::format(" {:>14} {:>10}\n", "exposed comm", "bubble");
  for (const DeviceResult& d : r.devices) {
    out += fmt::format("  {:<6} {:>9.3f}s {:>9.3f}s {:>9.3f}s", d.stage, d.step_time.seconds(),
                       d.compute.seconds(), d.tp_comm.seconds());
    if (cp_ep) out += fmt::format(" {:>9.3f}s {:>9.3f}s", d.cp_comm.seconds(), d.ep_comm.seconds());
    out += fmt::format(" {:>13.3f}s {:>9.3f}s\n", d.exposed_comm.seconds(), d.bubble.seconds());
  }
  out += fmt::format("\nStep time {:.3f} s, {:.0f} tokens/s, MFU {:.1f}%\n", r.step_time.seconds(),
                     r.tokens_per_s, 100.0 * r.mfu);
  out += fmt::format("Compute costs: {}\n", run::cost_summary(s, r));
  out += r.fits ? "Fits: yes\n" : "Fits: NO\n";
  return out;
}

std::string max_micro_batch_table(const training::TrainingSetup& s,
                                  const std::vector<run::MaxMicroBatch>& rows) {
  std::string out = fmt::format("{} on {} x {}, {}: largest micro-batch that fits\n", s.model.name,
                                s.plan.num_gpus, s.device.id, to_string(s.plan.strategy));
  out += fmt::format("  {:<14} {:>11} {:>12} {:>10} {:>12} {:>7}\n", "checkpointing", "micro-batch",
                     "reserved", "step", "tokens/s", "MFU");
  for (const run::MaxMicroBatch& row : rows) {
    if (row.micro_batch == 0) {
      out += fmt::format("  {:<14} {:>11}\n", row.checkpointing, "none fits");
      continue;
    }
    const DeviceResult& d = binding(row.result);
    out +=
        fmt::format("  {:<14} {:>11} {:>12} {:>9.3f}s {:>12.0f} {:>6.1f}%\n", row.checkpointing,
                    row.micro_batch, format_bytes(d.peak_reserved), row.result.step_time.seconds(),
                    row.result.tokens_per_s, 100.0 * row.result.mfu);
  }
  return out;
}

std::string train_fixes_table(const std::vector<run::TrainFix>& fixes) {
  std::string out;
  std::string others;
  for (const run::TrainFix& x : fixes) {
    if (!x.fits) {
      others += (others.empty() ? "" : ", ") + x.change;
      continue;
    }
    if (out.empty()) out = "\nWhat makes it fit, at the same global batch (fastest first):\n";
    out += fmt::format("  {}\n      step {:.3f} s, {:.0f} tokens/s, peak {} of {}: {}\n",
                       x.change, x.step_time.seconds(), x.tokens_per_s, format_bytes(x.peak),
                       format_bytes(x.capacity), x.why);
  }
  if (!others.empty()) out += fmt::format("Alone, these do not make it fit: {}.\n", others);
  return out;
}

}  // namespace vramsim::cli
