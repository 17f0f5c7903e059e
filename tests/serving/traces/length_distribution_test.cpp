#include "sim/serving/traces/length_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;
using Catch::Matchers::Contains;

namespace {
std::vector<std::int64_t> draw(const LengthDistribution& d, int n,
                               LengthRole role = LengthRole::kPrompt) {
  LengthSampler sampler(d, role);
  RngStream rng(5);
  std::vector<std::int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(sampler.sample(rng));
  return out;
}
double mean_of(const std::vector<std::int64_t>& v) {
  double s = 0;
  for (auto x : v) s += static_cast<double>(x);
  return s / static_cast<double>(v.size());
}
double median_of(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[v.size() / 2]);
}
}  // namespace

TEST_CASE("length distributions parse from their command-line syntax", "[serving][traces]") {
  const auto f = std::get<FixedLength>(parse_length_distribution("fixed:512", "f"));
  CHECK(f.tokens == 512);
  const auto u = std::get<UniformLength>(parse_length_distribution("uniform:100:2000", "f"));
  CHECK(u.min_tokens == 100);
  CHECK(u.max_tokens == 2000);
  const auto l =
      std::get<LognormalLength>(parse_length_distribution("lognormal:mu=6.5,sigma=0.75", "f"));
  CHECK(l.mu == 6.5);
  CHECK(l.sigma == 0.75);
  CHECK(l.min_tokens == 1);
  CHECK(l.max_tokens == kMaxTraceTokens);
  const auto m = std::get<LognormalLength>(
      parse_length_distribution("lognormal:mean=1155,median=1020,min=2,max=14050", "f"));
  CHECK(m.mu == Approx(std::log(1020.0)));
  CHECK(m.sigma == Approx(std::sqrt(2 * std::log(1155.0 / 1020.0))));
  CHECK(m.min_tokens == 2);
  CHECK(m.max_tokens == 14050);
  const auto z = std::get<ZipfLength>(parse_length_distribution("zipf:1.1:1:4096", "f"));
  CHECK(z.exponent == 1.1);
  CHECK(z.min_tokens == 1);
  CHECK(z.max_tokens == 4096);
  const auto t = std::get<EmpiricalLength>(parse_length_distribution("trace:/a/b:c.csv", "f"));
  CHECK(t.path == "/a/b:c.csv");
}

TEST_CASE("the canonical text of a distribution parses back to itself", "[serving][traces]") {
  for (const char* text : {"fixed:512", "uniform:100:2000", "lognormal:mu=6.5,sigma=0.75",
                           "lognormal:mu=4.859812404361672,sigma=1.071707,min=7,max=1000",
                           "zipf:1.1:1:4096", "trace:x.csv"}) {
    CHECK(to_string(parse_length_distribution(text, "f")) == text);
  }
}

TEST_CASE("a bad distribution names the field and the accepted forms", "[serving][traces]") {
  const std::string bad =
      GENERATE(as<std::string>{}, "fixed", "fixed:abc", "normal:1:2", "uniform:1", "uniform:1:2:3",
               "lognormal:mu=1", "lognormal:mu=1,sigma=1,mean=3", "lognormal:mean=5,median=10",
               "lognormal:mu=1,sigma=x", "lognormal:shape=1", "zipf:1.1:1", "trace:");
  const std::string msg =
      config_error_of([&] { parse_length_distribution(bad, "workload.prompt_lengths"); });
  INFO(msg);
  CHECK_THAT(msg, Contains("workload.prompt_lengths: "));
  CHECK_THAT(msg, Contains("in '" + bad + "'"));
  CHECK_THAT(msg, Contains("fixed:N, uniform:MIN:MAX, lognormal:mu=M,sigma=S"));
}

