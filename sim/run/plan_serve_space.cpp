#include "sim/run/plan_serve_space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/dtype.hpp"
#include "sim/core/error.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/run/data_root.hpp"

namespace vramsim::run {

std::size_t PlanServeSpace::product_size() const {
  return gpus.size() * tps.size() * pps.size() * layouts.size() * quantizations.size() *
         kv_cache_dtypes.size() * max_num_seqs.size() * max_num_batched_tokens.size() *
         kv_tiers.size();
}

std::size_t PlanServeSpace::mixed_size() const {
  return mixed_layouts.size() * quantizations.size() * kv_cache_dtypes.size() *
         max_num_seqs.size() * max_num_batched_tokens.size() * kv_tiers.size();
}

bool PlanServeSpace::has_kv_tiers() const {
  return std::any_of(kv_tiers.begin(), kv_tiers.end(),
                     [](const PlanServeKvTier& t) { return t.host > Bytes(0); });
}

std::string plan_serve_gpu_id(std::string id) {
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return id;
}

namespace {

void check_ints(const std::vector<std::int64_t>& values, std::string_view field,
                std::int64_t low, std::int64_t high, ValidationReport& report) {
  std::set<std::int64_t> seen;
  for (const std::int64_t v : values) {
    if (v < low || v > high) {
      report.error(std::string(field), fmt::format("must be in [{}, {}], got {}", low, high, v));
    } else if (!seen.insert(v).second) {
      report.error(std::string(field), fmt::format("{} is listed twice", v));
    }
  }
}

void check_names(const std::vector<std::string>& values, std::string_view field,
                 const std::function<std::string(const std::string&)>& problem,
                 ValidationReport& report) {
  std::set<std::string> seen;
  for (const std::string& v : values) {
    if (const std::string p = problem(v); !p.empty()) {
      report.error(std::string(field), p);
    } else if (!seen.insert(v).second) {
      report.error(std::string(field), fmt::format("{} is listed twice", v));
    }
  }
}

// The replicas list as aggregated layouts, in its order, then with `disaggregated` the xPyD
// splits of each N of it, X ascending (PlanServeSpace::layouts).
std::vector<PlanServeLayout> layouts_of(const std::vector<std::int64_t>& replicas,
                                        bool disaggregated) {
  std::vector<PlanServeLayout> layouts;
  for (const std::int64_t n : replicas) layouts.push_back({n, 0, 0});
  if (disaggregated) {
    for (const std::int64_t n : replicas) {
      for (std::int64_t x = 1; x < n; ++x) layouts.push_back({0, x, n - x});
    }
  }
  return layouts;
}

// --search-mixed-pools: every xPyD split of sp.layouts x every ordered pair of distinct pools
// of sp.gpus x sp.tps (PlanServeSpace::mixed_layouts); none, with the problem reported under
// "plan.mixed_pools", without the xPyD splits, two pools or a replica count to split.
std::vector<PlanServeMixedLayout> mixed_layouts_of(const PlanServeSpace& sp, bool disaggregated,
                                                   ValidationReport& report) {
  std::vector<PlanServeMixedLayout> mixed;
  std::vector<PlanServePool> pools;
  for (const std::string& g : sp.gpus) {
    for (const std::int64_t t : sp.tps) pools.push_back({g, t});
  }
  if (!disaggregated) {
    report.error("plan.mixed_pools",
                 "mixes the pools of the xPyD splits: give --search-disaggregated too");
  } else if (pools.size() < 2) {
    report.error("plan.mixed_pools",
                 fmt::format("needs two pools to mix, but the search has one GPU and one TP "
                             "({} TP {}): give two or more --search-gpu or --search-tp",
                             sp.gpus.front(), sp.tps.front()));
  } else if (std::none_of(sp.replicas.begin(), sp.replicas.end(),
                          [](std::int64_t n) { return n >= 2; })) {
    report.error("plan.mixed_pools",
                 "needs a replica count of 2 or more to split into prefill and decode "
                 "instances (--search-replicas)");
  } else {
    for (const PlanServeLayout& l : sp.layouts) {
      if (!l.disaggregated()) continue;
      for (const PlanServePool& p : pools) {
        for (const PlanServePool& d : pools) {
          if (p != d) mixed.push_back({l.prefill, l.decode, p, d});
        }
      }
    }
  }
  return mixed;
}

// A list of sizes ("0" alone stands for none): parsed (parse_bytes refuses a negative one),
// each listed once; problems under `field`.
std::vector<Bytes> sizes_of(const std::vector<std::string>& texts, std::string_view field,
                            ValidationReport& report) {
  std::vector<Bytes> out;
  std::set<std::int64_t> seen;
  for (const std::string& t : texts) {
    Bytes b(0);
    if (t != "0") {
      try {
        b = parse_bytes(t);
      } catch (const UnitError& e) {
        report.error(std::string(field), fmt::format("'{}': {}", t, e.what()));
        continue;
      }
    }
    if (!seen.insert(b.count()).second) {
      report.error(std::string(field), fmt::format("{} is listed twice", t));
    } else {
      out.push_back(b);
    }
  }
  return out;
}

// The KV tier axis (PlanServeSpace::kv_tiers): host sizes (default the base's) x disk sizes
// (default the base's), a host size of 0 taking no disk.
std::vector<PlanServeKvTier> kv_tiers_of(const PlanServeRequest& q, ValidationReport& report) {
  const ServeOptions& o = q.options;
  std::vector<Bytes> hosts = q.kv_offloading_sizes.empty()
                                 ? std::vector<Bytes>{o.kv_offloading_size}
                                 : sizes_of(q.kv_offloading_sizes, "plan.kv_offloading_sizes",
                                            report);
  std::vector<Bytes> disks =
      q.kv_offloading_disk_sizes.empty()
          ? std::vector<Bytes>{o.kv_offloading_disk_size}
          : sizes_of(q.kv_offloading_disk_sizes, "plan.kv_offloading_disk_sizes", report);
  const auto nonzero = [](Bytes b) { return b > Bytes(0); };
  const bool any_host = std::any_of(hosts.begin(), hosts.end(), nonzero);
  const bool any_disk = std::any_of(disks.begin(), disks.end(), nonzero);
  if (!q.kv_offloading_sizes.empty() && any_host && !o.enable_prefix_caching) {
    report.error("plan.kv_offloading_sizes",
                 "a host KV tier needs prefix caching (--enable-prefix-caching): the tier is "
                 "looked up by prefix block hashes");
  }
  if ((!q.kv_offloading_sizes.empty() || !q.kv_offloading_disk_sizes.empty()) &&
      o.kv_offloading_backend == "lmcache") {
    // NOTE: LMCache sizes its tier from its own configuration when --kv-offloading-size is
    // 0, so a 0 on the axis would not mean "no tier"; searching its sizes is not supported.
    report.error("plan.kv_offloading_sizes",
                 "the KV tier search is for the native backend: give LMCache's tier size with "
                 "--kv-offloading-size and plan without --search-kv-offloading-size");
  }
  if (!q.kv_offloading_disk_sizes.empty() && any_disk) {
    if (!any_host) {
      report.error("plan.kv_offloading_disk_sizes",
                   "a disk tier sits behind a host tier: give a non-zero "
                   "--search-kv-offloading-size (or --kv-offloading-size) too");
    }
    if (o.kv_offloading_disk_read_bandwidth.empty() ||
        o.kv_offloading_disk_write_bandwidth.empty()) {
      report.error("plan.kv_offloading_disk_sizes",
                   "a disk tier needs --kv-offloading-disk-read-bandwidth and "
                   "--kv-offloading-disk-write-bandwidth (e.g. 7GB/s and 5GB/s; measure your "
                   "disk, e.g. with fio)");
    }
  }
  std::vector<PlanServeKvTier> tiers;
  for (const Bytes h : hosts) {
    if (h == Bytes(0)) {
      tiers.push_back({Bytes(0), Bytes(0)});
      continue;
    }
    for (const Bytes d : disks) tiers.push_back({h, d});
  }
  if (tiers.empty()) tiers.push_back({});  // every size refused: reported above
  return tiers;
}

}  // namespace

PlanServeRow plan_serve_row(const PlanServeSpace& sp, std::size_t index) {
  PlanServeRow r;
  r.index = static_cast<std::int64_t>(index);
  const bool mixed = index >= sp.product_size();
  std::size_t k = mixed ? index - sp.product_size() : index;
  const auto take = [&k](std::size_t n) {
    const std::size_t v = k % n;
    k /= n;
    return v;
  };
  r.kv_tier = sp.kv_tiers[take(sp.kv_tiers.size())];
  r.max_num_batched_tokens = sp.max_num_batched_tokens[take(sp.max_num_batched_tokens.size())];
  r.max_num_seqs = sp.max_num_seqs[take(sp.max_num_seqs.size())];
  r.kv_cache_dtype = sp.kv_cache_dtypes[take(sp.kv_cache_dtypes.size())];
  r.quantization = sp.quantizations[take(sp.quantizations.size())];
  if (mixed) {
    const PlanServeMixedLayout& m = sp.mixed_layouts[take(sp.mixed_layouts.size())];
    r.replicas = 0;
    r.prefill_instances = m.prefill;
    r.decode_instances = m.decode;
    r.pp = 1;
    r.gpu = m.decode_pool.gpu;
    r.tp = m.decode_pool.tp;
    r.prefill_gpu = m.prefill_pool.gpu;
    r.prefill_tp = m.prefill_pool.tp;
    return r;
  }
  const PlanServeLayout& layout = sp.layouts[take(sp.layouts.size())];
  r.replicas = layout.replicas;
  r.prefill_instances = layout.prefill;
  r.decode_instances = layout.decode;
  r.pp = sp.pps[take(sp.pps.size())];
  r.tp = sp.tps[take(sp.tps.size())];
  r.gpu = sp.gpus[take(sp.gpus.size())];
  return r;
}

PlanServeSpace plan_serve_space(const PlanServeRequest& q) {
  ValidationReport report;
  PlanServeSpace sp;
  const std::filesystem::path topologies = checked_project_root() / "topologies";
  const std::vector<std::string> known = io::device_ids(topologies);
  const ServeOptions& o = q.options;
  // A list not given: the base's single value when a flag or the scenario set it, else the
  // default.
  const auto ints = [&](const std::vector<std::int64_t>& list, std::string_view path,
                        std::int64_t value, std::vector<std::int64_t> fallback) {
    if (!list.empty()) return list;
    return o.given(path) ? std::vector<std::int64_t>{value} : fallback;
  };
  sp.gpus = q.gpus.empty() ? std::vector<std::string>{o.gpu} : q.gpus;
  for (std::string& g : sp.gpus) g = plan_serve_gpu_id(g);
  check_names(sp.gpus, "plan.gpus", [&](const std::string& g) {
    return std::find(known.begin(), known.end(), g) != known.end()
               ? std::string()
               : fmt::format("unknown GPU '{}'; valid: {}", g, fmt::join(known, ", "));
  }, report);
  sp.tps = ints(q.tps, "engine.tp", o.tp, {1, 2, 4, 8});
  sp.pps = ints(q.pps, "engine.pp", o.pp, {1});
  sp.replicas = ints(q.replicas, "serving.replicas", o.replicas, {1, 2, 4, 8});
  check_ints(q.tps, "plan.tps", 1, 64, report);
  check_ints(q.pps, "plan.pps", 1, 64, report);
  check_ints(q.replicas, "plan.replicas", 1, 1024, report);
  sp.layouts = layouts_of(sp.replicas, q.search_disaggregated);
  if (q.search_mixed_pools) sp.mixed_layouts = mixed_layouts_of(sp, q.search_disaggregated, report);
  sp.quantizations =
      q.quantizations.empty() ? std::vector<std::string>{o.quantization} : q.quantizations;
  check_names(sp.quantizations, "plan.quantizations", [](const std::string& x) {
    try {
      (void)model::make_weight_format(DType::kBf16, x);
    } catch (const ConfigError&) {
      return fmt::format("unknown quantization '{}'; valid: {}", x, model::quantization_names());
    }
    return std::string();
  }, report);
  sp.kv_cache_dtypes =
      q.kv_cache_dtypes.empty() ? std::vector<std::string>{o.kv_cache_dtype} : q.kv_cache_dtypes;
  check_names(sp.kv_cache_dtypes, "plan.kv_cache_dtypes", [](const std::string& x) {
    const std::optional<DType> d = dtype_from_string(x);
    if (x == "auto" || (d && *d != DType::kInt8 && *d != DType::kInt4)) return std::string();
    return fmt::format("unknown KV-cache dtype '{}'; valid: auto, bf16, fp16, fp32, fp8", x);
  }, report);
  sp.max_num_seqs = ints(q.max_num_seqs, "engine.max_num_seqs", o.max_num_seqs, {0});
  sp.max_num_batched_tokens = ints(q.max_num_batched_tokens, "engine.max_num_batched_tokens",
                                   o.max_num_batched_tokens, {0});
  check_ints(q.max_num_seqs, "plan.max_num_seqs", 1, 1 << 20, report);
  check_ints(q.max_num_batched_tokens, "plan.max_num_batched_tokens", 1, 1 << 24, report);
  sp.kv_tiers = kv_tiers_of(q, report);
  if (!q.max_host_memory.empty()) {
    try {
      if (parse_bytes(q.max_host_memory) <= Bytes(0)) {
        report.error("plan.max_host_memory",
                     fmt::format("must be a positive size, got {}", q.max_host_memory));
      }
    } catch (const UnitError& e) {
      report.error("plan.max_host_memory", fmt::format("'{}': {}", q.max_host_memory, e.what()));
    }
  }
  throw_if_errors(report);
  if (sp.size() > 1'000'000) {
    throw ConfigError("plan", fmt::format("the search has {} configurations; at most 1000000",
                                          sp.size()));
  }
  return sp;
}

}  // namespace vramsim::run
