#include "sim/training/training_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

#include "sim/core/check.hpp"

namespace vramsim::training {

bool Checkpointing::layer_recomputed(std::int64_t layer) const {
  switch (kind) {
    case CheckpointKind::kNone:
    case CheckpointKind::kSelective:
    case CheckpointKind::kSelectiveOp:
      return false;
    case CheckpointKind::kFull:
      return true;
    case CheckpointKind::kEveryK:
      return (layer + 1) % every == 0;
  }
  VRAMSIM_UNREACHABLE("invalid CheckpointKind");
}

std::string_view to_string(Strategy s) { return name_of(kStrategies, s); }
std::string_view to_string(Precision p) { return name_of(kPrecisions, p); }
std::string_view to_string(Optimizer o) { return name_of(kOptimizers, o); }
std::string_view to_string(PipelineSchedule s) { return name_of(kPipelineSchedules, s); }
std::string_view to_string(Attention a) { return name_of(kAttentions, a); }
std::string_view to_string(Kernels k) { return name_of(kKernelsTable, k); }
std::string_view to_string(Framework f) { return name_of(kFrameworks, f); }
std::string_view to_string(OptimizerImpl i) { return name_of(kOptimizerImpls, i); }
std::string_view to_string(BaseQuant q) { return name_of(kBaseQuants, q); }
std::optional<BaseQuant> base_quant_from_string(std::string_view s) {
  return parse_name(kBaseQuants, s);
}
std::string_view base_quant_names() { return names_list<kBaseQuants>(); }

std::int64_t TrainingPlan::shaped_seq_len() const {
  if (!pads_samples()) return seq_len;
  const std::int64_t padded =
      shape_mean_batch
          ? std::max<std::int64_t>(
                1, std::llround(samples->expected_longest(micro_batch, seq_len)))
          : samples->longest(seq_len);
  const std::int64_t multiple = cp > 1 ? (cp_comm == CpComm::kRing ? 2 * cp : cp) : 1;
  return std::min(seq_len, ceil_div(padded, multiple) * multiple);
}

double TrainingPlan::data_tokens_per_sequence() const {
  if (!samples || packing != Packing::kPadded) return static_cast<double>(seq_len);
  return samples->mean(seq_len);
}

double TrainingPlan::attention_pairs_per_sequence(std::int64_t window) const {
  if (!samples || packing == Packing::kConcat ||
      (packing == Packing::kPadded && attention == Attention::kEager)) {
    return attended_pairs(shaped_seq_len(), window);
  }
  if (packing == Packing::kPadded) return samples->mean_pairs(seq_len, window);
  // documents: seq_len / E[l] samples per sequence, each attending within itself
  return static_cast<double>(seq_len) / samples->mean(seq_len) * samples->mean_pairs(seq_len, window);
}

double TrainingPlan::model_attended_tokens_per_sequence(std::int64_t window) const {
  const auto whole = [&](std::int64_t s) {
    return static_cast<double>(s) * static_cast<double>(window > 0 ? std::min(window, s) : s);
  };
  if (!samples || packing == Packing::kConcat) return whole(seq_len);
  const double per_sample = samples->mean_attended_tokens(seq_len, window);
  if (packing == Packing::kPadded) return per_sample;
  return static_cast<double>(seq_len) / samples->mean(seq_len) * per_sample;
}

bool Lora::targets_module(std::string_view name) const {
  if (all_linear) return true;
  for (const std::string& t : targets) {
    // PEFT matches a target against the end of the module's dotted name.
    if (name == t) return true;
    if (name.size() > t.size() && name.ends_with(t) && name[name.size() - t.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

std::string to_string(const Checkpointing& c) {
  if (c.kind == CheckpointKind::kEveryK) return fmt::format("every:{}", c.every);
  return std::string(name_of(kCheckpointKinds, c.kind));
}

std::string_view to_string(CpComm c) { return name_of(kCpComms, c); }
std::string_view to_string(OffloadParams o) { return name_of(kOffloadParamsTable, o); }
std::optional<OffloadParams> offload_params_from_string(std::string_view s) {
  return parse_name(kOffloadParamsTable, s);
}
std::string_view offload_params_names() { return names_list<kOffloadParamsTable>(); }
std::string_view to_string(OffloadDevice d) { return name_of(kOffloadDevices, d); }
std::optional<OffloadDevice> offload_device_from_string(std::string_view s) {
  return parse_name(kOffloadDevices, s);
}
std::string_view offload_device_names() { return names_list<kOffloadDevices>(); }
std::optional<CpComm> cp_comm_from_string(std::string_view s) { return parse_name(kCpComms, s); }
std::string_view cp_comm_names() { return names_list<kCpComms>(); }

std::string to_string(const Loss& l) {
  if (l.kind == LossKind::kChunked) return fmt::format("chunked:{}", l.chunks);
  return std::string(name_of(kLossKinds, l.kind));
}

std::optional<Strategy> strategy_from_string(std::string_view s) {
  return parse_name(kStrategies, s);
}
std::optional<Precision> precision_from_string(std::string_view s) {
  return parse_name(kPrecisions, s);
}
std::optional<Optimizer> optimizer_from_string(std::string_view s) {
  return parse_name(kOptimizers, s);
}
std::optional<PipelineSchedule> pipeline_schedule_from_string(std::string_view s) {
  return parse_name(kPipelineSchedules, s);
}
std::optional<Attention> attention_from_string(std::string_view s) {
  return parse_name(kAttentions, s);
}
std::optional<Kernels> kernels_from_string(std::string_view s) {
  return parse_name(kKernelsTable, s);
}
std::optional<Framework> framework_from_string(std::string_view s) {
  return parse_name(kFrameworks, s);
}
std::optional<OptimizerImpl> optimizer_impl_from_string(std::string_view s) {
  return parse_name(kOptimizerImpls, s);
}

std::optional<Checkpointing> checkpointing_from_string(std::string_view s) {
  constexpr std::string_view kPrefix = "every:";
  if (s.substr(0, kPrefix.size()) != kPrefix) {
    const std::optional<CheckpointKind> kind = parse_name(kCheckpointKinds, s);
    if (!kind || *kind == CheckpointKind::kEveryK) return std::nullopt;  // "every:K" itself
    return Checkpointing{*kind, 1};
  }
  const std::string_view digits = s.substr(kPrefix.size());
  int k = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  if (ec != std::errc() || end != digits.data() + digits.size() || k < 1) return std::nullopt;
  return Checkpointing{CheckpointKind::kEveryK, k};
}

std::optional<Loss> loss_from_string(std::string_view s) {
  constexpr std::string_view kPrefix = "chunked:";
  if (s.substr(0, kPrefix.size()) != kPrefix) {
    const std::optional<LossKind> kind = parse_name(kLossKinds, s);
    if (!kind || *kind == LossKind::kChunked) return std::nullopt;  // "chunked:N" itself
    return Loss{*kind, 1};
  }
  const std::string_view digits = s.substr(kPrefix.size());
  int n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size() || n < 1 || n > kMaxLossChunks) {
    return std::nullopt;
  }
  return Loss{LossKind::kChunked, n};
}

std::string_view strategy_names() { return names_list<kStrategies>(); }
std::string_view precision_names() { return names_list<kPrecisions>(); }
std::string_view optimizer_names() { return names_list<kOptimizers>(); }
std::string_view pipeline_schedule_names() { return names_list<kPipelineSchedules>(); }
std::string_view attention_names() { return names_list<kAttentions>(); }
std::string_view kernels_names() { return names_list<kKernelsTable>(); }
std::string_view framework_names() { return names_list<kFrameworks>(); }
std::string_view optimizer_impl_names() { return names_list<kOptimizerImpls>(); }
std::string_view checkpointing_names() { return names_list<kCheckpointKinds>(); }
std::string_view loss_names() { return names_list<kLossKinds>(); }

std::int64_t compute_element_bytes(Precision p) {
  switch (p) {
    case Precision::kBf16Mixed:
    case Precision::kFp16Mixed:
    case Precision::kBf16:
    case Precision::kBf16Amp:
      return 2;
    case Precision::kFp32:
      return 4;
  }
  VRAMSIM_UNREACHABLE("invalid Precision");
}

std::int64_t param_element_bytes(Precision p) {
  return p == Precision::kBf16Amp ? 4 : compute_element_bytes(p);
}

std::int64_t TrainingPlan::num_micro_batches() const {
  const std::int64_t per_step = micro_batch * dp();
  if (global_batch == 0 || per_step <= 0) return 1;
  return global_batch / per_step;
}

std::int64_t TrainingPlan::effective_global_batch() const {
  return micro_batch * dp() * num_micro_batches();
}

int TrainingPlan::dp_ranks_per_node() const {
  return std::clamp(gpus_per_node / tp, 1, grad_group());
}

int TrainingPlan::shard_degree() const {
  switch (strategy) {
    case Strategy::kDdp:
    case Strategy::kFsdpNoShard:
      return 1;
    case Strategy::kZero1:
    case Strategy::kZero2:
    case Strategy::kZero3:
    case Strategy::kFsdpFull:
    case Strategy::kFsdpGradOp:
      return grad_group();
    case Strategy::kHsdp:
      return dp_ranks_per_node();
  }
  VRAMSIM_UNREACHABLE("invalid Strategy");
}

bool framework_runs(Framework framework, Strategy strategy) {
  const bool zero = strategy == Strategy::kZero1 || strategy == Strategy::kZero2 ||
                    strategy == Strategy::kZero3;
  switch (framework) {
    case Framework::kPytorch:
      return !zero;
    case Framework::kDeepspeed:
      return zero || strategy == Strategy::kDdp;
    case Framework::kMegatron:
      return strategy == Strategy::kDdp || strategy == Strategy::kZero1;
  }
  VRAMSIM_UNREACHABLE("invalid Framework");
}

Framework TrainingPlan::framework_in_use() const {
  if (framework) return *framework;
  const bool megatron_kernels = kernels == Kernels::kMegatron;
  switch (strategy) {
    case Strategy::kDdp:
      return megatron_kernels ? Framework::kMegatron : Framework::kPytorch;
    case Strategy::kZero1:
      return megatron_kernels ? Framework::kMegatron : Framework::kDeepspeed;
    case Strategy::kZero2:
    case Strategy::kZero3:
      return Framework::kDeepspeed;
    case Strategy::kFsdpFull:
    case Strategy::kFsdpGradOp:
    case Strategy::kFsdpNoShard:
    case Strategy::kHsdp:
      return Framework::kPytorch;
  }
  VRAMSIM_UNREACHABLE("invalid Strategy");
}

std::int64_t TrainingPlan::grad_element_bytes() const {
  if (framework_in_use() == Framework::kMegatron && precision == Precision::kBf16Mixed) return 4;
  return param_element_bytes(precision);
}

bool TrainingPlan::deepspeed_zero() const {
  const bool zero = strategy == Strategy::kZero1 || strategy == Strategy::kZero2 ||
                    strategy == Strategy::kZero3;
  return zero && framework_in_use() == Framework::kDeepspeed;
}

namespace {

// Each expert's tokens over the mean (sum E); `loads` non-empty with a positive sum (validated).
std::vector<double> relative_loads(const std::vector<double>& loads) {
  double sum = 0.0;
  for (const double x : loads) sum += x;
  std::vector<double> out(loads.size());
  const double n = static_cast<double>(loads.size());
  for (std::size_t i = 0; i < loads.size(); ++i) out[i] = loads[i] * n / sum;
  return out;
}

}  // namespace

double TrainingPlan::busiest_expert_load() const {
  if (expert_loads.empty()) return expert_load_imbalance;
  const std::vector<double> x = relative_loads(expert_loads);
  return *std::max_element(x.begin(), x.end());
}

double TrainingPlan::moe_routed_load(const model::MoeSpec& moe) const {
  if (moe_pad_to_capacity && moe_capacity_factor > 0.0) return moe_capacity_factor;
  const double k = static_cast<double>(moe.num_experts_per_tok);
  const double local = static_cast<double>(moe.num_experts) / ep;
  const double most = std::min(k, local) / (k * local / static_cast<double>(moe.num_experts));
  if (!expert_loads.empty()) {
    // The busiest rank's experts (contiguous, num_experts / ep of them), each capped at the
    // capacity: their mean relative load.
    const std::vector<double> x = relative_loads(expert_loads);
    const std::size_t per_rank = x.size() / static_cast<std::size_t>(ep);
    double busiest = 0.0;
    for (std::size_t r = 0; r + per_rank <= x.size() && per_rank > 0; r += per_rank) {
      double sum = 0.0;
      for (std::size_t i = r; i < r + per_rank; ++i) {
        sum += moe_capacity_factor > 0.0 ? std::min(x[i], moe_capacity_factor) : x[i];
      }
      busiest = std::max(busiest, sum / static_cast<double>(per_rank));
    }
    return std::min(busiest, most);
  }
  double load = std::min(expert_load_imbalance, most);
  if (moe_capacity_factor > 0.0) load = std::min(load, moe_capacity_factor);
  return load;
}

double TrainingPlan::moe_dropped_fraction() const {
  if (moe_capacity_factor <= 0.0) return 0.0;
  if (!expert_loads.empty()) {
    const std::vector<double> x = relative_loads(expert_loads);
    double dropped = 0.0;
    for (const double v : x) dropped += std::max(0.0, v - moe_capacity_factor);
    return dropped / static_cast<double>(x.size());
  }
  if (expert_load_imbalance <= moe_capacity_factor) return 0.0;
  return (expert_load_imbalance - moe_capacity_factor) / expert_load_imbalance;
}

int TrainingPlan::expert_shard_degree() const {
  // The expert group's ranks sit ep * tp apart; HSDP shards over those inside one node.
  if (strategy == Strategy::kHsdp) {
    return std::clamp(gpus_per_node / (tp * ep), 1, expert_grad_group());
  }
  return shard_degree() == 1 ? 1 : expert_grad_group();
}

}  // namespace vramsim::training
