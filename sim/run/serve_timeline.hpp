// A serve run as Chrome trace event JSON (`serve --timeline-out F.json`; opens in ui.perfetto.dev
// and chrome://tracing), streamed while the simulation runs: one process per replica with
//   - thread "steps": one complete ("X") event per step of the time series (every step unless
//     serving.timeseries_interval thins it), named decode / prefill / mixed, with its batch;
//   - counters ("C"): requests running and waiting, KV blocks in use;
//   - each finished request's phases as async spans (one id per request): queued (arrival to
//     first scheduled), prefill (to the first token), decode (to the last token); a rejected
//     request is an instant event.
// Times are microseconds (the format's unit) printed to the nanosecond. The file grows with the
// requests (about 1 KB each): a million-request run writes about a gigabyte.
#pragma once

#include <ostream>
#include <vector>

#include "sim/serving/serving_simulation.hpp"

namespace vramsim::run {

class ServeTimelineObserver final : public serving::ServingObserver {
 public:
  /// Writes the header and the replicas' names.
  ServeTimelineObserver(std::ostream& out, int num_replicas);
  void on_request(const serving::RequestRecord& r) override;
  void on_sample(const serving::TimeSample& s) override;
  /// Closes the JSON. No record may follow.
  void finish();

 private:
  std::ostream& next();
  std::ostream& out_;
  bool first_ = true;
  bool finished_ = false;
};

/// Passes every record to each observer in turn (nullptr entries are skipped).
class TeeObserver final : public serving::ServingObserver {
 public:
  explicit TeeObserver(std::vector<serving::ServingObserver*> to) : to_(std::move(to)) {}
  void on_request(const serving::RequestRecord& r) override;
  void on_sample(const serving::TimeSample& s) override;

 private:
  std::vector<serving::ServingObserver*> to_;
};

}  // namespace vramsim::run
