// The run layer of `vramsim plan serve`: the cheapest serving deployments that meet p99 SLOs for
// a given load, found by search.
//
// The search is the Cartesian product of
//   GPU x TP x PP x layout x weight quantization x KV-cache dtype x max_num_seqs x
//   max_num_batched_tokens
// where a layout is N aggregated replicas for each N of the replicas list and, with
// --search-disaggregated, every split of those N instances into X prefill and N - X decode
// instances (xPyD, serving::Disaggregation: 2 -> 1P1D; 4 -> 1P3D, 2P2D, 3P1D), both pools on
// the row's GPU and TP, so that aggregated and disaggregated deployments of the same GPU count
// are ranked together by cost and SLOs.
// With --search-mixed-pools (which needs --search-disaggregated) the pools may also differ
// ("does a cheaper decode pool do?"): after the product come the mixed rows, every xPyD split
// (as above) x every ordered pair of distinct pools (prefill GPU, prefill TP) != (decode GPU,
// decode TP) drawn from --search-gpu x --search-tp x quantization x KV-cache dtype x
// max_num_seqs x max_num_batched_tokens, PP 1 (a disaggregated pool runs without PP). That is
//   splits x (G x T) x (G x T - 1) x Q x K x S x B
// more rows for G GPUs and T TP degrees (2 GPUs, TP 1,2 and --search-replicas 2: 1 x 4 x 3 =
// 12). The product's rows, and so a search without the option, are unchanged.
// With --search-kv-offloading-size (and --search-kv-offloading-disk-size) the KV offload tiers
// are one more axis, the fastest: every row of the product and of the mixed layouts is tried
// with each tier (PlanServeSpace::kv_tiers: host size 0 is "no tier"; each non-zero host size
// is crossed with each disk size), so that "the same layout with a 200 GiB host tier" sits
// beside "twice the GPUs" in the same ranking. A tier costs no GPU-hours (host memory and a
// local disk come with the node): it competes on the SLOs and on the GPUs it saves. Every
// vLLM instance of a row holds its own tier (per DP rank), so a row needs
//   tier host bytes x instances x data-parallel size
// of host memory (PlanServeRow::host_memory_bytes); with --max-host-memory a row needing more
// is skipped with that reason. Without it, the node sheet of each row's GPU (hardware.topology's
// node, else the GPU's default sheet: io::default_node_of_device) bounds the row per node when
// it records host_memory (DGX H100: 2 TiB): the engines of a row placed on one node share its
// memory, so the fullest node's tiers (hardware::kv_tier_host_bytes_per_node: an 8-GPU node
// holds 8 / (TP x PP) engines) must fit it; a row above is skipped the same way. A node sheet
// without host_memory (generic pcie-8x, ...) bounds nothing. PlanServeAnswer::host_memory_bound
// says which bound applied. Without the lists the axis is the base's one tier (none
// by default), and the search, its rows and its output are those of a search before them.
// over the base options' workload (a trace or a synthetic stream at its rate, or closed-loop
// clients at --max-concurrency) and objectives (--slo-ttft / --slo-tpot / --slo-e2e, each a p99
// target, as capacity serve and compare serve take them; none given: compare serve's defaults,
// 2 s TTFT and 100 ms TPOT). Everything else of the base (model, dtype, scheduler, router,
// prefix caching, ...) is kept as given.
//
// Each configuration is first sized by the budget (prepare_serve): one the model or the engine
// forbids (TP not dividing the heads, PP above the layers, a quantization the GPU lacks) or
// whose weights and KV cache do not fit is skipped with its reason, not simulated; one using
// more GPUs than --max-gpus is skipped before the budget. Each other configuration replays the
// workload once at the target. It "meets" when every p99 objective holds and a request finished
// (the definition capacity serve's search uses). With early stop on (the default), a replay ends
// as soon as one p99 is sure to be missed (serving::P99Stop): the verdict is exactly the full
// replay's; the metrics of such a row are those of the requests finished before the stop.
//
// Cost: GPUs (TP x PP x replicas; a mixed layout: each pool's instances x TP at its own GPU's
// price) x the GPU's price per hour from topologies/prices.toml (or
// --gpu-prices FILE, with --gpu-price GPU=USD over either); a GPU without a row there is unpriced: its rows have no cost (NaN / null),
// never 0, and take no part in the cheapest list or the Pareto front. Cost per million
// SLO-meeting output tokens = usd_per_hour / 3600 / (output tokens of the requests within every
// SLO per second of simulated time) x 1e6.
//
// Reported: the cheapest configurations that meet the SLOs (cost per hour, then p99 E2E, then
// index), the Pareto front of cost per hour against p99 E2E latency (the whole request as a user
// waits for it) over the priced configurations that meet the SLOs, and, for those (and the
// closest one when none meets), the capacity (capacity serve's search: the largest rate, or
// client count for a closed loop, meeting the SLOs) and what binds there (compare serve's why).
//
// Configurations run on local threads and, under mpirun or srun in a build with MPI, over ranks
// (sweep_parallel.hpp), keyed by their index, so the answer is the same whatever the number of
// threads or ranks. With an output file, finished configurations are journaled
// (`<out>.journal`) and --resume reuses those of an interrupted run of the same search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/enum_table.hpp"
#include "sim/core/units.hpp"
#include "sim/run/capacity_serve_run.hpp"
#include "sim/run/compare_serve_run.hpp"
#include "sim/run/serve_options.hpp"

