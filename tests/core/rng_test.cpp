#include "sim/core/rng.hpp"

#include <cmath>

#include "tests/catch.hpp"

using namespace vramsim;

TEST_CASE("a named stream gives the same draws for the same seed", "[core][rng]") {
  RngStreams a(123);
  RngStreams b(123);
  RngStream x = a.stream("arrivals");
  RngStream y = b.stream("arrivals");
  for (int i = 0; i < 100; ++i) REQUIRE(x.next_u64() == y.next_u64());
}

TEST_CASE("streams with different names or seeds differ", "[core][rng]") {
  RngStreams s(123);
  CHECK(s.stream("arrivals").next_u64() != s.stream("lengths").next_u64());
  CHECK(RngStreams(1).stream("a").next_u64() != RngStreams(2).stream("a").next_u64());
}

TEST_CASE("xoshiro256** draws are pinned so results never drift across platforms",
          "[core][rng]") {
  // Pinned values of xoshiro256** 1.0 seeded through splitmix64(0). A change here changes every
  // simulated result, so it must be deliberate.
  RngStream r(0);
  CHECK(r.next_u64() == 0x99ec5f36cb75f2b4ULL);
  CHECK(r.next_u64() == 0xbf6e1f784956452aULL);
  // FNV-1a 64 of "" is the offset basis; of "arrivals" pinned.
  CHECK(stable_hash("") == 14695981039346656037ULL);
  CHECK(stable_hash("arrivals") == 0xb10bc22ca203cc53ULL);
}

TEST_CASE("uniform, exponential and normal draws have the right moments", "[core][rng]") {
  RngStream r(99);
  const int n = 200000;
  double sum_u = 0, sum_e = 0, sum_n = 0, sum_n2 = 0;
  std::int64_t lo = 100, hi = 0;
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform01();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum_u += u;
    sum_e += r.exponential(4.0);
    const double z = r.normal();
    sum_n += z;
    sum_n2 += z * z;
    const std::int64_t k = r.uniform_int(3, 9);
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  CHECK(sum_u / n == Approx(0.5).margin(0.005));
  CHECK(sum_e / n == Approx(0.25).margin(0.005));
  CHECK(sum_n / n == Approx(0.0).margin(0.01));
  CHECK(sum_n2 / n == Approx(1.0).margin(0.02));
  CHECK(lo == 3);
  CHECK(hi == 9);
}
