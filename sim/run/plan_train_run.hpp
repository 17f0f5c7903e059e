// The run layer of `vramsim plan train`: the fastest training plans that fit, found by search.
//
// The search is the Cartesian product of
//   EP x CP x strategy x TP x PP x micro-batch x checkpointing policy x optimizer offload
// over the base options' GPU count, every plan at the base options' global batch (sequences per
// step), so that step time and tokens/s compare like for like. A plan's gradient accumulation
// steps (micro-batches per step per data-parallel rank) are global_batch / (dp * micro_batch);
// a plan where that is not a whole number is skipped and counted, as are plans the model or the
// cluster does not allow (TP not dividing the heads, PP above the layers, EP on a dense model)
// and the sharded strategies at CP x DP = 1 (nothing to shard: the same plan as DDP). CP and EP
// are tried only at the degrees listed (default 1: --search-cp, --search-ep), context
// parallelism with the base's --cp-comm. Everything else of the base
// (model, GPU, precision, optimizer, sequence length, LoRA / QLoRA settings, topology,
// calibration) is kept as given.
//
// Each plan is one simulated step (training::simulate_training, as train's searches run them:
// one step, no timeline). Plans run on local threads and, under mpirun or srun in a build with
// MPI, over ranks (sweep_parallel.hpp), keyed by their index in the product, so the answer is
// the same whatever the number of threads or ranks. With an output file, finished plans are
// journaled (`<out>.journal`, sweep_output.hpp's Journal) and --resume reuses those of an
// interrupted run of the same search.
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
#include "sim/run/train_options.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::run {

/// The values tried for each searched setting, in search order (every list non-empty).
struct PlanTrainSpace {
  std::vector<training::Strategy> strategies;
  std::vector<std::int64_t> tps;
  std::vector<std::int64_t> pps;
  std::vector<std::int64_t> micro_batches;
  std::vector<training::Checkpointing> checkpointing;
  std::vector<bool> offload_optimizer;
  std::vector<std::int64_t> cps;  // context-parallel degrees
  std::vector<std::int64_t> eps;  // expert-parallel degrees
  /// Plans in the product.
  std::size_t size() const;
};

/// What to search. The lists are as the user gave them (empty: the default of plan_train_space);
/// problems with them are reported under "plan.<name>" (the CLI names them by flag).
struct PlanTrainRequest {
  TrainOptions options;  // the base; batch.global_batch is required
  std::vector<std::string> strategies;     // plan.strategies
  std::vector<std::int64_t> tps;           // plan.tps
  std::vector<std::int64_t> pps;           // plan.pps
  std::vector<std::int64_t> micro_batches; // plan.micro_batches
  std::vector<std::string> checkpointing;  // plan.checkpointing
  std::vector<std::string> offload;        // plan.offload: "no", "yes"
  std::vector<std::int64_t> cps;           // plan.cps (empty: 1)
  std::vector<std::int64_t> eps;           // plan.eps (empty: 1)
  std::int64_t top = 5;                    // plan.top: fastest plans reported, >= 1
  int jobs = 0;                            // plans simulated at once here; 0: every core
  std::filesystem::path out;               // results file (and its journal); empty: none
  bool resume = false;                     // reuse an interrupted run's journal (needs out)
  std::string command_line;                // recorded in the results file
};

enum class PlanStatus {
  kFits,          // simulated; every device fits
  kDoesNotFit,    // simulated; some device's peak exceeds its memory
  kBatch,         // skipped: global batch not a multiple of dp x micro-batch
  kInvalid,       // skipped: not a plan for this model or cluster
  kSameAsDdp,     // skipped: a sharded strategy at DP = 1
};
inline constexpr auto kPlanStatuses = enum_table<PlanStatus>({
    {PlanStatus::kFits, "fits", "simulated; every device fits"},
    {PlanStatus::kDoesNotFit, "does_not_fit", "simulated; a device's peak exceeds its memory"},
    {PlanStatus::kBatch, "skipped_batch", "global batch not a multiple of dp x micro-batch"},
    {PlanStatus::kInvalid, "skipped_invalid", "not a plan for this model or cluster"},
    {PlanStatus::kSameAsDdp, "skipped_same_as_ddp", "a sharded strategy at DP 1 is DDP"},
});
static_assert(covers_every_enumerator(kPlanStatuses) && names_are_unique(kPlanStatuses));
std::string_view to_string(PlanStatus s);
std::optional<PlanStatus> plan_status_from_string(std::string_view s);

