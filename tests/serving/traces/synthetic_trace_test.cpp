#include "sim/serving/traces/synthetic_trace.hpp"

#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;
using Catch::Matchers::Contains;

namespace {
SyntheticSpec make_spec(ArrivalProcess process, double rate, double cv, std::int64_t n,
                        std::uint64_t seed = 1) {
  SyntheticSpec s;
  s.arrivals = {process, rate, cv};
  s.prompt = UniformLength{1, 4096};
  s.output = LognormalLength{5.0, 1.0};
  s.num_requests = n;
  s.seed = seed;
  return s;
}

struct GapStats {
  double rate = 0;
  double cv = 0;
};
GapStats gap_stats(const std::vector<TraceRecord>& rows) {
  double sum = 0;
  double sum2 = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const double g = (rows[i].arrival - rows[i - 1].arrival).seconds();
    sum += g;
    sum2 += g * g;
  }
  const auto n = static_cast<double>(rows.size() - 1);
  const double mean = sum / n;
  return {1.0 / mean, std::sqrt(sum2 / n - mean * mean) / mean};
}
}  // namespace

TEST_CASE("the same seed gives the same requests, another seed different ones",
          "[serving][traces][synthetic]") {
  const auto spec = make_spec(ArrivalProcess::kGamma, 5.0, 2.0, 500, 42);
  SyntheticTrace a(spec);
  SyntheticTrace b(spec);
  auto other_spec = spec;
  other_spec.seed = 43;
  SyntheticTrace c(other_spec);
  const auto ra = drain(a);
  const auto rb = drain(b);
  const auto rc = drain(c);
  REQUIRE(ra.size() == 500);
  REQUIRE(rc.size() == 500);
  CHECK(ra[0].arrival.nanoseconds() == 0);
  bool same_ac = true;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    CHECK(ra[i].arrival == rb[i].arrival);
    CHECK(ra[i].prompt_tokens == rb[i].prompt_tokens);
    CHECK(ra[i].output_tokens == rb[i].output_tokens);
    CHECK(ra[i].line == 0);
    same_ac =
        same_ac && ra[i].arrival == rc[i].arrival && ra[i].prompt_tokens == rc[i].prompt_tokens;
  }
  CHECK_FALSE(same_ac);
  CHECK(a.stats().rows_read == 500);
}

TEST_CASE("changing the output distribution leaves arrivals and prompts unchanged",
          "[serving][traces][synthetic]") {
  auto spec = make_spec(ArrivalProcess::kPoisson, 5.0, 1.0, 200);
  SyntheticTrace a(spec);
  spec.output = ZipfLength{1.2, 1, 100};
  SyntheticTrace b(spec);
  const auto ra = drain(a);
  const auto rb = drain(b);
  for (std::size_t i = 0; i < ra.size(); ++i) {
    CHECK(ra[i].arrival == rb[i].arrival);
    CHECK(ra[i].prompt_tokens == rb[i].prompt_tokens);
  }
}

