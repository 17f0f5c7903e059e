#include "sim/serving/traces/random_variates.hpp"

#include <cmath>
#include <map>
#include <vector>

#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::serving;

namespace {
struct Moments {
  double mean = 0;
  double cv = 0;
};
Moments gamma_moments(double shape, double scale, int n, std::uint64_t seed) {
  RngStream rng(seed);
  double sum = 0;
  double sum2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = sample_gamma(rng, shape, scale);
    REQUIRE(x >= 0.0);
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / n;
  return {mean, std::sqrt(sum2 / n - mean * mean) / mean};
}
}  // namespace

TEST_CASE("gamma draws have mean shape*scale and CV 1/sqrt(shape)", "[serving][traces]") {
  const double shape = GENERATE(0.25, 0.835, 1.0, 4.0, 30.0);
  const Moments m = gamma_moments(shape, 2.0, 200'000, 7);
  INFO("shape " << shape);
  CHECK(m.mean == Approx(shape * 2.0).epsilon(0.02));
  CHECK(m.cv == Approx(1.0 / std::sqrt(shape)).epsilon(0.03));
}

TEST_CASE("zipf draws follow n^-s from min to max exactly in frequency", "[serving][traces]") {
  struct Case {
    double s;
    std::int64_t lo;
    std::int64_t hi;
  };
  const Case c = GENERATE(Case{1.1, 1, 10}, Case{1.0, 1, 10}, Case{0.5, 5, 20}, Case{2.5, 3, 8},
                          Case{1.1, 1, 1});
  ZipfSampler zipf(c.s, c.lo, c.hi);
  RngStream rng(11);
  const int n = 200'000;
  std::map<std::int64_t, int> counts;
  for (int i = 0; i < n; ++i) {
    const std::int64_t k = zipf.sample(rng);
    REQUIRE(k >= c.lo);
    REQUIRE(k <= c.hi);
    ++counts[k];
  }
  double total_p = 0;
  for (std::int64_t k = c.lo; k <= c.hi; ++k) {
    const double p = zipf.probability(k);
    total_p += p;
    const double sd = std::sqrt(n * p * (1 - p));
    INFO("s " << c.s << " k " << k << " count " << counts[k] << " expected " << n * p);
    CHECK(std::fabs(counts[k] - n * p) <= 5 * sd + 1);
  }
  CHECK(total_p == Approx(1.0));
}

TEST_CASE("zipf draws over a huge range stay O(1) and in range", "[serving][traces]") {
  ZipfSampler zipf(1.2, 1, 1'000'000'000);
  RngStream rng(3);
  int ones = 0;
  for (int i = 0; i < 100'000; ++i) {
    const std::int64_t k = zipf.sample(rng);
    REQUIRE(k >= 1);
    REQUIRE(k <= 1'000'000'000);
    ones += k == 1 ? 1 : 0;
  }
  // P(1) = 1/zeta(1.2) truncated at 1e9 ~ 1/5.5916 = 0.1788.
  CHECK(ones / 100'000.0 == Approx(0.1788).epsilon(0.03));
}
