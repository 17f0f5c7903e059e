// The early stop of a serving run on a sure p99 miss (serving_simulation.hpp, P99Stop, states
// the rule and why its verdict is exact). The rule counts, per objective, the finished requests
// that surely violate it and, for the current bound on the requests the run finishes, how many
// such requests make its p99 miss certain; the driver asks it as each request finishes.
#pragma once

#include <cstdint>

#include "sim/serving/request.hpp"
#include "sim/serving/serving_simulation.hpp"

namespace vramsim::serving {

class P99StopRule {
 public:
  /// `stop` is copied.
  explicit P99StopRule(const P99Stop& stop) : stop_(stop) {}

  /// `r` has finished. `trace_done`: the trace has no more records, so the `num_created`
  /// requests created so far bound those the run finishes. Returns the objective ("ttft",
  /// "tpot", "e2e") whose p99 is now sure to exceed its target, the first in that order, or
  /// nullptr while none is.
  const char* on_finish(const Request& r, bool trace_done, std::int64_t num_created);

 private:
  P99Stop stop_;
  // Surely-violating finished requests per objective (ttft, tpot, e2e), and the count that
  // makes a p99 miss certain for the current bound on finished requests (cached by bound).
  std::int64_t num_sure_misses_[3] = {0, 0, 0};
  std::int64_t stop_bound_ = -1;
  std::int64_t stop_need_ = 0;
};

}  // namespace vramsim::serving
