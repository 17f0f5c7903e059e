// The run layer of training (`train`, `train --find-max-micro-batch`, `capacity train`,
// `compare train`, sweep's training points): resolved options -> simulation setup -> searches,
// callable from C++ without the command line. Problems are reported on config paths
// ("batch.global_batch") at the scenario's file:line when the scenario set the value
// (train_options.hpp); the command line maps the others to its flags.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/run/train_options.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::run {

/// Loads the model and the device, the topology and its links, the calibration, and validates
/// the plan for the model. Throws ConfigError with every problem.
training::TrainingSetup resolve_training(const TrainOptions& o);

/// Which search ran a probe.
enum class TrainSearch {
  kMicroBatch,  // the largest micro-batch at the plan's seq_len (doubling, then bisection)
  kSeqLen,      // the longest sequence at micro-batch 1
};

std::string_view to_string(TrainSearch s);

/// One simulated step of a search: the plan's knobs and what came out (the binding device's
/// numbers; zeros when the result has no device).
struct TrainProbe {
  std::string checkpointing;
  TrainSearch search = TrainSearch::kMicroBatch;
  std::int64_t micro_batch = 0;
  std::int64_t seq_len = 0;
  bool fits = false;
  std::int64_t binding_stage = 0;
  Bytes peak_allocated, peak_reserved, non_allocator, capacity;
  Duration step_time;
  double tokens_per_s = 0.0;
};

/// The device closest to running out: the highest peak reserved + non-allocator memory
/// (nullptr when `r` has no device).
const training::DeviceResult* binding_device(const training::TrainingResult& r);

TrainProbe make_train_probe(std::string checkpointing, TrainSearch search,
                            const training::TrainingPlan& plan, const training::TrainingResult& r);

/// One row of the --find-max-micro-batch search.
struct MaxMicroBatch {
  std::string checkpointing;
  std::int64_t micro_batch = 0;     // 0: not even a micro-batch of 1 fits
  training::TrainingResult result;  // at that micro-batch (empty devices when 0)
};

/// The policies the searches try, in order.
inline constexpr std::string_view kSearchPolicies[] = {"none", "selective", "every:2", "full"};

/// The largest micro-batch that fits under `ckpt`, keeping the number of micro-batches per step
/// (doubling, then bisection; one simulated step each, no timelines). When `probes` is given,
/// every simulated step is appended to it, in order.
MaxMicroBatch find_max_micro_batch(training::TrainingSetup s, const training::Checkpointing& ckpt,
                                   std::vector<TrainProbe>* probes = nullptr);

struct TrainCapacityRow {
  std::string checkpointing;
  std::int64_t max_micro_batch = 0;  // at the plan's seq_len; 0: not even 1 fits
  std::int64_t max_seq_len = 0;      // at micro-batch 1, a multiple of kSeqLenStep; 0: none
  double tokens_per_s_at_max_micro_batch = 0.0;
  std::int64_t num_runs = 0;  // simulations both searches ran for this policy
};

/// Sequence lengths are searched in steps of this many tokens (a multiple of every TP degree
/// and of the usual attention tile).
inline constexpr std::int64_t kSeqLenStep = 128;
/// The step of `plan`'s sequence-length search: kSeqLenStep, or its least common multiple with
/// what context parallelism splits a sequence into (2 cp chunks for the ring, cp for Ulysses).
std::int64_t seq_len_step(const training::TrainingPlan& plan);

/// `capacity train`: both searches under each of kSearchPolicies. When `probes` is given, every
/// simulated step is appended to it, in order.
std::vector<TrainCapacityRow> capacity_train(const training::TrainingSetup& setup,
                                             std::vector<TrainProbe>* probes = nullptr);

/// One change of a plan that does not fit, simulated (one step), with the global batch kept.
struct TrainFix {
  std::string change;  // as flags: "--checkpointing full", "--micro-batch 1", "--strategy zero2"
  std::string why;     // what it trades
  bool fits = false;
  Bytes peak;          // the binding device's peak reserved + non-allocator memory
  Bytes capacity;      // that device's memory
  Duration step_time;
  double tokens_per_s = 0.0;
};

/// When `setup`'s plan does not fit (`result`, its simulation, says so): which checkpointing policy, micro-batch, sharding
/// strategy or optimizer offload makes it fit, each alone (and full checkpointing at
/// micro-batch 1 together), at the same global batch. Those that fit come first, fastest first;
/// empty when the plan fits. Changes the model does not allow are left out.
std::vector<TrainFix> train_fixes(const training::TrainingSetup& setup,
                                  const training::TrainingResult& result);

}  // namespace vramsim::run
