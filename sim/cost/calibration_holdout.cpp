#include "sim/cost/calibration_holdout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "sim/hardware/calibration_profile.hpp"

namespace vramsim::calibration {

namespace {

using Points = std::vector<std::pair<double, std::size_t>>;  // (x, record index), x ascending

// Records of `records` with a usable check, grouped by `key`, each group sorted by `x`.
template <class Rec, class KeyFn, class XFn>
auto group(const std::vector<Rec>& records, KeyFn key, XFn x) {
  std::map<decltype(key(records.front())), Points> groups;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i].check == CheckOutcome::kFailed) continue;
    groups[key(records[i])].emplace_back(x(records[i]), i);
  }
  for (auto& [k, pts] : groups) std::stable_sort(pts.begin(), pts.end());
  return groups;
}

// Erases the records whose indices are in `drop`.
template <class Rec>
void erase_indices(std::vector<Rec>& records, const std::set<std::size_t>& drop) {
  std::vector<Rec> kept;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (drop.count(i) == 0) kept.push_back(records[i]);
  }
  records = std::move(kept);
}

// The distinct x of `pts` strictly inside their range.
std::vector<double> interior_values(const Points& pts) {
  std::vector<double> xs;
  for (const auto& p : pts) {
    if (xs.empty() || xs.back() != p.first) xs.push_back(p.first);
  }
  if (xs.size() < 3) return {};
  return {xs.begin() + 1, xs.end() - 1};
}

struct Context {
  const CalibrationProfile& profile;
  const hardware::DeviceSpec& device;
  HoldoutReport& report;
};

// Leaves out the records `drop` (selected through `member`), then predicts each of them.
template <class Rec>
void leave_out(Context& ctx, std::vector<Rec> CalibrationProfile::*member,
               const std::set<std::size_t>& drop, const std::string& table,
               const std::function<std::string(const Rec&)>& label,
               const std::function<TimeEstimate(const CalibrationTables&, const Rec&)>& predict) {
  CalibrationProfile rest = ctx.profile;
  erase_indices(rest.*member, drop);
  const CalibrationTables tables(rest, ctx.device);
  for (std::size_t i : drop) {
    const Rec& r = (ctx.profile.*member)[i];
    const TimeEstimate e = predict(tables, r);
    if (e.fallback()) continue;  // nothing left to interpolate from
    ctx.report.points.push_back({table, label(r), r.timing.median_s, e.time.seconds(), e.basis});
  }
}

template <class Rec, class KeyFn, class XFn>
void leave_out_each_interior(
    Context& ctx, std::vector<Rec> CalibrationProfile::*member, const std::string& table,
    KeyFn key, XFn x, const std::function<std::string(const Rec&)>& label,
    const std::function<TimeEstimate(const CalibrationTables&, const Rec&)>& predict) {
  for (const auto& [k, pts] : group(ctx.profile.*member, key, x)) {
    for (double v : interior_values(pts)) {
      std::set<std::size_t> drop;
      for (const auto& p : pts) {
        if (p.first == v) drop.insert(p.second);
      }
      leave_out(ctx, member, drop, table, label, predict);
    }
  }
}

DType dtype_or_bf16(const std::string& s) { return dtype_from_string(s).value_or(DType::kBf16); }

std::string gemm_label(const GemmRecord& r) {
  return fmt::format("{} m={} n={} k={}", r.dtype, r.m, r.n, r.k);
}

TimeEstimate predict_gemm(const CalibrationTables& t, const GemmRecord& r) {
  return t.gemm_time(dtype_or_bf16(r.dtype), r.m, r.n, r.k);
}

void summarize(HoldoutReport& report) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> errors;
  for (const HoldoutPoint& p : report.points) {
    if (errors.count(p.table) == 0) order.push_back(p.table);
    errors[p.table].push_back(std::abs(p.relative_error()));
  }
  for (const std::string& table : order) {
    std::vector<double> e = errors[table];
    std::sort(e.begin(), e.end());
    const std::size_t n = e.size();
    const double median = n % 2 == 1 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2.0;
    report.summaries.push_back({table, static_cast<int>(n), median, e.back()});
  }
}

}  // namespace