namespace vramsim::run {

/// The values tried for each searched setting, in search order (every list non-empty).
/// max_num_seqs / max_num_batched_tokens 0 stand for vLLM's default for the GPU.
/// A layout of the instances: `replicas` aggregated replicas (prefill 0), or `prefill` prefill
/// and `decode` decode instances (replicas 0).
struct PlanServeLayout {
  std::int64_t replicas = 0, prefill = 0, decode = 0;
  bool disaggregated() const { return prefill > 0; }
  std::int64_t instances() const { return disaggregated() ? prefill + decode : replicas; }
  friend bool operator==(const PlanServeLayout&, const PlanServeLayout&) = default;
};

/// One pool of a mixed disaggregated layout: its GPU and TP.
struct PlanServePool {
  std::string gpu;
  std::int64_t tp = 1;
  friend bool operator==(const PlanServePool&, const PlanServePool&) = default;
};

/// A disaggregated layout whose pools differ (--search-mixed-pools): `prefill` instances of
/// `prefill_pool`, `decode` instances of `decode_pool`.
struct PlanServeMixedLayout {
  std::int64_t prefill = 0, decode = 0;
  PlanServePool prefill_pool, decode_pool;
};

/// One KV offload tier of the search: the host-memory tier per vLLM instance (0: none) and the
/// disk tier behind it (0: none), as --kv-offloading-size / --kv-offloading-disk-size take them.
struct PlanServeKvTier {
  Bytes host, disk;
  friend bool operator==(const PlanServeKvTier&, const PlanServeKvTier&) = default;
};


struct PlanServeSpace {
  std::vector<std::string> gpus;
  std::vector<std::int64_t> tps, pps, replicas;
  /// The replicas list as aggregated layouts, in its order, then (with --search-disaggregated)
  /// the xPyD splits of each N >= 2 of it, X ascending: the searched axis.
  std::vector<PlanServeLayout> layouts;
  std::vector<std::string> quantizations, kv_cache_dtypes;
  std::vector<std::int64_t> max_num_seqs, max_num_batched_tokens;
  /// The KV offload tiers tried (the fastest axis): the base's one tier (none: {0, 0}) unless
  /// --search-kv-offloading-size gives the host sizes; each non-zero host size then takes each
  /// disk size of --search-kv-offloading-disk-size (default the base's), in list order.
  std::vector<PlanServeKvTier> kv_tiers = {PlanServeKvTier{}};
  /// Whether any tier is searched or set: the output then shows the tier columns.
  bool has_kv_tiers() const;
  /// --search-mixed-pools: the mixed layouts, split slowest (the order of `layouts`), then the
  /// prefill pool, then the decode pool (each GPU-major in list order, then TP); pairs of equal
  /// pools left out (the product has them). Empty without the option.
  std::vector<PlanServeMixedLayout> mixed_layouts;
  bool mixed_pools() const { return !mixed_layouts.empty(); }
  /// The rows of the product (GPU x TP x PP x layout x ...), indices [0, product_size()).
  std::size_t product_size() const;
  /// The rows of the mixed layouts (x quantization x KV dtype x scheduler limits), indices
  /// [product_size(), size()).
  std::size_t mixed_size() const;
  std::size_t size() const { return product_size() + mixed_size(); }
};

/// What to search. The lists are as the user gave them (empty: the default); problems with them
/// are reported under "plan.<name>" (the CLI names them by flag).
struct PlanServeRequest {
  ServeOptions options;  // the base: model, workload, objectives, the rest of the engine
  std::vector<std::string> gpus;                      // plan.gpus; default: options.gpu
  std::vector<std::int64_t> tps;                      // plan.tps; default 1,2,4,8 up to the node
  std::vector<std::int64_t> pps;                      // plan.pps; default 1
  std::vector<std::int64_t> replicas;                 // plan.replicas; default 1,2,4,8
  bool search_disaggregated = false;                  // plan.disaggregated: xPyD layouts too
  /// plan.mixed_pools: xPyD layouts whose pools take different GPUs / TPs of the lists
  /// (PlanServeSpace::mixed_layouts); needs search_disaggregated.
  bool search_mixed_pools = false;
  std::vector<std::string> quantizations;             // plan.quantizations; default as given
  std::vector<std::string> kv_cache_dtypes;           // plan.kv_cache_dtypes; default auto
  std::vector<std::int64_t> max_num_seqs;             // plan.max_num_seqs; default vLLM's
  std::vector<std::int64_t> max_num_batched_tokens;   // plan.max_num_batched_tokens; vLLM's
  /// plan.kv_offloading_sizes: host-memory KV tier sizes to try ("0" or "0B": none; "200GiB"),
  /// each as --kv-offloading-size takes it; default the base's. Needs prefix caching.
  std::vector<std::string> kv_offloading_sizes;
  /// plan.kv_offloading_disk_sizes: disk tier sizes to try behind each non-zero host size
  /// ("0": none); default the base's. A non-zero one needs the base's disk bandwidths.
  std::vector<std::string> kv_offloading_disk_sizes;
  /// plan.max_host_memory: the host memory the deployment's KV tiers may take, every instance
  /// together ("2TiB"); rows needing more are skipped. Empty: no limit.
  std::string max_host_memory;
  std::optional<std::int64_t> max_gpus;               // plan.max_gpus: TP x PP x replicas cap
  std::filesystem::path prices_file;  // plan.gpu_prices; empty: topologies/prices.toml
  /// plan.gpu_price: "GPU=USD" entries (USD per GPU-hour, > 0) that replace or add the price
  /// table's row for a searched GPU (the id as --search-gpu names it, case ignored).
  std::vector<std::string> gpu_price;
  std::int64_t top = 5;               // plan.top: cheapest configurations reported, >= 1
  bool early_stop = true;             // end a replay once a p99 objective is sure to be missed
  bool capacity = true;               // capacity and why of the reported configurations
  double precision = 0.05;            // of each capacity search (capacity serve's)
  int max_runs = 16;                  // simulations per capacity search
  int jobs = 0;                       // configurations simulated at once; 0: every core
  std::filesystem::path out;          // results file (and its journal); empty: none
  bool resume = false;
  std::string command_line;
};

enum class ServePlanStatus {
  kMeets,       // simulated; every p99 objective holds
  kMisses,      // simulated; some p99 objective is missed
  kDoesNotFit,  // skipped: the weights or a KV cache do not fit (budget)
  kInvalid,     // skipped: not a configuration the model or engine allows
  kOverMaxGpus, // skipped: more GPUs than --max-gpus
  kOverMaxHostMemory,  // skipped: KV tiers needing more host memory than --max-host-memory
                       // (or, without it, a node sheet's host_memory)
};
inline constexpr auto kServePlanStatuses = enum_table<ServePlanStatus>({
    {ServePlanStatus::kMeets, "meets", "simulated; every p99 objective holds"},
    {ServePlanStatus::kMisses, "misses", "simulated; a p99 objective is missed"},
    {ServePlanStatus::kDoesNotFit, "skipped_does_not_fit", "the weights or KV cache do not fit"},
    {ServePlanStatus::kInvalid, "skipped_invalid", "not a configuration the model allows"},
    {ServePlanStatus::kOverMaxGpus, "skipped_max_gpus", "more GPUs than --max-gpus"},
    {ServePlanStatus::kOverMaxHostMemory, "skipped_max_host_memory",
     "KV tiers needing more host memory than --max-host-memory or the node sheet's"},
});
static_assert(covers_every_enumerator(kServePlanStatuses) && names_are_unique(kServePlanStatuses));
std::string_view to_string(ServePlanStatus s);
std::optional<ServePlanStatus> serve_plan_status_from_string(std::string_view s);

/// One configuration of the product and what came of it. Metrics are zero for skipped rows.
struct PlanServeRow {
  std::int64_t index = 0;  // gpu slowest, then tp, pp, replicas, quantization, kv dtype,
                           // max_num_seqs, max_num_batched_tokens fastest; then the mixed rows
                           // (PlanServeSpace::mixed_layouts slowest); the KV tier is
                           // faster still (PlanServeSpace::kv_tiers)
  std::string gpu;  // disaggregated: the decode pool's (and the prefill pool's unless mixed)
  std::int64_t tp = 1, pp = 1, replicas = 1;  // tp: as gpu
  /// Disaggregated (prefill_instances > 0; replicas then 0): the pools' instances.
  std::int64_t prefill_instances = 0, decode_instances = 0;
  /// A mixed layout (--search-mixed-pools): the prefill pool's GPU and TP, which then differ
  /// from gpu / tp in one or both; "" and 0 otherwise.
  std::string prefill_gpu;
  std::int64_t prefill_tp = 0;
  std::string quantization, kv_cache_dtype;
  /// As searched (0: vLLM's default), and as the engine resolved them (0 when not sized).
  std::int64_t max_num_seqs = 0, max_num_batched_tokens = 0;
  std::int64_t engine_max_num_seqs = 0, engine_max_num_batched_tokens = 0;
  /// The KV offload tier of each instance as searched ({0, 0}: none).
  PlanServeKvTier kv_tier;
  /// Host memory (disk) the row's KV tiers take, every instance and DP rank together, as the
  /// budget sizes them (whole blocks); 0 without a tier or when not sized.
  Bytes host_memory_bytes, disk_bytes;
  /// Shares of the prompt tokens looked up found on the GPU, in the host tier and on disk
  /// (they add up to the prefix hit rate); 0 when not simulated.
  double gpu_prefix_hit_rate = 0.0, cpu_prefix_hit_rate = 0.0, disk_prefix_hit_rate = 0.0;
  ServePlanStatus status = ServePlanStatus::kInvalid;
  std::string reason;  // why skipped; for a miss, the objectives missed
  std::int64_t num_gpu_blocks = 0;  // per replica
  bool stopped_early = false;
  std::string stopped_on;  // "ttft", "tpot", "e2e" when stopped early
  std::int64_t num_finished = 0;
  std::int64_t num_good = 0;
  Duration ttft_p99, tpot_p99, e2e_p99;
  double simulated_s = 0.0;
  double output_tokens_per_s = 0.0;
  double goodput_requests_per_s = 0.0;
  double slo_output_tokens_per_s = 0.0;  // output tokens of requests within every SLO, per s
  /// The worst p99 against its target (max over objectives of p99 / target): <= 1 meets.
  double slo_ratio = 0.0;
  /// USD per GPU-hour of `gpu` from the price table; nullopt: unpriced (filled after the
  /// search).
  std::optional<double> usd_per_gpu_hour;
  /// A mixed layout: USD per GPU-hour of prefill_gpu; nullopt: unpriced or not mixed.
  std::optional<double> prefill_usd_per_gpu_hour;