/// One plan of the product and what came of it. Memory is the binding device's (the highest
/// peak reserved + non-allocator memory); zeros for skipped plans.
struct PlanTrainRow {
  std::int64_t index = 0;  // in the product: ep slowest, then cp, strategy, tp, pp,
                           // micro-batch, checkpointing, offload fastest
  training::Strategy strategy = training::Strategy::kDdp;
  std::int64_t tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  std::int64_t micro_batch = 1;
  std::int64_t num_micro_batches = 0;  // gradient accumulation steps; 0 when skipped for batch
  training::Checkpointing checkpointing;
  bool offload_optimizer = false;
  PlanStatus status = PlanStatus::kInvalid;
  std::string reason;  // why skipped ("parallel.tp: ..."), "" otherwise
  std::int64_t binding_stage = 0;
  Bytes peak;            // peak reserved + non-allocator memory
  Bytes peak_allocated;
  Bytes capacity;        // the device's memory
  Bytes headroom;        // capacity - peak (negative when it does not fit)
  Duration step_time;
  double tokens_per_s = 0.0;
  double mfu = 0.0;

  bool simulated() const { return status == PlanStatus::kFits || status == PlanStatus::kDoesNotFit; }
  /// The plan as `vramsim train` flags: "--strategy zero2 --tp 2 --pp 1 --micro-batch 4
  /// --checkpointing selective" (and "--offload-optimizer", "--cp N", "--ep N" when used).
  std::string flags() const;
};

struct PlanTrainCounts {
  std::int64_t num_plans = 0;      // the product's size
  std::int64_t num_simulated = 0;  // fits + does not fit
  std::int64_t num_fit = 0;
  std::int64_t num_not_fit = 0;
  std::int64_t num_skipped_batch = 0;
  std::int64_t num_skipped_invalid = 0;
  std::int64_t num_skipped_same_as_ddp = 0;
  std::int64_t num_resumed = 0;  // simulated plans taken from an earlier run's journal
};

struct PlanTrainAnswer {
  /// Whether this process holds the answer (rank 0, or the only process); the rest is empty on
  /// other ranks.
  bool root = true;
  training::TrainingSetup base;  // model, device, links; the plan as the options resolved it
  PlanTrainSpace space;
  std::int64_t global_batch = 0;
  std::vector<PlanTrainRow> rows;  // every plan of the product, by index
  PlanTrainCounts counts;
  /// Indices into rows: the fitting plans, fastest first (step time, then more headroom, then
  /// index), at most `top`, one per group of equivalent plans.
  std::vector<std::size_t> fastest;
  /// Fitting plans that differ only in strategy and simulate to the same step time and memory
  /// (ZeRO-3, FSDP FULL_SHARD and HSDP within one node, say): the first of each group by
  /// index stands for the others (their indices, ascending), which `fastest` and `pareto`
  /// leave out.
  std::map<std::size_t, std::vector<std::size_t>> equivalent;
  /// Indices into rows: the fitting plans no other fitting plan beats in both step time and
  /// headroom (at least as good in both, better in one), by step time.
  std::vector<std::size_t> pareto;
  /// When nothing fits: the simulated plan closest to fitting (least shortfall), else nullopt.
  std::optional<std::size_t> closest;
};

/// The space the request asks for, defaults filled in: strategies ddp, zero1, zero2, zero3,
/// fsdp-full, fsdp-grad-op, hsdp; TP every divisor of num_gpus up to the GPUs per node; PP every
/// divisor of num_gpus; micro-batches 1, 2, 4, ... up to min(64, global batch); checkpointing
/// none, selective, every:2, full; offload no and yes. Throws ConfigError for a bad list.
PlanTrainSpace plan_train_space(const PlanTrainRequest& q, const training::TrainingSetup& base);

/// What a plan search tells while it runs (rank 0 only); either may be empty.
struct PlanTrainCallbacks {
  std::function<void(std::size_t done, std::size_t total)> progress;
  std::function<void(const std::string& message)> warning;  // resume: an unreadable journal line
};

/// Runs the search. Throws ConfigError (on rank 0) for bad input: the base options' problems,
/// a missing global batch, a bad list, and a search where no plan can run (the global batch a
/// multiple of no dp x micro-batch of the space, or no plan valid for the model). A search
/// where plans run but none fits is an answer (fastest empty, `closest` set).
PlanTrainAnswer plan_train(const PlanTrainRequest& q, const PlanTrainCallbacks& cb = {});

}  // namespace vramsim::run
