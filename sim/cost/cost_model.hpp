// The one cost model of vramsim, used by serving and training alike: the time of a matrix
// product by shape (m, n, k, dtype), of prefill (flash) and paged decode attention, of
// memory-bound kernels by bytes moved, and of collectives by message size, rank count and link,
// on one device. Each answer says where it came from (calibration::Basis): a calibration
// profile's tables where they cover the query (measured, interpolated, or scaled from a
// measured shape), else the datasheet roofline of datasheet.hpp with the efficiencies of
// datasheet_constants.hpp.
//
// Per-step host overhead is a serving-engine property (serving::RooflineOptions, whose defaults
// are datasheet_constants.hpp's); the profile does not measure it.
//
// Evaluating the model is a handful of table look-ups per call; hot paths (the serving step
// loop) precompute what they can from it instead of calling it per layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/comm/collective.hpp"
#include "sim/core/dtype.hpp"
#include "sim/core/units.hpp"
#include "sim/cost/calibration_tables.hpp"
#include "sim/cost/datasheet_constants.hpp"
#include "sim/hardware/calibration_record.hpp"
#include "sim/hardware/device_spec.hpp"

namespace vramsim::cost {

using calibration::AttentionShape;
using calibration::Basis;
using calibration::TimeEstimate;

/// One layer's causal prefill attention on one device: `attended_pairs` (query, key) pairs over
/// `num_sequences` sequences of equal length, on `num_q_heads` heads of `head_dim`.
struct PrefillAttention {
  double attended_pairs = 0;
  std::int64_t num_sequences = 1;
  std::int64_t num_q_heads = 0;
  std::int64_t head_dim = 0;
  DType dtype = DType::kBf16;
  /// FLOPs per attended pair (model::attention_flops_per_attended_token on this device);
  /// 0: 4 * num_q_heads * head_dim (standard attention).
  double flops_per_pair = 0;
};

/// How many estimates came from each basis.
struct BasisCounts {
  int measured = 0, interpolated = 0, scaled = 0, datasheet = 0;
  void add(Basis b);
  BasisCounts& operator+=(const BasisCounts& o) {
    measured += o.measured;
    interpolated += o.interpolated;
    scaled += o.scaled;
    datasheet += o.datasheet;
    return *this;
  }
  int total() const { return measured + interpolated + scaled + datasheet; }
};

/// The profile's name for `c`; nullopt for all-to-all (not measured).
std::optional<calibration::CollectiveOp> to_calibration_op(comm::Collective c);

class CostModel {
 public:
  /// The datasheet roofline of `device` only, at `eff` (default: device_efficiencies).
  explicit CostModel(const hardware::DeviceSpec& device);
  CostModel(const hardware::DeviceSpec& device, const Efficiencies& eff);
  /// `profile`'s tables (assumed validated) where they cover a query, `device`'s datasheet
  /// elsewhere.
  CostModel(const hardware::DeviceSpec& device, const calibration::CalibrationProfile& profile);
  CostModel(const hardware::DeviceSpec& device, const calibration::CalibrationProfile& profile,
            const Efficiencies& eff);

  /// C[m x n] = A[m x k] B[k x n] with inputs in `dtype`. Requires m, n, k > 0.
  TimeEstimate matmul(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k) const;
  /// One layer's causal prefill attention (the profile measures time per sequence by length;
  /// a batch of equal sequences costs num_sequences times one).
  TimeEstimate prefill_attention(const PrefillAttention& a) const;
  /// One layer's paged decode attention for `batch` sequences of mean `context` tokens.
  TimeEstimate decode_attention(std::int64_t batch, double context,
                                const AttentionShape& shape) const;
  /// Memory-bound kernels that read and write `moved` bytes together (a device copy of
  /// moved / 2 bytes where the profile measured one).
  TimeEstimate memory_bound(Bytes moved) const;
  /// `c` on `buffer` over `num_ranks` ranks: measured where the profile holds (op, ranks) and
  /// the size lies within its sizes, else the alpha-beta model over `link`.
  TimeEstimate collective(comm::Collective c, Bytes buffer, int num_ranks,
                          const comm::LinkModel& link) const;

  /// "datasheet roofline (<device>)" or "calibration <file> (<device id>, <gpu name>)".
  std::string describe() const;
  /// Null without a profile.
  const calibration::CalibrationTables* tables() const {
    return tables_ ? &*tables_ : nullptr;
  }
  const hardware::DeviceSpec& device() const { return device_; }
  const Efficiencies& efficiencies() const { return eff_; }

 private:
  hardware::DeviceSpec device_;
  Efficiencies eff_;
  std::optional<calibration::CalibrationTables> tables_;
};

}  // namespace vramsim::cost