  bool mixed() const { return !prefill_gpu.empty(); }
  /// The prefill pool's GPUs (0 unless disaggregated): prefill_instances x its TP x pp.
  std::int64_t prefill_gpus() const {
    return prefill_instances * (mixed() ? prefill_tp : tp) * pp;
  }
  /// The GPUs of `gpu`: every GPU of the row but a mixed layout's prefill pool.
  std::int64_t decode_gpus() const {
    return tp * pp * (prefill_instances > 0 ? decode_instances : replicas);
  }
  std::int64_t num_gpus() const { return prefill_gpus() + decode_gpus(); }
  bool simulated() const {
    return status == ServePlanStatus::kMeets || status == ServePlanStatus::kMisses;
  }
  /// num_gpus x price (a mixed layout: each pool's GPUs x its GPU's price); nullopt when
  /// unpriced (a mixed layout: when either pool's GPU is).
  std::optional<double> usd_per_hour() const;
  /// usd_per_hour per million SLO-meeting output tokens; nullopt when unpriced or none met.
  std::optional<double> usd_per_million_slo_output_tokens() const;
  /// The configuration as `vramsim serve` flags: "--gpu h100-sxm --tp 2 --pp 1 --replicas 2
  /// --quantization fp8 --kv-cache-dtype auto" (--prefill-instances X --decode-instances Y in
  /// place of --replicas when disaggregated; then --prefill-gpu G --prefill-tp T for a mixed
  /// layout, whose --gpu / --tp are the decode pool's), the scheduler limits when searched and
  /// --kv-offloading-size (--kv-offloading-disk-size) when the row has a tier.
  std::string flags() const;
  /// The KV tier as a person reads it: "none", "200GiB", "200GiB + disk 1TiB".
  std::string kv_tier_text() const;
  /// The pools as a person reads them: "h100-sxm TP 2" for one pool type; a mixed layout
  /// "P h200 TP 2 x1 / D h100-sxm TP 1 x1" (GPU, TP, instances of each pool).
  std::string pools_text() const;
};

struct PlanServeCounts {
  std::int64_t num_configs = 0;
  std::int64_t num_simulated = 0;
  std::int64_t num_meet = 0;
  std::int64_t num_miss = 0;
  std::int64_t num_stopped_early = 0;  // of the misses
  std::int64_t num_skipped_does_not_fit = 0;
  std::int64_t num_skipped_invalid = 0;
  std::int64_t num_skipped_max_gpus = 0;
  std::int64_t num_skipped_max_host_memory = 0;
  std::int64_t num_meet_unpriced = 0;
  std::int64_t num_resumed = 0;
};

/// A reported configuration's capacity and what binds there.
struct PlanServeDetail {
  CapacityAxis axis = CapacityAxis::kRate;
  double capacity_requests_per_s = 0.0;  // kRate: the largest rate meeting the SLOs (0: none)
  std::int64_t capacity_concurrency = 0;  // kMaxConcurrency: the most clients meeting them
  double bracket_low = 0.0, bracket_high = 0.0;  // of the search's axis (0 high: none missed)
  std::int64_t num_simulations = 0;
  std::string note;
  Bottleneck why;
};

struct PlanServeAnswer {
  bool root = true;  // whether this process holds the answer (rank 0)
  std::string model;
  std::string workload;             // the target workload's description
  bool closed_loop = false;         // closed-loop clients (capacity over the client count)
  serving::SloSpec slo;             // the p99 objectives
  bool default_slo = false;
  std::string prices_source;        // the price table used
  /// Where the KV tiers' host memory bound came from, as a person reads it: --max-host-memory
  /// (the deployment's tiers together), the node sheets' host_memory (per node, each searched
  /// GPU's node named with its figure), or none. "" when the search has no KV tier.
  std::string host_memory_bound;
  PlanServeSpace space;
  std::vector<PlanServeRow> rows;   // every configuration, by index
  PlanServeCounts counts;
  std::vector<std::size_t> cheapest;  // meeting, priced: cheapest first, at most top
  std::vector<std::size_t> pareto;    // meeting, priced: cost/h against p99 E2E, by cost
  std::optional<std::size_t> closest; // none meets: the smallest slo_ratio
  std::map<std::size_t, PlanServeDetail> details;  // for cheapest, pareto and closest
};

/// The GPUs of a node, the most TP the default list tries (vLLM runs TP within a node; the
/// 8-GPU HGX/DGX and MI300X platforms).
inline constexpr std::int64_t kPlanServeNodeGpus = 8;

/// The space the request asks for. A list not given is the base's value when a flag or the
/// scenario set it, else its default: the base GPU; TP 1, 2, 4, 8; PP 1; replicas 1, 2, 4, 8;
/// the base quantization (none); KV dtype auto; vLLM's scheduler limits for the GPU (0).
/// Throws ConfigError for a bad list, naming it ("plan.tps": a value out of range or listed
/// twice, an unknown GPU, quantization or KV dtype), and for --search-mixed-pools
/// ("plan.mixed_pools") without --search-disaggregated, without two pools to mix or without
/// a replica count of 2 or more to split. KV tiers: a size that is not a size with its unit or
/// is negative or listed twice ("plan.kv_offloading_sizes", "plan.kv_offloading_disk_sizes"),
/// a host tier without prefix caching, a disk size without a non-zero host size or without the
/// base's disk bandwidths, and a bad --max-host-memory ("plan.max_host_memory"). Built,
/// layouts and all, in plan_serve_space.cpp.
PlanServeSpace plan_serve_space(const PlanServeRequest& q);

/// The Pareto front of `rows` (indices, in the order of `candidates`' rows by cost): the priced
/// rows of `candidates` no other beats in both usd_per_hour and p99 E2E (at least as good in
/// both, better in one; of exact ties the lowest index stands), cheapest first.
std::vector<std::size_t> plan_serve_pareto(const std::vector<PlanServeRow>& rows,
                                           const std::vector<std::size_t>& candidates);

struct PlanServeCallbacks {
  std::function<void(std::size_t done, std::size_t total)> progress;
  std::function<void(const std::string& message)> warning;
};

/// Runs the search. Throws ConfigError (rank 0) for bad input: the base options' problems, a bad
/// list, a bad price table. A search where nothing meets the SLOs is an answer (cheapest empty,
/// closest set when anything was simulated).
PlanServeAnswer plan_serve(const PlanServeRequest& q, const PlanServeCallbacks& cb = {});

}  // namespace vramsim::run
