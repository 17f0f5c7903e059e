// The p99 early stop alone (sim/serving/p99_stop_rule): surely-violating requests counted per
// objective, and the count that makes a p99 miss certain for the bound on finished requests.
#include "sim/serving/p99_stop_rule.hpp"

#include <string>

#include "tests/catch.hpp"

namespace vramsim::serving {
namespace {

Duration ms(std::int64_t n) { return Duration::from_nanoseconds(n * 1'000'000); }

// A request that arrived at 0, sent its first token at `first_token` and its last at `finish`.
Request finished(Duration first_token, Duration finish, std::int64_t output_tokens) {
  Request r;
  r.arrival = SimTime::zero();
  r.first_token = SimTime::zero() + first_token;
  r.finish = SimTime::zero() + finish;
  r.output_tokens = output_tokens;
  return r;
}

std::string verdict(const char* on) { return on == nullptr ? "" : on; }

}  // namespace

TEST_CASE("the p99 stop waits for a bound on the finished requests, then one sure miss of a "
          "handful of requests decides",
          "[serving][p99-stop]") {
  P99Stop stop;
  stop.objectives.ttft = ms(100);
  P99StopRule rule(stop);
  const Request late = finished(ms(1000), ms(2000), 10);
  // No max_requests and more trace to read: the run may finish any number of requests.
  CHECK(verdict(rule.on_finish(late, /*trace_done=*/false, /*num_created=*/3)).empty());
  // Five requests at most: the nearest-rank p99 of n <= 5 is the largest value.
  CHECK(verdict(rule.on_finish(late, /*trace_done=*/true, /*num_created=*/5)) == "ttft");
}

TEST_CASE("with 150 requests at most a p99 miss is sure at the second surely-violating request",
          "[serving][p99-stop]") {
  // n - ceil(0.99 n) + 1 is 2 for 101 <= n <= 150 and at most 2 below.
  P99Stop stop;
  stop.objectives.ttft = ms(100);
  stop.objectives.e2e = ms(500);
  stop.max_requests = 150;
  P99StopRule rule(stop);
  const Request on_time = finished(ms(10), ms(100), 10);
  const Request slow_end = finished(ms(10), ms(5000), 1);  // only its E2E misses
  CHECK(verdict(rule.on_finish(on_time, false, 10)).empty());
  CHECK(verdict(rule.on_finish(slow_end, false, 10)).empty());
  CHECK(verdict(rule.on_finish(on_time, false, 10)).empty());
  CHECK(verdict(rule.on_finish(slow_end, false, 10)) == "e2e");
}

}  // namespace vramsim::serving