TEST_CASE("Poisson arrivals have the requested rate and CV 1", "[serving][traces][synthetic]") {
  SyntheticTrace t(make_spec(ArrivalProcess::kPoisson, 5.53, 1.0, 50'000));
  const GapStats g = gap_stats(drain(t));
  CHECK(g.rate == Approx(5.53).epsilon(0.02));
  CHECK(g.cv == Approx(1.0).epsilon(0.02));
}

TEST_CASE("gamma arrivals have the requested rate and CV", "[serving][traces][synthetic]") {
  const double cv = GENERATE(0.3, 1.094, 3.0);
  SyntheticTrace t(make_spec(ArrivalProcess::kGamma, 10.0, cv, 50'000));
  const GapStats g = gap_stats(drain(t));
  INFO("cv " << cv);
  CHECK(g.rate == Approx(10.0).epsilon(0.03));
  CHECK(g.cv == Approx(cv).epsilon(0.05));
}

TEST_CASE("a burst puts every request at time zero", "[serving][traces][synthetic]") {
  SyntheticTrace t(make_spec(ArrivalProcess::kBurst, 0.0, 1.0, 64));
  const auto rows = drain(t);
  REQUIRE(rows.size() == 64);
  for (const auto& r : rows) CHECK(r.arrival.nanoseconds() == 0);
}

TEST_CASE("a duration ends the stream before its first arrival at or after it",
          "[serving][traces][synthetic]") {
  auto spec = make_spec(ArrivalProcess::kPoisson, 100.0, 1.0, 0);
  spec.num_requests.reset();
  spec.duration = seconds(10);
  SyntheticTrace t(spec);
  const auto rows = drain(t);
  CHECK(rows.size() == Approx(1000).margin(120));
  CHECK(rows.back().arrival < SimTime::zero() + seconds(10));
  spec.num_requests = 5;  // whichever ends first
  SyntheticTrace capped(spec);
  CHECK(drain(capped).size() == 5);
}

TEST_CASE("requests of one prefix group share their leading 16-token hash ids",
          "[serving][traces][synthetic]") {
  auto spec = make_spec(ArrivalProcess::kPoisson, 5.0, 1.0, 400);
  spec.prompt = UniformLength{1, 200};
  spec.shared_prefix = {4, 64, PrefixGroupChoice::kUniform, 1.0};
  SyntheticTrace t(spec);
  const auto rows = drain(t);
  std::set<std::uint64_t> unique_ids;
  std::map<std::uint64_t, int> group_sizes;
  for (const auto& r : rows) {
    REQUIRE(r.hash_block_tokens == 16);
    REQUIRE(static_cast<std::int64_t>(r.hash_ids.size()) == (r.prompt_tokens + 15) / 16);
    // The first block names the group: ids g*4 .. g*4+3 are the group's 64-token prefix.
    const std::uint64_t group = r.hash_ids[0] / 4;
    REQUIRE(group < 4);
    ++group_sizes[group];
    for (std::size_t j = 0; j < r.hash_ids.size(); ++j) {
      if (j < 4) {
        CHECK(r.hash_ids[j] == group * 4 + j);
      } else {
        CHECK(r.hash_ids[j] >= 16);
        CHECK(unique_ids.insert(r.hash_ids[j]).second);  // never reused
      }
    }
  }
  CHECK(group_sizes.size() == 4);
  for (const auto& [g, n] : group_sizes) CHECK(n == Approx(100).margin(35));
}

TEST_CASE("zipf prefix groups make group 0 the most popular", "[serving][traces][synthetic]") {
  auto spec = make_spec(ArrivalProcess::kPoisson, 5.0, 1.0, 3000);
  spec.prompt = FixedLength{32};
  spec.shared_prefix = {10, 32, PrefixGroupChoice::kZipf, 1.5};
  SyntheticTrace t(spec);
  std::map<std::uint64_t, int> sizes;
  for (const auto& r : drain(t)) ++sizes[r.hash_ids[0] / 2];
  CHECK(sizes[0] > sizes[1]);
  CHECK(sizes[1] > sizes[3]);
  CHECK(sizes[0] / 3000.0 == Approx(1.0 / 1.9953).epsilon(0.06));  // 1 / sum_{k<=10} k^-1.5
}

TEST_CASE("synthetic options are validated with the field named", "[serving][traces][synthetic]") {
  SyntheticSpec s;
  s.arrivals = {ArrivalProcess::kGamma, -1.0, 0.0};
  s.prompt = UniformLength{5, 1};
  s.num_requests = 0;
  s.shared_prefix = {3, 20, PrefixGroupChoice::kUniform, 1.0};
  ValidationReport report;
  s.validate(report, "workload");
  std::vector<std::string> lines;
  for (const auto& p : report.problems()) lines.push_back(format_problem(p));
  CHECK(lines == std::vector<std::string>{
                     "workload.rate: must be > 0 requests/s, got -1",
                     "workload.cv: must be in (0, 100], got 0",
                     "workload.prompt_lengths: lengths must satisfy 1 <= min <= max <= "
                     "1000000000, got [5, 1]",
                     "workload.num_requests: must be > 0, got 0",
                     "workload.prefix_tokens: must be a positive multiple of 16 tokens, got 20"});
  SyntheticSpec burst;
  burst.arrivals.process = ArrivalProcess::kBurst;
  burst.duration = seconds(1);
  ValidationReport r2;
  burst.validate(r2, "w");
  REQUIRE(r2.problems().size() == 1);
  CHECK(r2.problems()[0].message == "a burst (every request at t = 0) needs num_requests");
  SyntheticSpec endless;
  ValidationReport r3;
  endless.validate(r3, "w");
  CHECK(r3.problems().at(0).field == "w.num_requests");
}

TEST_CASE("a synthetic trace describes itself in one line", "[serving][traces][synthetic]") {
  auto spec = make_spec(ArrivalProcess::kGamma, 5.5, 1.1, 10, 7);
  spec.prompt = FixedLength{512};
  spec.output = UniformLength{1, 10};
  CHECK(SyntheticTrace(spec).describe() ==
        "synthetic: gamma 5.5 req/s cv 1.1, prompt fixed:512, output uniform:1:10, 10 requests, "
        "seed 7");
}
