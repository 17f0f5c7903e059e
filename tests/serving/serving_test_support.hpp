// Tiny worlds for serving tests: an in-memory trace, a step-time model with round numbers, and
// an observer that keeps every row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/serving/execution_time_model.hpp"
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "sim/serving/serving_simulation.hpp"
#include "sim/serving/trace_source.hpp"

namespace vramsim::serving::testing {

class VectorTrace final : public TraceSource {
 public:
  explicit VectorTrace(std::vector<TraceRecord> records) : records_(std::move(records)) {}
  std::optional<TraceRecord> next() override {
    if (pos_ >= records_.size()) return std::nullopt;
    ++stats_.rows_read;
    return records_[pos_++];
  }
  std::string describe() const override { return "vector"; }
  TraceStats stats() const override { return stats_; }

 private:
  std::vector<TraceRecord> records_;
  std::size_t pos_ = 0;
  TraceStats stats_;
};

inline TraceRecord record(double arrival_s, std::int64_t prompt, std::int64_t output) {
  TraceRecord r;
  r.arrival = SimTime::zero() + Duration::from_seconds(arrival_s);
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

/// total = base + per_token * tokens + per_context * (decode context + prefill context)
class LinearTimeModel final : public ExecutionTimeModel {
 public:
  LinearTimeModel(Duration base, Duration per_token, Duration per_context = Duration::zero(),
                  int pp = 1)
      : base_(base), per_token_(per_token), per_context_(per_context), pp_(pp) {}
  StepTime step_time(const BatchShape& b) const override {
    std::int64_t context = b.decode_context_tokens;
    for (const PrefillChunk& c : b.prefills) context += c.num_context;
    StepTime t;
    t.linear = b.num_tokens() * per_token_;
    t.attention = context * per_context_;
    t.overhead = base_;
    t.total = t.linear + t.attention + t.overhead;
    t.stage_interval = Duration::from_nanoseconds(t.total.nanoseconds() / pp_);
    return t;
  }
  std::string describe() const override { return "linear test model"; }

 private:
  Duration base_, per_token_, per_context_;
  int pp_;
};

class KeepAll final : public ServingObserver {
 public:
  void on_request(const RequestRecord& r) override { requests.push_back(r); }
  void on_sample(const TimeSample& s) override { samples.push_back(s); }
  std::vector<RequestRecord> requests;
  std::vector<TimeSample> samples;
};

/// `n` requests 2 ms apart with lengths from a fixed 64-bit LCG seeded with `seed`: prompts of
/// 20 to 419 tokens, outputs of 1 to 120 (a loaded run whose exact mix does not matter).
inline std::vector<TraceRecord> lcg_records(std::uint64_t seed, int n) {
  std::vector<TraceRecord> out;
  std::uint64_t x = seed;
  for (int i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto prompt = static_cast<std::int64_t>(20 + (x >> 33) % 400);
    const auto output = static_cast<std::int64_t>(1 + (x >> 17) % 120);
    out.push_back(record(0.002 * i, prompt, output));
  }
  return out;
}

inline ServingSetup small_setup(std::int64_t num_blocks, std::int64_t block_size = 16) {
  ServingSetup s;
  s.replica.kv.num_blocks = num_blocks;
  s.replica.kv.block_size = block_size;
  s.replica.kv.bytes_per_block = Bytes(1 << 20);
  s.replica.limits.max_num_seqs = 64;
  s.replica.limits.max_num_batched_tokens = 512;
  s.replica.host_to_device = GBps(25.0);
  s.replica.device_to_host = GBps(25.0);
  return s;
}

/// The built-in schedulers and routers, registered once per test executable.
struct BuiltinRegistries {
  BuiltinRegistries() {
    register_builtin_schedulers(schedulers);
    register_builtin_routers(routers);
  }
  SchedulerRegistry schedulers;
  RouterRegistry routers;
};

inline const BuiltinRegistries& builtin_registries() {
  static const BuiltinRegistries reg;
  return reg;
}

/// `records` served under `setup` and `model` with the built-in policies.
inline ServingResult run(std::vector<TraceRecord> records, const ServingSetup& setup,
                         const ExecutionTimeModel& model, KeepAll* keep = nullptr) {
  VectorTrace trace(std::move(records));
  const BuiltinRegistries& reg = builtin_registries();
  return simulate_serving(trace, setup, model, reg.schedulers, reg.routers, keep);
}

}  // namespace vramsim::serving::testing
