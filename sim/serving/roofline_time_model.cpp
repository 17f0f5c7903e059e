#include "sim/serving/roofline_time_model.hpp"

#include "sim/serving/step_cost_helpers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/memory/budget.hpp"
#include "sim/model/flop_count.hpp"
#include "sim/model/kv_cache_shape.hpp"
#include "sim/model/weight_bytes.hpp"
#include "sim/model/weight_tensors.hpp"

namespace vramsim::serving {

namespace {

using detail::matmul_dtype;
using detail::stage_of_layer;
using detail::sum_capped;


}  // namespace

std::int64_t kernels_per_layer(const model::LayerSpec& layer, int tp) {
  // vLLM's decoder layer (vllm/model_executor/models/llama.py, LlamaDecoderLayer.forward):
  // the attention half runs the fused residual-add RMSNorm, the QKV GEMM, rotary, the KV-cache
  // write, attention and the output GEMM; a dense MLP the norm, the gate/up GEMM, the
  // activation and the down GEMM; a routed MoE block (vllm/model_executor/layers/fused_moe)
  // the norm, the router GEMM, top-k, the token alignment, the two grouped expert GEMMs, the
  // activation and the weighted sum. With TP each half ends in an all-reduce kernel.
  // NOTE: a count of vLLM's Llama and fused-MoE paths, not of every architecture; torch.compile
  // may fuse a few of the element-wise kernels.
  const std::int64_t attention = 6;
  const std::int64_t mlp = layer.moe ? 8 : 4;
  return attention + mlp + (tp > 1 ? 2 : 0);
}

std::int64_t gemm_kernels_per_layer(const model::LayerSpec& layer) {
  // Of kernels_per_layer's: the QKV and output GEMMs; gate/up and down, or the router and the
  // two grouped expert GEMMs.
  return 2 + (layer.moe ? 3 : 2);
}

double expected_experts_touched(std::int64_t num_experts, std::int64_t top_k,
                                std::int64_t num_tokens) {
  VRAMSIM_CHECK(top_k >= 1 && top_k <= num_experts, "top-k {} of {} experts", top_k,
                num_experts);
  VRAMSIM_CHECK(num_tokens >= 0, "negative token count {}", num_tokens);
  const auto e = static_cast<double>(num_experts);
  const double miss = 1.0 - static_cast<double>(top_k) / e;
  return e * (1.0 - std::pow(miss, static_cast<double>(num_tokens)));
}

RooflineTimeModel::RooflineTimeModel(const model::ModelSpec& spec,
                                     const hardware::DeviceSpec& device, model::Parallelism par,
                                     const model::WeightFormat& weights, DType kv_dtype,
                                     const RooflineOptions& options,
                                     const ExpertParallelSetup& ep)
    : par_(par), options_(options), ep_(ep) {
  model::check_parallelism(spec, par);
  ValidationReport report;
  options.validate(report, "roofline");
  ep.validate(report);
  throw_if_errors(report);
  dp_group_ = ep.lockstep(spec.moe.has_value());
  const memory::MoeSplit split =
      memory::moe_split(par.tp, ep.data_parallel_size, ep.enable_expert_parallel);
  if (dp_group_) {
    VRAMSIM_CHECK(par.pp == 1, "a data-parallel MoE group with pp {}", par.pp);
    ep_size_ = split.ep_size;
    group_stages_.assign(static_cast<std::size_t>(par.pp), GroupStage{});
    for (std::int64_t l = 0; l < spec.num_layers; ++l) {
      if (spec.layers[static_cast<std::size_t>(l)].moe) {
        ++group_stages_[static_cast<std::size_t>(stage_of_layer(l, spec, par.pp))].moe_layers;
      }
    }
    for (int dp_rank = 0; dp_rank < ep.data_parallel_size; ++dp_rank) {
      // The DP rank's first TP rank holds the most experts (linear placement).
      local_experts_.push_back(split.ep_size > 1
                                   ? memory::local_num_experts(spec.moe->num_experts,
                                                               split.ep_size, dp_rank * par.tp)
                                   : spec.moe->num_experts);
    }
  }

  hidden_size_ = spec.hidden_size;
  num_layers_ = spec.num_layers;
  activation_bytes_ = std::max<std::int64_t>(1, bits_of(weights.dtype) / 8);
  if (spec.moe) {
    num_experts_ = spec.moe->num_experts;
    top_k_ = spec.moe->num_experts_per_tok;
  }
  const DType mm_dtype = matmul_dtype(device, weights);
  const FlopRate mm_peak = hardware::peak_flop_rate(device, mm_dtype);
  const double matmul_efficiency = options.matmul_efficiency_on(device);
  matmul_rate_ = mm_peak.per_second() * matmul_efficiency;
  attention_rate_ = hardware::peak_flop_rate(device, weights.dtype).per_second() *
                    options.prefill_attention_efficiency;
  const double bw = device.memory_bandwidth.bytes_per_second();
  VRAMSIM_CHECK(bw > 0.0 && matmul_rate_ > 0.0 && attention_rate_ > 0.0,
                "device '{}' has a non-positive peak or bandwidth", device.id);
  weight_bandwidth_ = bw * options.memory_efficiency;
  decode_kv_bandwidth_ = bw * options.decode_attention_efficiency;
  const auto tp = static_cast<double>(par.tp);
  // Query heads split evenly over TP (check_parallelism), and so do the score FLOPs.
  prefill_attn_flops_per_token_ =
      model::attention_flops_per_attended_token(spec, model::ForwardMode::kPrefill) / tp;
  decode_attn_flops_per_token_ =
      model::attention_flops_per_attended_token(spec, model::ForwardMode::kDecode) / tp;
  link_ = comm::intra_node_link(device);
  if (!device.peer_link || device.peer_link->bridge_only) {
    // PCIe: NCCL reaches only a fraction of the link (roofline_options.hpp).
    link_.bandwidth = options.pcie_collective_efficiency * link_.bandwidth;
  }
  tp_all_reduce_ = comm::CollectiveCost(comm::Collective::kAllReduce, par_.tp, link_);
  stage_send_ = comm::CollectiveCost(comm::Collective::kSendRecv, 2, link_);

  // Matmul FLOPs and bytes per stage from the one tensor inventory weight_bytes.hpp uses.
  stages_.assign(static_cast<std::size_t>(par.pp), Stage{});
  std::vector<Bytes> resident(static_cast<std::size_t>(par.pp));
  bool mxfp4_experts = false;
  model::WeightFormat unquantized;
  unquantized.dtype = weights.dtype;
  for (const model::WeightTensor& t : model::weight_tensors(spec)) {
    const auto rank = static_cast<std::size_t>(stage_of_layer(t.layer, spec, par.pp));
    const model::ShardShape s = model::shard_shape(spec, t, par.tp);
    // Modules the checkpoint keeps unquantized, or stores in another config group's format,
    // are read as they are stored.
    const model::WeightFormat& stored = model::tensor_format(weights, t, unquantized);
    const Bytes bytes = s.copies * model::matrix_bytes(stored, t.kind, s.in_features,
                                                       s.out_features);
    // A tied lm_head reads the embedding's storage; it holds bytes of its own only at pp > 1.
    if (!(t.tied && par.pp == 1)) resident[rank] += bytes;
    Stage& st = stages_[rank];
    const double flops = t.matmul ? 2.0 * static_cast<double>(s.in_features) *
                                        static_cast<double>(s.out_features) *
                                        static_cast<double>(t.active_copies)
                                  : 0.0;
    const auto read = static_cast<double>(bytes.count());
    switch (t.kind) {
      case model::TensorKind::kEmbedding:
      case model::TensorKind::kPositionEmbedding:
      case model::TensorKind::kVision: break;  // lookups, or no text-token work
      case model::TensorKind::kLmHead:
        st.lm_head_flops_per_row += flops;
        st.lm_head_bytes += read;
        break;
      case model::TensorKind::kLinear:
      case model::TensorKind::kExpertLinear:
      case model::TensorKind::kRouter:
      case model::TensorKind::kVector:
        if (t.copies > t.active_copies && t.matmul &&
            stored.quantization == model::QuantMethod::kMxfp4) {
          mxfp4_experts = true;
        }
        if (t.copies > t.active_copies && dp_group_) {
          // The group's split of one expert (MoeSplit), costed per routed token in step_time.
          const model::ShardShape one = model::shard_shape(spec, t, split.moe_tp);
          GroupStage& g = group_stages_[rank];
          if (t.matmul) {
            g.flops_per_assignment += 2.0 * static_cast<double>(one.in_features) *
                                      static_cast<double>(one.out_features);
          }
          g.bytes_per_expert += static_cast<double>(
              model::matrix_bytes(stored, t.kind, one.in_features, one.out_features).count());
        } else if (t.copies > t.active_copies) {  // routed experts (and their biases)
          st.expert_flops_per_token += flops;
          st.expert_bytes += read;
        } else {
          st.dense_flops_per_token += flops;
          st.dense_bytes += read;
        }
        break;
    }
  }
  expert_matmul_rate_ = matmul_rate_;
  if (mxfp4_experts) {
    // vLLM's MXFP4 MoE backend (vllm/model_executor/layers/quantization/mxfp4.py,
    // get_mxfp4_backend): FlashInfer's native-FP4 kernels on Blackwell (compute capability
    // 10.x; their token tile is taken as matmul_ogs's, moe_row_padding.hpp), triton_kernels'
    // matmul_ogs on Hopper where the release bundles it (its check: 9.0 <= capability < 11.0),
    // else fused_marlin_moe (Ampere, Ada, consumer Blackwell, and Hopper before 0.11.1).
    const int cc = device.compute_capability;
    const bool hopper = cc >= 90 && cc < 100;
    moe_kernel_ = (cc >= 100 && cc < 110) || (hopper && options.mxfp4_triton_kernels)
                      ? MoeKernel::kMatmulOgs
                      : MoeKernel::kMarlin;
    // Hopper decodes the 4-bit weights to bf16 inside the GEMM: issue-bound at prefill sizes
    // (datasheet_constants.hpp, "W4A16 MoE on Hopper").
    if (hopper) {
      expert_matmul_rate_ = hardware::peak_flop_rate(device, DType::kBf16).per_second() *
                            (moe_kernel_ == MoeKernel::kMarlin
                                 ? options.hopper_marlin_moe_efficiency
                                 : options.hopper_matmul_ogs_moe_efficiency);
    }
  }
  for (Stage& st : stages_) {
    st.dense_read_s = st.dense_bytes / weight_bandwidth_;
    st.lm_head_read_s = st.lm_head_bytes / weight_bandwidth_;
  }
  for (std::int64_t l = 0; l < spec.num_layers; ++l) {
    Stage& st = stages_[static_cast<std::size_t>(stage_of_layer(l, spec, par.pp))];
    const model::LayerSpec& layer = spec.layers[static_cast<std::size_t>(l)];
    const std::int64_t kernels = kernels_per_layer(layer, par.tp);
    const std::int64_t gemms = gemm_kernels_per_layer(layer);
    const std::int64_t small = kernels - gemms - (par.tp > 1 ? 2 : 0);  // not the all-reduces
    st.kernel_gaps += kernels * options.kernel_gap + small * options.small_kernel_fixed;
    st.gemm_fixed += gemms * options.gemm_kernel_fixed;
  }
  stages_.back().gemm_fixed += options.gemm_kernel_fixed;  // the lm_head's GEMM
  for (int r = 0; r < par.pp; ++r) {
    const Bytes expected = model::weight_bytes_on_stage(spec, weights, par, r);
    VRAMSIM_CHECK(resident[static_cast<std::size_t>(r)] == expected,
                  "stage {} weight bytes {} differ from weight_bytes_on_stage {}", r,
                  resident[static_cast<std::size_t>(r)].count(), expected.count());
  }

  // Attention layer classes: one per distinct sliding window (sim/cost/attention_classes.hpp).
  attention_ = cost::attention_classes(spec, kv_dtype, par);
  mixed_decode_ = MixedBatchDecode::for_device(spec, device, par, options);

  description_ = fmt::format("roofline: {} datasheet ({:.0f} TFLOP/s {} x {:.2f}, {:.0f} GB/s x "
                             "{:.2f}, {:g} us between kernels, {:g} us in each GEMM kernel, {:g} "
                             "us per small kernel)",
                             device.name, mm_peak.per_second() / 1e12, to_string(mm_dtype),
                             matmul_efficiency, bw / 1e9, options.memory_efficiency,
                             options.kernel_gap.seconds() * 1e6,
                             options.gemm_kernel_fixed.seconds() * 1e6,
                             options.small_kernel_fixed.seconds() * 1e6);
  if (options.use_fitted_matmul && device.fitted_matmul_efficiency) {
    description_ += fmt::format("; matmul efficiency fitted to {}", device.fitted_matmul_source);
  }
  if (mixed_decode_) {
    description_ += "; decodes beside a prefill chunk as FlashAttention 2 runs them, fitted to "
                    "kernel profiles";
  }
  if (expert_matmul_rate_ != matmul_rate_) {
    description_ += fmt::format("; MXFP4 experts ({}) at {:.0f} TFLOP/s, fitted to kernel traces",
                                moe_kernel_ == MoeKernel::kMarlin ? "Marlin" : "matmul_ogs",
                                expert_matmul_rate_ / 1e12);
  }
  if (dp_group_) {
    description_ += fmt::format("; DP {} {}, {}, expert load imbalance {:g}",
                                ep.data_parallel_size,
                                split.ep_size > 1 ? fmt::format("+ EP {}", split.ep_size)
                                                  : fmt::format("(experts TP {})", split.moe_tp),
                                to_string(split.ep_size > 1
                                              ? ep.backend
                                              : All2AllBackend::kAllgatherReducescatter),
                                ep.expert_load_imbalance);
  }
}

RooflineTimeModel::StageSeconds RooflineTimeModel::stage_seconds(
    const Stage& s, const cost::StageAttention& a, std::int64_t num_tokens,
    std::int64_t logit_rows, double expert_fraction, double expert_padding,
    const double* prefill_attended,
    const double* prefill_cached, const double* decode_attended,
    double decode_kv_factor) const {
  const auto tokens = static_cast<double>(num_tokens);
  const auto rows = static_cast<double>(logit_rows);
  StageSeconds out;
  out.linear = std::max(s.dense_flops_per_token * tokens / matmul_rate_, s.dense_read_s) +
               s.gemm_fixed.seconds();
  if (s.expert_bytes > 0.0) {
    out.linear +=
        std::max(s.expert_flops_per_token * tokens * expert_padding / expert_matmul_rate_,
                 s.expert_bytes * expert_fraction / weight_bandwidth_);
  }
  if (s.lm_head_bytes > 0.0) {
    out.linear += std::max(s.lm_head_flops_per_row * rows / matmul_rate_, s.lm_head_read_s);
  }
  double prefill_flops = 0, prefill_bytes = 0, decode_flops = 0, decode_bytes = 0;
  for (std::size_t w = 0; w < attention_.windows.size(); ++w) {
    const cost::AttentionClass& c = a.classes[w];
    prefill_flops += c.num_layers * prefill_attended[w];
    prefill_bytes += c.kv_bytes_per_token * prefill_cached[w];
    decode_flops += c.num_layers * decode_attended[w];
    decode_bytes += c.kv_bytes_per_token * decode_attended[w] * decode_kv_factor;
  }
  prefill_flops *= prefill_attn_flops_per_token_;
  decode_flops *= decode_attn_flops_per_token_;
  out.attention = std::max(prefill_flops / attention_rate_, prefill_bytes / weight_bandwidth_) +
                  std::max(decode_flops / attention_rate_, decode_bytes / decode_kv_bandwidth_);
  return out;
}

double RooflineTimeModel::group_expert_seconds(const GroupStage& g, std::int64_t group_tokens,
                                               std::int32_t dp_rank, double padding) const {
  if (g.moe_layers == 0) return 0.0;
  const std::int64_t local = local_experts_[static_cast<std::size_t>(dp_rank)];
  // Without EP every device holds a slice of every expert: it computes every assignment on
  // its slice, and imbalance between experts does not load one device more than another.
  const double assignments =
      ep_size_ > 1 ? routed_assignments(group_tokens, top_k_, num_experts_, local,
                                        ep_.expert_load_imbalance)
                   : static_cast<double>(group_tokens) * static_cast<double>(top_k_);
  const double touched = expected_experts_touched(num_experts_, top_k_, group_tokens) *
                         static_cast<double>(local) / static_cast<double>(num_experts_);
  return std::max(assignments * padding * g.flops_per_assignment / expert_matmul_rate_,
                  touched * g.bytes_per_expert / weight_bandwidth_);
}

StepTime RooflineTimeModel::step_time(const BatchShape& batch) const {
  VRAMSIM_CHECK(!batch.empty(), "step_time of an empty batch");
  VRAMSIM_CHECK(batch.num_decodes >= 0 && batch.decode_context_tokens >= batch.num_decodes,
                "{} decodes attending {} tokens", batch.num_decodes,
                batch.decode_context_tokens);
  // Tokens attended (and cached tokens read) per layer of each window class, whole step.
  std::array<double, kMaxAttentionClasses> prefill_attended{}, prefill_cached{},
      decode_attended{};
  std::int64_t num_tokens = batch.num_decodes;
  std::int64_t longest_query = batch.num_decodes > 0 ? 1 : 0;
  for (const PrefillChunk& c : batch.prefills) {
    VRAMSIM_CHECK(c.num_tokens > 0 && c.num_context >= 0, "prefill chunk of {} after {}",
                  c.num_tokens, c.num_context);
    num_tokens += c.num_tokens;
    longest_query = std::max(longest_query, c.num_tokens);
    for (std::size_t w = 0; w < attention_.windows.size(); ++w) {
      const std::int64_t window = attention_.windows[w];
      prefill_attended[w] += sum_capped(c.num_context + 1, c.num_context + c.num_tokens, window);
      prefill_cached[w] += static_cast<double>(window > 0 ? std::min(c.num_context, window)
                                                          : c.num_context);
    }
  }
  if (batch.num_decodes > 0) {
    const auto decodes = static_cast<double>(batch.num_decodes);
    for (std::size_t w = 0; w < attention_.windows.size(); ++w) {
      const std::int64_t window = attention_.windows[w];
      if (window <= 0) {  // global attention: every context token (no division on this path)
        decode_attended[w] = static_cast<double>(batch.decode_context_tokens);
        continue;
      }
      const double mean_context = static_cast<double>(batch.decode_context_tokens) / decodes;
      decode_attended[w] = decodes * std::min(mean_context, static_cast<double>(window));
    }
  }
  const auto num_sequences =
      static_cast<std::int64_t>(batch.prefills.size()) + batch.num_decodes;
  // A data-parallel MoE group: this rank's dense layers run its padded batch, the experts the
  // group's tokens (the file comment). Otherwise both are this batch's tokens.
  std::int64_t linear_tokens = num_tokens;
  std::int64_t group_tokens = num_tokens;
  if (dp_group_) {
    VRAMSIM_CHECK(batch.dp_rank >= 0 && batch.dp_rank < ep_.data_parallel_size,
                  "DP rank {} of {}", batch.dp_rank, ep_.data_parallel_size);
    linear_tokens = std::max(num_tokens, batch.dp_padded_tokens);
    group_tokens = std::max(linear_tokens, batch.dp_group_tokens);
  }
  const double expert_fraction =
      num_experts_ > 0 ? expected_experts_touched(num_experts_, top_k_, num_tokens) /
                             static_cast<double>(num_experts_)
                       : 0.0;
  const double expert_padding =
      num_experts_ > 0 && num_tokens > 0
          ? moe_padding_factor(moe_kernel_, num_tokens, top_k_, num_experts_)
          : 1.0;
  const double group_padding =
      dp_group_ && num_experts_ > 0 && group_tokens > 0
          ? moe_padding_factor(moe_kernel_, group_tokens, top_k_, num_experts_)
          : 1.0;
  const Bytes activations(linear_tokens * hidden_size_ * activation_bytes_);
  const Duration all_reduce = par_.tp > 1 ? tp_all_reduce_.time(activations) : Duration::zero();
  MoeExchange exchange;
  if (dp_group_) {
    const MoeExchangeShape shape{linear_tokens, group_tokens,       hidden_size_,
                                 num_experts_,  top_k_,             activation_bytes_};
    // Without EP the MoE layers gather over the DP group whatever the backend (vLLM's
    // all2all backends apply to expert parallelism).
    exchange = ep_size_ > 1
                   ? moe_exchange_time(ep_.backend, shape,
                                       ep_.backend == All2AllBackend::kAllgatherReducescatter
                                           ? ep_.data_parallel_size
                                           : ep_size_,
                                       link_)
                   : moe_exchange_time(All2AllBackend::kAllgatherReducescatter, shape,
                                       ep_.data_parallel_size, link_);
  }

  // Decodes beside a prefill chunk, where FlashAttention 2 runs them in one varlen call
  // (mixed_batch_attention.hpp): their KV read more than once, and a block per query tile.
  const bool mixed = mixed_decode_ && batch.num_decodes > 0 && longest_query > 1;
  const double decode_kv_factor = mixed ? mixed_decode_->kv_factor() : 1.0;
  const double mixed_block_s =
      mixed ? mixed_decode_->block_seconds(batch.num_decodes, longest_query) : 0.0;

  StepTime out;
  Duration slowest;
  for (std::size_t r = 0; r < stages_.size(); ++r) {
    const cost::StageAttention& a = attention_.stages[r];
    StageSeconds sec =
        stage_seconds(stages_[r], a, linear_tokens, num_sequences, expert_fraction,
                      expert_padding, prefill_attended.data(), prefill_cached.data(),
                      decode_attended.data(), decode_kv_factor);
    sec.attention += static_cast<double>(a.num_layers) * mixed_block_s;
    Duration comm = (2 * a.num_layers) * all_reduce;
    if (dp_group_) {
      const GroupStage& g = group_stages_[r];
      sec.linear += group_expert_seconds(g, group_tokens, batch.dp_rank, group_padding);
      comm += g.moe_layers * exchange.total();
    }
    const Duration linear = Duration::from_seconds(sec.linear);
    const Duration attention = Duration::from_seconds(sec.attention);
    out.linear += linear;
    out.attention += attention;
    out.communication += comm;
    out.kernel_gaps += stages_[r].kernel_gaps;
    slowest = std::max(slowest, linear + attention + comm + stages_[r].kernel_gaps);
  }
  if (par_.pp > 1) {
    // hidden_states and residual travel between stages (vLLM IntermediateTensors).
    out.communication +=
        static_cast<std::int64_t>(par_.pp - 1) * stage_send_.time(2 * activations);
  }
  out.overhead = options_.step_overhead + num_sequences * options_.per_sequence_overhead +
                 num_layers_ * options_.launch_per_layer;
  out.total = out.linear + out.attention + out.communication + out.kernel_gaps + out.overhead;
  out.stage_interval = par_.pp == 1 ? out.total : slowest + out.overhead;
  return out;
}

std::string RooflineTimeModel::describe() const { return description_; }

Bytes RooflineTimeModel::weight_bytes_read(std::int64_t num_tokens, std::int64_t num_logit_rows,
                                           int pp_rank) const {
  VRAMSIM_CHECK(pp_rank >= 0 && pp_rank < par_.pp, "pp_rank {} outside [0, {})", pp_rank,
                par_.pp);
  const Stage& s = stages_[static_cast<std::size_t>(pp_rank)];
  const double fraction = num_experts_ > 0 ? expected_experts_touched(num_experts_, top_k_,
                                                                      num_tokens) /
                                                 static_cast<double>(num_experts_)
                                           : 0.0;
  const double lm_head = num_logit_rows > 0 ? s.lm_head_bytes : 0.0;
  return round_to_bytes(s.dense_bytes + s.expert_bytes * fraction + lm_head);
}

std::unique_ptr<ExecutionTimeModel> make_roofline_time_model(
    const model::ModelSpec& spec, const hardware::DeviceSpec& device, model::Parallelism par,
    const model::WeightFormat& weights, DType kv_dtype, const RooflineOptions& options,
    const ExpertParallelSetup& ep) {
  return std::make_unique<RooflineTimeModel>(spec, device, par, weights, kv_dtype, options, ep);
}

}  // namespace vramsim::serving
