#include "sim/serving/traces/azure_conv_fit.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/serving/traces/trace_file.hpp"
#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;

namespace {
struct Lengths {
  std::vector<double> prompt;
  std::vector<double> output;
  std::vector<double> gaps_s;
};

Lengths collect(TraceSource& source) {
  Lengths out;
  std::optional<SimTime> last;
  while (const auto r = source.next()) {
    out.prompt.push_back(static_cast<double>(r->prompt_tokens));
    out.output.push_back(static_cast<double>(r->output_tokens));
    if (last) out.gaps_s.push_back((r->arrival - *last).seconds());
    last = r->arrival;
  }
  return out;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double cv_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s2 = 0;
  for (double x : v) s2 += (x - m) * (x - m);
  return std::sqrt(s2 / static_cast<double>(v.size())) / m;
}
}  // namespace

TEST_CASE("the fitted constants restate the Azure conversation trace's statistics",
          "[serving][traces][data]") {
  auto trace = open_trace_file(shared_trace("AzureLLMInferenceTrace_conv.csv"), TraceFormat::kAzure,
                               MalformedRowPolicy::kError);
  const Lengths t = collect(*trace);
  CHECK(median_of(t.prompt) == kAzureConvPromptMedian);
  CHECK(median_of(t.output) == kAzureConvOutputMedian);
  CHECK(mean_of(t.prompt) == Approx(kAzureConvPromptMean).epsilon(1e-6));
  CHECK(mean_of(t.output) == Approx(kAzureConvOutputMean).epsilon(1e-5));
  CHECK(1.0 / mean_of(t.gaps_s) == Approx(kAzureConvRatePerS).epsilon(1e-6));
  CHECK(cv_of(t.gaps_s) == Approx(kAzureConvInterArrivalCv).epsilon(1e-5));
  CHECK(*std::min_element(t.prompt.begin(), t.prompt.end()) == kAzureConvPromptMin);
  CHECK(*std::max_element(t.prompt.begin(), t.prompt.end()) == kAzureConvPromptMax);
  CHECK(*std::min_element(t.output.begin(), t.output.end()) == kAzureConvOutputMin);
  CHECK(*std::max_element(t.output.begin(), t.output.end()) == kAzureConvOutputMax);
  CHECK(kAzureConvPromptMu == std::log(kAzureConvPromptMedian));
  CHECK(kAzureConvOutputMu == std::log(kAzureConvOutputMedian));
}

TEST_CASE("the synthetic Azure conversation workload matches the trace's means and medians",
          "[serving][traces][data]") {
  auto synthetic = open_trace(azure_conv_synthetic(200'000, 2024));
  const Lengths s = collect(*synthetic);
  REQUIRE(s.prompt.size() == 200'000);
  CHECK(median_of(s.prompt) == Approx(kAzureConvPromptMedian).epsilon(0.02));
  CHECK(mean_of(s.prompt) == Approx(kAzureConvPromptMean).epsilon(0.02));
  CHECK(median_of(s.output) == Approx(kAzureConvOutputMedian).epsilon(0.02));
  CHECK(mean_of(s.output) == Approx(kAzureConvOutputMean).epsilon(0.02));
  CHECK(1.0 / mean_of(s.gaps_s) == Approx(kAzureConvRatePerS).epsilon(0.02));
  CHECK(cv_of(s.gaps_s) == Approx(kAzureConvInterArrivalCv).epsilon(0.03));
  CHECK(*std::min_element(s.output.begin(), s.output.end()) >= kAzureConvOutputMin);
  CHECK(*std::max_element(s.output.begin(), s.output.end()) == kAzureConvOutputMax);
}