HoldoutReport holdout_check(const CalibrationProfile& profile,
                            const hardware::DeviceSpec& device) {
  HoldoutReport report;
  Context ctx{profile, device, report};

  leave_out_each_interior<CopyRecord>(
      ctx, &CalibrationProfile::copies, "copy", [](const CopyRecord& r) { return r.kind; },
      [](const CopyRecord& r) { return static_cast<double>(r.bytes); },
      [](const CopyRecord& r) { return fmt::format("{} {} B", to_string(r.kind), r.bytes); },
      [](const CalibrationTables& t, const CopyRecord& r) {
        return t.copy_time(r.kind, Bytes(r.bytes));
      });

  auto gemm_key = [](const GemmRecord& r) { return std::tuple{r.dtype, r.n, r.k}; };
  auto gemm_m = [](const GemmRecord& r) { return static_cast<double>(r.m); };
  leave_out_each_interior<GemmRecord>(ctx, &CalibrationProfile::gemms, "gemm", gemm_key, gemm_m,
                                      gemm_label, predict_gemm);
  // Whole shapes left out: the nearest other shape, scaled, predicts their interior points.
  for (const auto& [k, pts] : group(profile.gemms, gemm_key, gemm_m)) {
    std::set<std::size_t> drop;
    for (const auto& p : pts) drop.insert(p.second);
    CalibrationProfile rest = profile;
    erase_indices(rest.gemms, drop);
    const CalibrationTables tables(rest, device);
    const std::vector<double> interior = interior_values(pts);
    for (const auto& p : pts) {
      if (!std::binary_search(interior.begin(), interior.end(), p.first)) continue;
      const GemmRecord& r = profile.gemms[p.second];
      const TimeEstimate e = predict_gemm(tables, r);
      if (e.fallback()) continue;
      report.points.push_back(
          {"gemm-shape", gemm_label(r), r.timing.median_s, e.time.seconds(), e.basis});
    }
  }

  leave_out_each_interior<DecodeAttentionRecord>(
      ctx, &CalibrationProfile::decode_attention, "decode",
      [](const DecodeAttentionRecord& r) {
        return std::tuple{r.num_q_heads, r.num_kv_heads, r.head_dim, r.kv_dtype};
      },
      [](const DecodeAttentionRecord& r) { return static_cast<double>(r.context); },
      [](const DecodeAttentionRecord& r) {
        return fmt::format("batch={} context={} heads={}/{}x{}", r.batch, r.context,
                           r.num_q_heads, r.num_kv_heads, r.head_dim);
      },
      [](const CalibrationTables& t, const DecodeAttentionRecord& r) {
        return t.decode_attention_time(
            r.batch, static_cast<double>(r.context),
            attention_shape(r.num_q_heads, r.num_kv_heads, r.head_dim, dtype_or_bf16(r.kv_dtype)));
      });

  leave_out_each_interior<PrefillAttentionRecord>(
      ctx, &CalibrationProfile::prefill_attention, "prefill",
      [](const PrefillAttentionRecord& r) { return std::pair{r.num_q_heads, r.head_dim}; },
      [](const PrefillAttentionRecord& r) { return static_cast<double>(r.seq_len); },
      [](const PrefillAttentionRecord& r) {
        return fmt::format("seq_len={} heads={}x{}", r.seq_len, r.num_q_heads, r.head_dim);
      },
      [](const CalibrationTables& t, const PrefillAttentionRecord& r) {
        const auto s = static_cast<double>(r.seq_len);
        TimeEstimate e = t.prefill_attention_time(s * (s + 1.0) / 2.0, r.num_q_heads, r.head_dim,
                                                  dtype_or_bf16(r.dtype));
        e.time = static_cast<std::int64_t>(r.batch) * e.time;  // the table holds per-sequence times
        return e;
      });

  leave_out_each_interior<CollectiveRecord>(
      ctx, &CalibrationProfile::collectives, "collective",
      [](const CollectiveRecord& r) { return std::pair{r.op, r.num_ranks}; },
      [](const CollectiveRecord& r) { return static_cast<double>(r.bytes); },
      [](const CollectiveRecord& r) {
        return fmt::format("{} ranks={} {} B", to_string(r.op), r.num_ranks, r.bytes);
      },
      [](const CalibrationTables& t, const CollectiveRecord& r) {
        const auto e = t.collective_time(r.op, Bytes(r.bytes), r.num_ranks);
        return e ? *e : TimeEstimate{Duration::zero(), Basis::kDatasheet};
      });

  summarize(report);
  return report;
}

}  // namespace vramsim::calibration
