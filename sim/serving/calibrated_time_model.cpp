#include "sim/serving/calibrated_time_model.hpp"

#include "sim/serving/step_cost_helpers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/model/kv_cache_shape.hpp"
#include "sim/model/weight_bytes.hpp"
#include "sim/model/weight_tensors.hpp"
#include "sim/serving/roofline_time_model.hpp"

namespace vramsim::serving {

namespace {

using detail::matmul_dtype;
using detail::stage_of_layer;
using detail::sum_capped;


// Accumulates estimates and remembers whether any fell back.
struct Tally {
  int num_estimates = 0;
  int num_fallbacks = 0;
  bool any_fallback = false;
  double add(const calibration::TimeEstimate& e, double times) {
    ++num_estimates;
    if (e.fallback()) {
      ++num_fallbacks;
      any_fallback = true;
    }
    return e.time.seconds() * times;
  }
};

}  // namespace

CalibratedTimeModel::CalibratedTimeModel(const model::ModelSpec& spec,
                                         const hardware::DeviceSpec& device,
                                         model::Parallelism par,
                                         const model::WeightFormat& weights, DType kv_dtype,
                                         const calibration::CalibrationProfile& profile,
                                         const RooflineOptions& options)
    : par_(par), options_(options), cost_(device, profile, options.efficiencies(device)) {
  model::check_parallelism(spec, par);
  ValidationReport report;
  options.validate(report, "roofline");
  throw_if_errors(report);

  hidden_size_ = spec.hidden_size;
  num_layers_ = spec.num_layers;
  activation_bytes_ = std::max<std::int64_t>(1, bits_of(weights.dtype) / 8);
  if (spec.moe) {
    num_experts_ = spec.moe->num_experts;
    top_k_ = spec.moe->num_experts_per_tok;
  }
  matmul_dtype_ = matmul_dtype(device, weights);
  attention_dtype_ = weights.dtype;
  attention_shape_.num_q_heads = spec.num_attention_heads / par.tp;
  attention_shape_.num_kv_heads = model::kv_heads_per_device(spec, par.tp);
  attention_shape_.head_dim = spec.head_dim;
  link_ = comm::intra_node_link(device);

  stages_.assign(static_cast<std::size_t>(par.pp), Stage{});
  for (const model::WeightTensor& t : model::weight_tensors(spec)) {
    if (!t.matmul) continue;
    if (t.kind == model::TensorKind::kEmbedding ||
        t.kind == model::TensorKind::kPositionEmbedding || t.kind == model::TensorKind::kVision) {
      continue;
    }
    const model::ShardShape s = model::shard_shape(spec, t, par.tp);
    Gemm g{s.out_features, s.in_features, 1.0, t.copies > t.active_copies,
           t.kind == model::TensorKind::kLmHead};
    // Shared (always active) copies run as that many GEMMs.
    if (!g.routed_expert) g.count = static_cast<double>(t.active_copies);
    Stage& st = stages_[static_cast<std::size_t>(stage_of_layer(t.layer, spec, par.pp))];
    const auto same = std::find_if(st.gemms.begin(), st.gemms.end(), [&](const Gemm& o) {
      return o.n == g.n && o.k == g.k && o.routed_expert == g.routed_expert &&
             o.lm_head == g.lm_head;
    });
    if (same == st.gemms.end()) {
      st.gemms.push_back(g);
    } else {
      same->count += g.count;
    }
  }

  attention_ = cost::attention_classes(spec, kv_dtype, par);
  mixed_decode_ = MixedBatchDecode::for_device(spec, device, par, options);
  decode_kv_bandwidth_ =
      device.memory_bandwidth.bytes_per_second() * options.decode_attention_efficiency;
  for (std::int64_t l = 0; l < spec.num_layers; ++l) {
    const model::LayerSpec& layer = spec.layers[static_cast<std::size_t>(l)];
    const std::int64_t kernels = kernels_per_layer(layer, par.tp);
    // Not the GEMMs, the all-reduces or the attention kernel: the profile measures those.
    const std::int64_t small =
        kernels - gemm_kernels_per_layer(layer) - (par.tp > 1 ? 2 : 0) - 1;
    stages_[static_cast<std::size_t>(stage_of_layer(l, spec, par.pp))].kernel_gaps +=
        kernels * options.kernel_gap + small * options.small_kernel_fixed;
  }

  const std::string file = profile.source_file.empty()
                               ? std::string("(in memory)")
                               : std::filesystem::path(profile.source_file).filename().string();
  description_ = fmt::format("calibrated: {} ({} {}{}), datasheet {} outside the measured range; "
                             "{:g} us between kernels and {:g} us per element-wise kernel "
                             "(fitted defaults, not measured by the profile)",
                             file, profile.device_id, profile.identity.name,
                             profile.synthetic ? ", SYNTHETIC" : "", device.id,
                             options.kernel_gap.seconds() * 1e6,
                             options.small_kernel_fixed.seconds() * 1e6);
  if (mixed_decode_) {
    description_ += "; decodes beside a prefill chunk as FlashAttention 2 runs them";
  }
}

CalibratedStepDetail CalibratedTimeModel::step_detail(const BatchShape& batch) const {
  VRAMSIM_CHECK(!batch.empty(), "step_time of an empty batch");
  VRAMSIM_CHECK(batch.num_decodes >= 0 && batch.decode_context_tokens >= batch.num_decodes,
                "{} decodes attending {} tokens", batch.num_decodes, batch.decode_context_tokens);
  std::array<double, kMaxAttentionClasses> prefill_pairs{};
  std::int64_t num_tokens = batch.num_decodes;
  std::int64_t longest_query = batch.num_decodes > 0 ? 1 : 0;
  for (const PrefillChunk& c : batch.prefills) {
    VRAMSIM_CHECK(c.num_tokens > 0 && c.num_context >= 0, "prefill chunk of {} after {}",
                  c.num_tokens, c.num_context);
    num_tokens += c.num_tokens;
    longest_query = std::max(longest_query, c.num_tokens);
    for (std::size_t w = 0; w < attention_.windows.size(); ++w) {
      prefill_pairs[w] += sum_capped(c.num_context + 1, c.num_context + c.num_tokens,
                                     attention_.windows[w]);
    }
  }
  const auto num_sequences = static_cast<std::int64_t>(batch.prefills.size()) + batch.num_decodes;
  const double mean_context =
      batch.num_decodes > 0 ? static_cast<double>(batch.decode_context_tokens) /
                                  static_cast<double>(batch.num_decodes)
                            : 0.0;
  double touched = 0;
  std::int64_t tokens_per_expert = 0;
  if (num_experts_ > 0) {
    touched = expected_experts_touched(num_experts_, top_k_, num_tokens);
    tokens_per_expert = std::max<std::int64_t>(
        1, std::llround(static_cast<double>(num_tokens * top_k_) / std::max(touched, 1.0)));
  }

  Tally linear_tally, attention_tally, comm_tally;
  CalibratedStepDetail out;
  Duration slowest;
  const Bytes activations(num_tokens * hidden_size_ * activation_bytes_);
  Duration all_reduce;
  if (par_.tp > 1) {
    all_reduce = Duration::from_seconds(comm_tally.add(
        cost_.collective(comm::Collective::kAllReduce, activations, par_.tp, link_),
        1.0));
  }
  const bool mixed = mixed_decode_ && batch.num_decodes > 0 && longest_query > 1;
  for (std::size_t r = 0; r < stages_.size(); ++r) {
    const Stage& s = stages_[r];
    const cost::StageAttention& a = attention_.stages[r];
    double linear = 0;
    for (const Gemm& g : s.gemms) {
      if (g.routed_expert) {
        linear += linear_tally.add(cost_.matmul(matmul_dtype_, tokens_per_expert, g.n, g.k),
                                   g.count * touched);
      } else {
        const std::int64_t m = g.lm_head ? num_sequences : num_tokens;
        linear += linear_tally.add(cost_.matmul(matmul_dtype_, m, g.n, g.k), g.count);
      }
    }
    double attention = 0;
    for (std::size_t w = 0; w < attention_.windows.size(); ++w) {
      const cost::AttentionClass& c = a.classes[w];
      if (c.num_layers == 0) continue;
      calibration::AttentionShape shape = attention_shape_;
      shape.kv_bytes_per_token = c.kv_bytes_per_layer_token();
      if (prefill_pairs[w] > 0) {
        attention += attention_tally.add(
            cost_.prefill_attention({.attended_pairs = prefill_pairs[w],
                                     .num_q_heads = shape.num_q_heads,
                                     .head_dim = shape.head_dim,
                                     .dtype = attention_dtype_}),
            c.num_layers);
      }
      if (batch.num_decodes > 0) {
        const std::int64_t window = attention_.windows[w];
        const double context =
            window > 0 ? std::min(mean_context, static_cast<double>(window)) : mean_context;
        attention += attention_tally.add(
            cost_.decode_attention(batch.num_decodes, context, shape), c.num_layers);
        if (mixed) {  // the KV reread beside the chunk, over the measured pure decode
          attention += c.num_layers * (mixed_decode_->kv_factor() - 1.0) *
                       static_cast<double>(batch.num_decodes) * context *
                       shape.kv_bytes_per_token / decode_kv_bandwidth_;
        }
      }
    }
    if (mixed) {
      attention += static_cast<double>(a.num_layers) *
                   mixed_decode_->block_seconds(batch.num_decodes, longest_query);
    }
    const Duration lin = Duration::from_seconds(linear);
    const Duration att = Duration::from_seconds(attention);
    const Duration comm = (2 * a.num_layers) * all_reduce;
    out.time.linear += lin;
    out.time.attention += att;
    out.time.communication += comm;
    out.time.kernel_gaps += s.kernel_gaps;
    slowest = std::max(slowest, lin + att + comm + s.kernel_gaps);
  }
  if (par_.pp > 1) {
    const calibration::TimeEstimate send =
        cost_.collective(comm::Collective::kSendRecv, 2 * activations, 2, link_);
    comm_tally.add(send, 1.0);
    out.time.communication += static_cast<std::int64_t>(par_.pp - 1) * send.time;
  }
  out.time.overhead = options_.step_overhead + num_sequences * options_.per_sequence_overhead +
                      num_layers_ * options_.launch_per_layer;
  out.time.total = out.time.linear + out.time.attention + out.time.communication +
                   out.time.kernel_gaps + out.time.overhead;
  out.time.stage_interval = par_.pp == 1 ? out.time.total : slowest + out.time.overhead;
  out.num_estimates =
      linear_tally.num_estimates + attention_tally.num_estimates + comm_tally.num_estimates;
  out.num_fallbacks =
      linear_tally.num_fallbacks + attention_tally.num_fallbacks + comm_tally.num_fallbacks;
  out.linear_fallback = linear_tally.any_fallback;
  out.attention_fallback = attention_tally.any_fallback;
  out.communication_fallback = comm_tally.any_fallback;
  return out;
}

StepTime CalibratedTimeModel::step_time(const BatchShape& batch) const {
  return step_detail(batch).time;
}

std::string CalibratedTimeModel::describe() const { return description_; }

std::unique_ptr<ExecutionTimeModel> make_calibrated_time_model(
    const model::ModelSpec& spec, const hardware::DeviceSpec& device, model::Parallelism par,
    const model::WeightFormat& weights, DType kv_dtype,
    const calibration::CalibrationProfile& profile, const RooflineOptions& options) {
  return std::make_unique<CalibratedTimeModel>(spec, device, par, weights, kv_dtype, profile,
                                               options);
}

}  // namespace vramsim::serving
