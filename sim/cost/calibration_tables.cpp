#include "sim/cost/calibration_tables.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "sim/core/check.hpp"
#include "sim/cost/datasheet.hpp"

namespace vramsim::calibration {

namespace {

bool usable(CheckOutcome c) { return c != CheckOutcome::kFailed; }

double element_bytes(DType d) { return static_cast<double>(bits_of(d)) / 8.0; }

double element_bytes(const std::string& dtype) {
  const auto d = dtype_from_string(dtype);
  return d ? element_bytes(*d) : 2.0;
}

// Index i with xs[i] <= x <= xs[i + 1]; nullopt outside the range.
std::optional<std::size_t> bracket(std::span<const double> xs, double x) {
  if (xs.empty() || !(x >= xs.front() && x <= xs.back())) return std::nullopt;
  if (xs.size() == 1) return 0;
  const auto it = std::upper_bound(xs.begin(), xs.end(), x);
  const auto hi = static_cast<std::size_t>(it - xs.begin());
  return std::min(hi == 0 ? 0 : hi - 1, xs.size() - 2);
}

// The weight of the upper point in log space, 0 at lo and 1 at hi.
double log_weight(double lo, double hi, double x) {
  if (x == lo || hi == lo) return 0.0;
  if (x == hi) return 1.0;
  return (std::log(x) - std::log(lo)) / (std::log(hi) - std::log(lo));
}

double log_lerp(double a, double b, double w) {
  if (w == 0.0) return a;
  if (w == 1.0) return b;
  return std::exp((1.0 - w) * std::log(a) + w * std::log(b));
}

bool contains(const std::vector<double>& xs, double x) {
  return std::binary_search(xs.begin(), xs.end(), x);
}

}  // namespace

std::string_view to_string(Basis b) { return name_of(kBases, b); }

std::optional<double> interpolate_log_log(std::span<const double> xs, std::span<const double> ys,
                                          double x) {
  VRAMSIM_CHECK(xs.size() == ys.size(), "{} x values, {} y values", xs.size(), ys.size());
  const auto i = bracket(xs, x);
  if (!i) return std::nullopt;
  if (xs.size() == 1) return ys[0];
  return log_lerp(ys[*i], ys[*i + 1], log_weight(xs[*i], xs[*i + 1], x));
}

std::optional<double> interpolate_log_bilinear(std::span<const double> xs,
                                               std::span<const double> ys,
                                               std::span<const double> z, double x, double y) {
  VRAMSIM_CHECK(z.size() == xs.size() * ys.size(), "grid of {} for {} x {}", z.size(),
                xs.size(), ys.size());
  const auto i = bracket(xs, x);
  const auto j = bracket(ys, y);
  if (!i || !j) return std::nullopt;
  const std::size_t i1 = std::min(*i + 1, xs.size() - 1);
  const std::size_t j1 = std::min(*j + 1, ys.size() - 1);
  const double wx = xs.size() == 1 ? 0.0 : log_weight(xs[*i], xs[i1], x);
  const double wy = ys.size() == 1 ? 0.0 : log_weight(ys[*j], ys[j1], y);
  auto at = [&](std::size_t a, std::size_t b) { return z[a * ys.size() + b]; };
  // Only the cells with a non-zero weight must exist (be positive; a missing cell is NaN).
  auto row = [&](std::size_t a) -> std::optional<double> {
    const double lo = at(a, *j);
    if (!(lo > 0.0)) return std::nullopt;
    if (wy == 0.0) return lo;
    const double hi = at(a, j1);
    if (!(hi > 0.0)) return std::nullopt;
    return log_lerp(lo, hi, wy);
  };
  const auto lo = row(*i);
  if (!lo) return std::nullopt;
  if (wx == 0.0) return lo;
  const auto hi = row(i1);
  if (!hi) return std::nullopt;
  return log_lerp(*lo, *hi, wx);
}

CalibrationTables::CalibrationTables(const CalibrationProfile& profile,
                                     const hardware::DeviceSpec& device,
                                     const cost::Efficiencies& fallback)
    : profile_(profile), device_(device), fallback_(fallback) {
  // Points per series, keyed by x; the first record of a duplicated x wins.
  std::map<CopyKind, std::map<double, double>> copies;
  for (const CopyRecord& r : profile.copies) {
    if (usable(r.check)) copies[r.kind].emplace(static_cast<double>(r.bytes), r.timing.median_s);
  }
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::map<double, double>> gemms;
  for (const GemmRecord& r : profile.gemms) {
    if (usable(r.check)) {
      gemms[{r.dtype, r.n, r.k}].emplace(static_cast<double>(r.m), r.timing.median_s);
    }
  }
  std::map<std::pair<CollectiveOp, int>, std::map<double, double>> colls;
  for (const CollectiveRecord& r : profile.collectives) {
    if (usable(r.check)) {
      colls[{r.op, r.num_ranks}].emplace(static_cast<double>(r.bytes), r.timing.median_s);
    }
  }
  auto to_series = [](const std::map<double, double>& pts) {
    Series s;
    for (const auto& [x, y] : pts) {
      s.x.push_back(x);
      s.y.push_back(y);
    }
    return s;
  };
  for (const auto& [k, pts] : copies) copies_[k] = to_series(pts);
  for (const auto& [k, pts] : gemms) gemms_[k] = to_series(pts);
  for (const auto& [k, pts] : colls) collectives_[k] = to_series(pts);

  // Decode grids, one per head configuration, in order of first appearance.
  using DecodeKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::string>;
  std::vector<DecodeKey> decode_keys;
  std::map<DecodeKey, std::map<std::pair<double, double>, double>> decode_points;
  for (const DecodeAttentionRecord& r : profile.decode_attention) {
    if (!usable(r.check)) continue;
    const DecodeKey key{r.num_q_heads, r.num_kv_heads, r.head_dim, r.kv_dtype};
    if (decode_points.count(key) == 0) decode_keys.push_back(key);
    decode_points[key].emplace(
        std::pair{static_cast<double>(r.batch), static_cast<double>(r.context)},
        r.timing.median_s);
  }
  for (const DecodeKey& key : decode_keys) {
    DecodeGrid g;
    g.num_q_heads = std::get<0>(key);
    g.num_kv_heads = std::get<1>(key);
    g.head_dim = std::get<2>(key);
    g.kv_bytes_per_token = 2.0 * static_cast<double>(g.num_kv_heads * g.head_dim) *
                           element_bytes(std::get<3>(key));
    const auto& pts = decode_points[key];
    for (const auto& [bc, t] : pts) {
      if (!contains(g.batches, bc.first)) g.batches.push_back(bc.first);
      if (std::find(g.contexts.begin(), g.contexts.end(), bc.second) == g.contexts.end()) {
        g.contexts.push_back(bc.second);
      }
    }
    std::sort(g.contexts.begin(), g.contexts.end());
    g.times.assign(g.batches.size() * g.contexts.size(), std::numeric_limits<double>::quiet_NaN());
    for (const auto& [bc, t] : pts) {
      const auto i = static_cast<std::size_t>(
          std::lower_bound(g.batches.begin(), g.batches.end(), bc.first) - g.batches.begin());
      const auto j = static_cast<std::size_t>(
          std::lower_bound(g.contexts.begin(), g.contexts.end(), bc.second) - g.contexts.begin());
      g.times[i * g.contexts.size() + j] = t;
    }
    decode_.push_back(std::move(g));
  }

  // Prefill series, one per (q heads, head_dim), time per sequence.
  std::vector<std::pair<std::int64_t, std::int64_t>> prefill_keys;
  std::map<std::pair<std::int64_t, std::int64_t>, std::map<double, double>> prefill_points;
  for (const PrefillAttentionRecord& r : profile.prefill_attention) {
    if (!usable(r.check)) continue;
    const std::pair key{r.num_q_heads, r.head_dim};
    if (prefill_points.count(key) == 0) prefill_keys.push_back(key);
    prefill_points[key].emplace(static_cast<double>(r.seq_len),
                                r.timing.median_s / static_cast<double>(r.batch));
  }
  for (const auto& key : prefill_keys) {
    prefill_.push_back({key.first, key.second, to_series(prefill_points[key])});
  }
}

TimeEstimate CalibrationTables::estimate(double seconds, Basis basis) {
  return {Duration::from_seconds(seconds), basis};
}

std::optional<TimeEstimate> CalibrationTables::from_series(const Series& s, double x,
                                                           double scale) const {
  const auto y = interpolate_log_log(s.x, s.y, x);
  if (!y) return std::nullopt;
  const Basis basis = scale != 1.0     ? Basis::kScaled
                      : contains(s.x, x) ? Basis::kMeasured
                                         : Basis::kInterpolated;
  return estimate(*y * scale, basis);
}

TimeEstimate CalibrationTables::copy_time(CopyKind kind, Bytes size) const {
  const auto bytes = static_cast<double>(size.count());
  if (const auto it = copies_.find(kind); it != copies_.end()) {
    if (auto e = from_series(it->second, bytes, 1.0)) return *e;
  }
  CopyRecord probe;
  probe.kind = kind;
  probe.bytes = size.count();
  const bool device = copy_traffic_bytes(probe) > bytes;
  if (device) {
    return estimate(cost::datasheet_memory_seconds(device_, fallback_, copy_traffic_bytes(probe)),
                    Basis::kDatasheet);
  }
  return estimate(copy_traffic_bytes(probe) /
                      device_.pcie.bandwidth_per_direction.bytes_per_second(),
                  Basis::kDatasheet);
}

std::optional<Bandwidth> CalibrationTables::largest_copy_bandwidth(CopyKind kind) const {
  const auto it = copies_.find(kind);
  if (it == copies_.end() || it->second.x.empty()) return std::nullopt;
  CopyRecord probe;
  probe.kind = kind;
  probe.bytes = static_cast<std::int64_t>(it->second.x.back());
  return Bandwidth::bytes_per_second(copy_traffic_bytes(probe) / it->second.y.back());
}

TimeEstimate CalibrationTables::gemm_time(DType dtype, std::int64_t m, std::int64_t n,
                                          std::int64_t k) const {
  VRAMSIM_CHECK(m > 0 && n > 0 && k > 0, "gemm {} x {} x {}", m, n, k);
  const std::string name(vramsim::to_string(dtype));
  const auto dm = static_cast<double>(m);
  const auto dn = static_cast<double>(n);
  const auto dk = static_cast<double>(k);
  if (const auto it = gemms_.find({name, n, k}); it != gemms_.end()) {
    if (auto e = from_series(it->second, dm, 1.0)) return *e;
  } else {
    // The nearest measured shape of this dtype, scaled by n k.
    const Series* best = nullptr;
    double best_distance = std::numeric_limits<double>::infinity(), best_nk = 0;
    for (const auto& [key, series] : gemms_) {
      if (std::get<0>(key) != name) continue;
      const auto n2 = static_cast<double>(std::get<1>(key));
      const auto k2 = static_cast<double>(std::get<2>(key));
      const double d = std::abs(std::log(dn / n2)) + std::abs(std::log(dk / k2));
      if (d < best_distance) {
        best_distance = d;
        best = &series;
        best_nk = n2 * k2;
      }
    }
    if (best != nullptr) {
      if (auto e = from_series(*best, dm, dn * dk / best_nk)) return *e;
    }
  }
  return estimate(cost::datasheet_matmul_seconds(device_, fallback_, dtype, m, n, k),
                  Basis::kDatasheet);
}

AttentionShape attention_shape(std::int64_t num_q_heads, std::int64_t num_kv_heads,
                               std::int64_t head_dim, DType kv_dtype) {
  return {num_q_heads, num_kv_heads, head_dim,
          2.0 * static_cast<double>(num_kv_heads * head_dim) * element_bytes(kv_dtype)};
}

TimeEstimate CalibrationTables::decode_attention_time(std::int64_t batch, double context,
                                                      const AttentionShape& shape) const {
  VRAMSIM_CHECK(batch > 0 && context > 0, "decode attention of {} x {}", batch, context);
  const std::int64_t num_q_heads = shape.num_q_heads;
  const std::int64_t head_dim = shape.head_dim;
  const double kv_per_token = shape.kv_bytes_per_token;
  const DecodeGrid* grid = nullptr;
  for (const DecodeGrid& g : decode_) {
    const bool same = g.num_q_heads == num_q_heads && g.num_kv_heads == shape.num_kv_heads &&
                      g.head_dim == head_dim && g.kv_bytes_per_token == kv_per_token;
    if (same || grid == nullptr) grid = &g;
    if (same) break;
  }
  const auto b = static_cast<double>(batch);
  if (grid != nullptr) {
    if (const auto t = interpolate_log_bilinear(grid->batches, grid->contexts, grid->times, b,
                                                context)) {
      const double scale = kv_per_token / grid->kv_bytes_per_token;
      const bool same = scale == 1.0 && grid->num_q_heads == num_q_heads &&
                        grid->num_kv_heads == shape.num_kv_heads && grid->head_dim == head_dim;
      const Basis basis = !same ? Basis::kScaled
                          : contains(grid->batches, b) && contains(grid->contexts, context)
                              ? Basis::kMeasured
                              : Basis::kInterpolated;
      return estimate(*t * scale, basis);
    }
  }
  const double bytes = b * context * kv_per_token;
  const double flops = 4.0 * static_cast<double>(num_q_heads * head_dim) * b * context;
  return estimate(cost::datasheet_decode_attention_seconds(device_, fallback_, bytes, flops),
                  Basis::kDatasheet);
}

TimeEstimate CalibrationTables::prefill_attention_time(double attended_pairs,
                                                       std::int64_t num_q_heads,
                                                       std::int64_t head_dim,
                                                       DType dtype) const {
  VRAMSIM_CHECK(attended_pairs > 0, "prefill attention over {} pairs", attended_pairs);
  const PrefillSeries* series = nullptr;
  for (const PrefillSeries& s : prefill_) {
    const bool same = s.num_q_heads == num_q_heads && s.head_dim == head_dim;
    if (same || series == nullptr) series = &s;
    if (same) break;
  }
  if (series != nullptr) {
    // The causal length with the same pairs: s (s + 1) / 2 = pairs.
    const double s = (std::sqrt(1.0 + 8.0 * attended_pairs) - 1.0) / 2.0;
    const double rounded = std::round(s);
    const double length = std::abs(s - rounded) < 1e-9 ? rounded : s;
    const double scale = static_cast<double>(num_q_heads * head_dim) /
                         static_cast<double>(series->num_q_heads * series->head_dim);
    if (auto e = from_series(series->by_seq_len, length, scale)) return *e;
  }
  const double flops = 4.0 * static_cast<double>(num_q_heads * head_dim) * attended_pairs;
  return estimate(cost::datasheet_prefill_attention_seconds(device_, fallback_, flops, dtype),
                  Basis::kDatasheet);
}

std::optional<TimeEstimate> CalibrationTables::collective_time(CollectiveOp op, Bytes size,
                                                               int num_ranks) const {
  const auto it = collectives_.find({op, num_ranks});
  if (it == collectives_.end()) return std::nullopt;
  return from_series(it->second, static_cast<double>(size.count()), 1.0);
}

}  // namespace vramsim::calibration