TEST_CASE("out-of-range distribution parameters are reported on the field", "[serving][traces]") {
  ValidationReport report;
  validate_length_distribution(FixedLength{0}, report, "a");
  validate_length_distribution(UniformLength{10, 5}, report, "b");
  validate_length_distribution(LognormalLength{1.0, -1.0}, report, "c");
  validate_length_distribution(ZipfLength{0.0, 1, 10}, report, "d");
  validate_length_distribution(UniformLength{1, 2'000'000'000}, report, "e");
  validate_length_distribution(FixedLength{100}, report, "ok");
  REQUIRE(report.problems().size() == 5);
  CHECK(report.problems()[0].field == "a");
  CHECK(report.problems()[0].message ==
        "lengths must satisfy 1 <= min <= max <= 1000000000, got [0, 0]");
  CHECK(report.problems()[1].field == "b");
  CHECK(report.problems()[2].message ==
        "lognormal needs a finite mu and sigma >= 0, got mu=1, sigma=-1");
  CHECK(report.problems()[3].message == "zipf exponent must be > 0, got 0");
  CHECK(report.problems()[4].field == "e");
}

TEST_CASE("fixed and uniform lengths have their exact support and mean", "[serving][traces]") {
  const auto fixed = draw(FixedLength{512}, 100);
  CHECK(std::all_of(fixed.begin(), fixed.end(), [](auto x) { return x == 512; }));
  const auto uni = draw(UniformLength{100, 2000}, 100'000);
  CHECK(*std::min_element(uni.begin(), uni.end()) == 100);
  CHECK(*std::max_element(uni.begin(), uni.end()) == 2000);
  CHECK(mean_of(uni) == Approx(1050.0).epsilon(0.01));
}

TEST_CASE("lognormal lengths match the requested median and mean, inside the clamp",
          "[serving][traces]") {
  const auto d =
      std::get<LognormalLength>(parse_length_distribution("lognormal:mean=1155,median=1020", "f"));
  const auto v = draw(d, 200'000);
  CHECK(median_of(v) == Approx(1020.0).epsilon(0.01));
  CHECK(mean_of(v) == Approx(1155.0).epsilon(0.01));
  const auto clamped = draw(LognormalLength{std::log(100.0), 2.0, 50, 200}, 10'000);
  CHECK(*std::min_element(clamped.begin(), clamped.end()) == 50);
  CHECK(*std::max_element(clamped.begin(), clamped.end()) == 200);
}

TEST_CASE("zipf lengths stay in range with P(min) the largest", "[serving][traces]") {
  const auto v = draw(ZipfLength{1.1, 1, 4096}, 50'000);
  CHECK(*std::min_element(v.begin(), v.end()) == 1);
  CHECK(*std::max_element(v.begin(), v.end()) <= 4096);
  const auto ones = std::count(v.begin(), v.end(), 1);
  const auto twos = std::count(v.begin(), v.end(), 2);
  CHECK(ones > twos);
  CHECK(static_cast<double>(ones) / static_cast<double>(twos) ==
        Approx(std::pow(2.0, 1.1)).epsilon(0.05));
}

TEST_CASE("trace lengths are resampled from the file's prompt or output column",
          "[serving][traces]") {
  ScratchDir dir("lengths");
  const std::string csv = dir.write("t.csv",
                                    "arrival_s,prompt_tokens,output_tokens\n"
                                    "0,100,7\n0.5,200,8\n1,300,9\n");
  const auto prompts = draw(EmpiricalLength{csv}, 3000, LengthRole::kPrompt);
  CHECK(std::set<std::int64_t>(prompts.begin(), prompts.end()) ==
        std::set<std::int64_t>{100, 200, 300});
  CHECK(mean_of(prompts) == Approx(200.0).epsilon(0.03));
  const auto outputs = draw(EmpiricalLength{csv}, 300, LengthRole::kOutput);
  CHECK(std::set<std::int64_t>(outputs.begin(), outputs.end()) == std::set<std::int64_t>{7, 8, 9});

  const std::string stats =
      dir.write("s.csv",
                "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n"
                "74,918,992,0.08\n290,905,1195,0.32\n");
  CHECK(read_trace_lengths(stats, LengthRole::kPrompt) == std::vector<std::int32_t>{74, 290});
  CHECK(read_trace_lengths(stats, LengthRole::kOutput) == std::vector<std::int32_t>{918, 905});
  const std::string bad = dir.write("b.csv", "num_prefill_tokens,num_decode_tokens\n74,0\n");
  CHECK_THAT(config_error_of([&] { read_trace_lengths(bad, LengthRole::kOutput); }),
             Contains(bad + ":2: trace: num_decode_tokens: expected an integer"));
  CHECK_THAT(config_error_of(
                 [&] { LengthSampler(EmpiricalLength{dir / "none.csv"}, LengthRole::kPrompt); }),
             Contains("cannot open trace file"));
}

TEST_CASE("lengths resampled from the ShareGPT statistics keep its median",
          "[serving][traces][data]") {
  const auto v =
      draw(EmpiricalLength{shared_trace("sharegpt_8k_filtered_stats_llama2_tokenizer.csv")}, 50'000,
           LengthRole::kOutput);
  CHECK(median_of(v) == Approx(415.0).epsilon(0.03));  // SOURCES.md: decode p50 415
}
