// The host-only part of vramsim-calibrate's harness (nccl-tests' timer.cc and common.cu split
// into what needs no GPU): command-line options, timed repetitions behind a Timer interface
// (CUDA events in cuda_timer.hpp), median and spread statistics, comparison against a CPU
// reference, bf16 conversion for those references, message-size ladders, and the identity
// fields of a profile. Builds without CUDA and is unit-tested on the CPU (tests/kernels).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "sim/hardware/calibration_record.hpp"

namespace vramsim::kernels {

/// What to measure and how; every field comes from the command line (parse_options).
struct HarnessOptions {
  int device = 0;               // CUDA device of the single-process measurements
  int warmup = 5;               // untimed runs before timing
  int repetitions = 20;         // timed runs; the median is the result
  std::int64_t max_copy_bytes = std::int64_t{1} << 30;
  std::int64_t max_collective_bytes = std::int64_t{1} << 30;
  std::string device_id;        // topologies/devices/<id>; required
  std::string out;              // profile path (JSON)
  std::vector<std::string> only;  // measurement names; empty = all
  bool quick = false;           // small grids (smoke test)
  bool mpi = false;             // one process per GPU, NCCL bootstrapped over MPI
  bool check_device = false;    // exit 0 when a CUDA device exists, 77 when none
  std::string driver_version;   // NVIDIA driver (nvidia-smi); empty: the CUDA driver API's
  std::string command;          // the command line as typed
};

/// Parses argv (CLI11). Throws std::invalid_argument with a message naming the option on a bad
/// or missing value; never substitutes a default for a bad value. `--help` prints usage and
/// throws HelpRequested.
struct HelpRequested {};
HarnessOptions parse_options(int argc, char** argv);

/// Median, quartiles (linear interpolation between order statistics, as numpy's default),
/// min and max of `samples_s`. Requires at least one sample.
calibration::Timing summarize(std::vector<double> samples_s);

/// A stopwatch around device work: start() records the start, stop_s() waits for the work
/// issued since and returns the elapsed seconds.
class Timer {
 public:
  virtual ~Timer();
  virtual void start() = 0;
  virtual double stop_s() = 0;
};

/// Runs `work` `warmup` times untimed, then `repetitions` times each between start() and
/// stop_s() of `timer`, and summarizes the timed runs.
calibration::Timing time_repetitions(Timer& timer, int warmup, int repetitions,
                                     const std::function<void()>& work);

/// Compares `got` with `reference` elementwise: passes when every |got - ref| <= atol +
/// rtol * |ref|. Empty inputs are not checked. Sizes must match.
calibration::CheckOutcome compare(std::span<const float> got, std::span<const float> reference,
                                  double rtol, double atol);

/// bf16 as its 16 bits: round to nearest even, as __float2bfloat16 does. NaN stays NaN.
std::uint16_t float_to_bf16(float f);
float bf16_to_float(std::uint16_t bits);

/// The value launch_fill_random_bf16 writes at `index`: hash_uniform rounded to bf16, as float.
float random_bf16_value(std::uint64_t index, std::uint64_t seed, float scale);

/// `n` deterministic uniform values in [-1, 1) from `seed` (splitmix64).
std::vector<float> random_values(std::size_t n, std::uint64_t seed);

/// Sizes from `min_bytes` to `max_bytes` in x2 steps (both included when powers of two).
std::vector<std::int64_t> doubling_sizes(std::int64_t min_bytes, std::int64_t max_bytes);

/// The current UTC time, ISO 8601 ("2025-11-30T12:00:00Z").
std::string utc_now_iso8601();

/// argv joined by spaces, arguments with spaces or quotes single-quoted.
std::string join_command_line(int argc, char** argv);

}  // namespace vramsim::kernels
