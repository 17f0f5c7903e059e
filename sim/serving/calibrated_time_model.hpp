// The calibrated step-time model: the structure of RooflineTimeModel (roofline_time_model.hpp:
// per pipeline stage, on one TP rank, precomputed in the constructor) with each cost read from
// a calibration profile through the one cost model (sim/cost/cost_model.hpp) instead of the
// datasheet:
//
//   linear     one cuBLAS GEMM per matmul weight of the stage on this rank, m = the step's
//              tokens (lm_head: logit rows), n = its output and k its input features:
//              sum of gemm_time(dtype, m, n, k). Routed experts: the expected number of experts
//              touched (expected_experts_touched) each run one GEMM of m = T * top_k / touched
//              tokens.
//   attention  per layer class (one per sliding window): decode: decode_attention_time(num
//              decodes, mean context capped at the window) per layer; prefill: the attended
//              (query, key) pairs of all chunks as one causal prefill_attention_time per layer.
//   communication  TP all-reduces and PP send/recv as in the roofline model, from the
//              profile's collective tables (cost::CostModel::collective) where they hold
//              the rank count and size, else the alpha-beta link model.
//   kernel gaps  as in the roofline model (kernels_per_layer x kernel_gap and the element-wise
//              kernels' small_kernel_fixed), less the attention kernel, whose time the profile
//              measures; the profile does not measure the element-wise kernels or the gaps.
//   mixed steps  decodes beside a prefill chunk on FlashAttention 2's parts cost what
//              mixed_batch_attention.hpp adds to a pure decode step (the profile measures decode
//              attention alone): the blocks of the longest query's tiles and the reread KV.
//   overhead   step_overhead + per_sequence_overhead * sequences + launch_per_layer * layers
//              (RooflineOptions; the profile does not measure host time).
//
// Every estimate outside the measured range falls back to the datasheet roofline of the
// device; step_detail says which parts did.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/comm/collective.hpp"
#include "sim/core/dtype.hpp"
#include "sim/cost/attention_classes.hpp"
#include "sim/cost/calibration_tables.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/hardware/calibration_record.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/parallelism.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/serving/execution_time_model.hpp"
#include "sim/serving/mixed_batch_attention.hpp"
#include "sim/serving/roofline_options.hpp"

namespace vramsim::serving {

/// How many of a step's cost estimates came from measurements and how many fell back.
struct CalibratedStepDetail {
  StepTime time;
  int num_estimates = 0;  // GEMMs, attention classes and collectives estimated
  int num_fallbacks = 0;  // of those, answered by the datasheet roofline
  bool linear_fallback = false;
  bool attention_fallback = false;
  bool communication_fallback = false;
};

class CalibratedTimeModel final : public ExecutionTimeModel {
 public:
  static constexpr std::size_t kMaxAttentionClasses = cost::kMaxAttentionClasses;

  /// Throws ConfigError when `par` cannot split `spec` or `options` fail validate(). The
  /// profile is taken as validated (load_calibration_profile); its device_id need not equal
  /// `device.id`, but the datasheet fallback uses `device`.
  CalibratedTimeModel(const model::ModelSpec& spec, const hardware::DeviceSpec& device,
                      model::Parallelism par, const model::WeightFormat& weights,
                      DType kv_dtype, const calibration::CalibrationProfile& profile,
                      const RooflineOptions& options = {});

  StepTime step_time(const BatchShape& batch) const override;
  std::string describe() const override;

  /// step_time with the count of estimates that left the measured range.
  CalibratedStepDetail step_detail(const BatchShape& batch) const;

  const calibration::CalibrationTables& tables() const { return *cost_.tables(); }
  const cost::CostModel& cost_model() const { return cost_; }

 private:
  struct Gemm {
    std::int64_t n = 0;
    std::int64_t k = 0;
    double count = 1;           // identical matrices (layers of the stage)
    bool routed_expert = false;
    bool lm_head = false;       // m = logit rows
  };
  struct Stage {
    std::vector<Gemm> gemms;
    Duration kernel_gaps;  // its layers' gaps and element-wise kernels (the file comment)
  };

  model::Parallelism par_;
  RooflineOptions options_;
  cost::CostModel cost_;
  std::vector<Stage> stages_;
  cost::AttentionClasses attention_;  // layer classes by sliding window, per stage
  DType matmul_dtype_ = DType::kBf16;
  DType attention_dtype_ = DType::kBf16;
  calibration::AttentionShape attention_shape_;  // heads on one rank; kv bytes set per class
  std::int64_t hidden_size_ = 0;
  std::int64_t num_layers_ = 0;
  std::int64_t activation_bytes_ = 2;
  std::int64_t num_experts_ = 0;
  std::int64_t top_k_ = 0;
  comm::LinkModel link_;
  std::optional<MixedBatchDecode> mixed_decode_;  // decodes beside a prefill chunk (FA2 parts)
  double decode_kv_bandwidth_ = 0;  // B/s at the decode-attention efficiency, for mixed steps
  std::string description_;
};

/// A CalibratedTimeModel behind the interface. Throws like its constructor.
std::unique_ptr<ExecutionTimeModel> make_calibrated_time_model(
    const model::ModelSpec& spec, const hardware::DeviceSpec& device, model::Parallelism par,
    const model::WeightFormat& weights, DType kv_dtype,
    const calibration::CalibrationProfile& profile, const RooflineOptions& options = {});

}  // namespace vramsim::serving
