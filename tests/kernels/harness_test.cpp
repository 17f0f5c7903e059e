#include "kernels/harness.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "kernels/random_hash.hpp"
#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::kernels;
using calibration::CheckOutcome;

namespace {

// Returns scripted durations and counts how often the work ran.
class ScriptedTimer final : public Timer {
 public:
  explicit ScriptedTimer(std::vector<double> durations) : durations_(std::move(durations)) {}
  void start() override { ++starts; }
  double stop_s() override { return durations_.at(next_++); }
  int starts = 0;

 private:
  std::vector<double> durations_;
  std::size_t next_ = 0;
};

std::vector<char*> argv_of(std::vector<std::string>& args) {
  std::vector<char*> out;
  for (std::string& a : args) out.push_back(a.data());
  return out;
}

}  // namespace

TEST_CASE("summarize gives the median, quartiles and extremes of the samples",
          "[kernels][harness]") {
  const calibration::Timing odd = summarize({5e-6, 1e-6, 3e-6, 2e-6, 4e-6});
  CHECK(odd.median_s == 3e-6);
  CHECK(odd.q1_s == 2e-6);
  CHECK(odd.q3_s == 4e-6);
  CHECK(odd.min_s == 1e-6);
  CHECK(odd.max_s == 5e-6);
  CHECK(odd.num_repetitions == 5);
  // Even count: numpy's linear quantiles, 1.75 / 2.5 / 3.25 for 1, 2, 3, 4.
  const calibration::Timing even = summarize({4.0, 1.0, 3.0, 2.0});
  CHECK(even.median_s == 2.5);
  CHECK(even.q1_s == 1.75);
  CHECK(even.q3_s == 3.25);
  CHECK(summarize({7.0}).median_s == 7.0);
  CHECK_THROWS_AS(summarize({}), std::invalid_argument);
}

TEST_CASE("timed repetitions run the warm-up untimed and summarize only the timed runs",
          "[kernels][harness]") {
  ScriptedTimer timer({3.0, 1.0, 2.0});
  int runs = 0;
  const calibration::Timing t = time_repetitions(timer, 2, 3, [&] { ++runs; });
  CHECK(runs == 5);
  CHECK(timer.starts == 3);
  CHECK(t.median_s == 2.0);
  CHECK(t.min_s == 1.0);
  CHECK(t.max_s == 3.0);
  CHECK(t.num_repetitions == 3);
  CHECK_THROWS_AS(time_repetitions(timer, 0, 0, [] {}), std::invalid_argument);
}

TEST_CASE("compare passes within tolerance and fails outside it or on NaN",
          "[kernels][harness]") {
  const std::vector<float> ref = {1.0f, -2.0f, 100.0f};
  CHECK(compare(std::vector<float>{1.0f, -2.0f, 100.0f}, ref, 0, 0) == CheckOutcome::kPassed);
  CHECK(compare(std::vector<float>{1.01f, -2.0f, 101.0f}, ref, 0.011, 0) ==
        CheckOutcome::kPassed);
  CHECK(compare(std::vector<float>{1.0f, -2.0f, 102.0f}, ref, 0.01, 0) == CheckOutcome::kFailed);
  CHECK(compare(std::vector<float>{1.0f, std::nanf(""), 100.0f}, ref, 1, 1) ==
        CheckOutcome::kFailed);
  CHECK(compare(std::vector<float>{}, std::vector<float>{}, 0, 0) == CheckOutcome::kNotChecked);
  CHECK_THROWS_AS(compare(std::vector<float>{1.0f}, ref, 0, 0), std::invalid_argument);
}

TEST_CASE("bf16 conversion rounds to nearest even like the device", "[kernels][harness]") {
  CHECK(float_to_bf16(1.0f) == 0x3F80);
  CHECK(float_to_bf16(-2.0f) == 0xC000);
  CHECK(float_to_bf16(1.00390625f) == 0x3F80);  // halfway, even below
  CHECK(float_to_bf16(1.01171875f) == 0x3F82);  // halfway, even above
  CHECK(float_to_bf16(1.0050f) == 0x3F81);
  CHECK(bf16_to_float(0x3F80) == 1.0f);
  CHECK(bf16_to_float(0x4049) == 3.140625f);
  CHECK(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("random data is deterministic, in range and regenerable on the host",
          "[kernels][harness]") {
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const float v = hash_uniform(42, i, 1.0f);
    CHECK(v >= -1.0f);
    CHECK(v < 1.0f);
    CHECK(random_bf16_value(i, 42, 1.0f) == bf16_to_float(float_to_bf16(v)));
  }
  CHECK(hash_uniform(42, 7, 1.0f) == hash_uniform(42, 7, 1.0f));
  CHECK(hash_uniform(42, 7, 1.0f) != hash_uniform(43, 7, 1.0f));
  CHECK(random_values(8, 1) == random_values(8, 1));
}

TEST_CASE("message sizes double from the smallest to the largest", "[kernels][harness]") {
  const auto sizes = doubling_sizes(8, std::int64_t{1} << 30);
  CHECK(sizes.size() == 28);
  CHECK(sizes.front() == 8);
  CHECK(sizes.back() == std::int64_t{1} << 30);
  CHECK(doubling_sizes(1 << 20, 3 << 20) == std::vector<std::int64_t>{1 << 20, 2 << 20});
  CHECK_THROWS_AS(doubling_sizes(0, 8), std::invalid_argument);
  CHECK_THROWS_AS(doubling_sizes(16, 8), std::invalid_argument);
}

TEST_CASE("options are parsed, and a bad or missing value is an error, never a default",
          "[kernels][harness]") {
  std::vector<std::string> good = {"vramsim-calibrate", "--device-id", "h200", "--out",
                                   "my profile.json", "--repetitions", "7", "--only",
                                   "gemm,copy", "--quick"};
  auto argv = argv_of(good);
  const HarnessOptions o = parse_options(static_cast<int>(argv.size()), argv.data());
  CHECK(o.device_id == "h200");
  CHECK(o.repetitions == 7);
  CHECK(o.only == std::vector<std::string>{"gemm", "copy"});
  CHECK(o.quick);
  CHECK(o.command ==
        "vramsim-calibrate --device-id h200 --out 'my profile.json' --repetitions 7 --only "
        "gemm,copy --quick");

  std::vector<std::string> missing = {"vramsim-calibrate", "--out", "x.json"};
  auto argv2 = argv_of(missing);
  CHECK_THROWS_AS(parse_options(static_cast<int>(argv2.size()), argv2.data()),
                  std::invalid_argument);
  std::vector<std::string> bad = {"vramsim-calibrate", "--device-id", "h200", "--out", "x.json",
                                  "--repetitions", "0"};
  auto argv3 = argv_of(bad);
  CHECK_THROWS_AS(parse_options(static_cast<int>(argv3.size()), argv3.data()),
                  std::invalid_argument);
}

TEST_CASE("the UTC date is ISO 8601", "[kernels][harness]") {
  const std::string d = utc_now_iso8601();
  REQUIRE(d.size() == 20);
  CHECK(d[4] == '-');
  CHECK(d[10] == 'T');
  CHECK(d.back() == 'Z');
}
