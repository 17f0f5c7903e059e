// Measured times of a calibration profile as functions of shape, with the datasheet roofline
// outside what was measured.
//
//   copy       time by size, per copy kind: log-log piecewise-linear over the measured sizes.
//   GEMM       time by (dtype, m, n, k). A measured (n, k): log-log over the measured m.
//              Another (n, k): the nearest measured shape (distance |ln n/n'| + |ln k/k'|) at
//              the same m, its time scaled by n k / (n' k') (the FLOP and weight-byte ratio
//              alike, so it holds both where the product is compute- and memory-bound).
//   decode     time of one layer's paged decode attention by (batch, context): bilinear in
//   attention  log-log over the measured rectangular grid of one head configuration; another
//              configuration is scaled by its KV bytes per token (kv_heads * head_dim * element).
//   prefill    time of one layer's causal prefill attention by sequence length: log-log over the
//   attention  measured lengths, scaled by q_heads * head_dim. A step's chunks are mapped to the
//              causal length s with the same attended (query, key) pairs, s (s + 1) / 2 = pairs.
//   collectives time by size per (op, ranks): log-log over the measured sizes; nullopt outside
//              (cost_model.hpp's CostModel::collective then uses the alpha-beta link model).
//
// Interpolation passes through every measured point exactly and, since it is piecewise linear
// in log space, is monotone between points wherever the measurements are. Outside the measured
// range of a query (a smaller or larger m, a context beyond the grid, a dtype not measured) the
// answer is the datasheet roofline (datasheet.hpp, the efficiencies of datasheet_constants.hpp),
// and the estimate says so (Basis::kDatasheet). Records whose correctness check failed are
// ignored.
//
// NOTE: moved from sim/hardware into sim/cost with the cost model; the namespace stays
// vramsim::calibration, the name every caller and the calibration tools use.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "sim/core/dtype.hpp"
#include "sim/core/enum_table.hpp"
#include "sim/core/units.hpp"
#include "sim/cost/datasheet_constants.hpp"
#include "sim/hardware/calibration_record.hpp"
#include "sim/hardware/device_spec.hpp"

namespace vramsim::calibration {

/// Where an estimate came from.
enum class Basis {
  kMeasured,      // a measured point, exactly
  kInterpolated,  // between measured points of the same configuration
  kScaled,        // a measured configuration of another shape, scaled
  kDatasheet,     // outside the measured range: the datasheet roofline (fallback)
};

inline constexpr auto kBases = enum_table<Basis>({
    {Basis::kMeasured, "measured", "a measured point, exactly"},
    {Basis::kInterpolated, "interpolated", "between measured points of the same configuration"},
    {Basis::kScaled, "scaled", "a measured configuration of another shape, scaled"},
    {Basis::kDatasheet, "datasheet", "outside the measured range: the datasheet roofline"},
});
static_assert(covers_every_enumerator(kBases) && names_are_unique(kBases));

std::string_view to_string(Basis b);

struct TimeEstimate {
  Duration time;
  Basis basis = Basis::kDatasheet;
  /// True when the datasheet roofline answered because the query left the measured range.
  bool fallback() const { return basis == Basis::kDatasheet; }
};

/// log y interpolated linearly in log x through the points (xs[i], ys[i]); xs strictly
/// increasing and positive, ys positive. Returns ys[i] exactly at xs[i] and nullopt outside
/// [xs.front(), xs.back()] or for empty input.
std::optional<double> interpolate_log_log(std::span<const double> xs,
                                          std::span<const double> ys, double x);

/// Bilinear interpolation of log z over (log x, log y) on the grid z[i * ys.size() + j] at
/// (xs[i], ys[j]), with the same exactness and range rules as interpolate_log_log.
std::optional<double> interpolate_log_bilinear(std::span<const double> xs,
                                               std::span<const double> ys,
                                               std::span<const double> z, double x, double y);

/// The heads of one attention layer on one device (after the TP split) and the KV bytes one
/// token takes in it (K and V, all its KV heads; MLA: the compressed latent).
struct AttentionShape {
  std::int64_t num_q_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  double kv_bytes_per_token = 0;
};

/// The shape of a standard (GQA / MHA) layer: kv_bytes_per_token = 2 kv_heads head_dim element.
AttentionShape attention_shape(std::int64_t num_q_heads, std::int64_t num_kv_heads,
                               std::int64_t head_dim, DType kv_dtype);

class CalibrationTables {
 public:
  /// Indexes `profile` (assumed validated) for `device`, the datasheet behind the fallback.
  CalibrationTables(const CalibrationProfile& profile, const hardware::DeviceSpec& device,
                    const cost::Efficiencies& fallback = {});

  /// One copy of `size` bytes (device copies move 2x on the device, see CopyRecord).
  TimeEstimate copy_time(CopyKind kind, Bytes size) const;
  /// Achieved bandwidth of the largest measured copy of `kind`; nullopt when none was measured.
  std::optional<Bandwidth> largest_copy_bandwidth(CopyKind kind) const;

  /// C[m x n] = A[m x k] B[k x n] with inputs in `dtype` (fp32 accumulation).
  TimeEstimate gemm_time(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k) const;

  /// One layer's paged decode attention for `batch` sequences of `context` tokens each (a
  /// mean context may be fractional) on a layer of `shape`.
  TimeEstimate decode_attention_time(std::int64_t batch, double context,
                                     const AttentionShape& shape) const;

  /// One layer's causal prefill attention over `attended_pairs` (query, key) pairs on this
  /// device's `num_q_heads` heads of `head_dim`.
  TimeEstimate prefill_attention_time(double attended_pairs, std::int64_t num_q_heads,
                                      std::int64_t head_dim, DType dtype) const;

  /// A measured collective time; nullopt when (op, num_ranks) was not measured or `size` lies
  /// outside its measured sizes.
  std::optional<TimeEstimate> collective_time(CollectiveOp op, Bytes size, int num_ranks) const;

  const hardware::DeviceSpec& device() const { return device_; }
  const CalibrationProfile& profile() const { return profile_; }

 private:
  // A 1-D series: x ascending, distinct; y the median times.
  struct Series {
    std::vector<double> x;
    std::vector<double> y;
  };
  struct DecodeGrid {
    std::int64_t num_q_heads = 0, num_kv_heads = 0, head_dim = 0;
    double kv_bytes_per_token = 0;  // per layer, all its KV heads, K and V
    std::vector<double> batches, contexts, times;  // times[i * contexts.size() + j]
  };
  struct PrefillSeries {
    std::int64_t num_q_heads = 0, head_dim = 0;
    Series by_seq_len;  // time per sequence
  };
  static TimeEstimate estimate(double seconds, Basis basis);
  std::optional<TimeEstimate> from_series(const Series& s, double x, double scale) const;

  CalibrationProfile profile_;
  hardware::DeviceSpec device_;
  cost::Efficiencies fallback_;
  std::map<CopyKind, Series> copies_;
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, Series> gemms_;  // dtype, n, k
  std::vector<DecodeGrid> decode_;
  std::vector<PrefillSeries> prefill_;
  std::map<std::pair<CollectiveOp, int>, Series> collectives_;
};

}  // namespace vramsim::calibration
