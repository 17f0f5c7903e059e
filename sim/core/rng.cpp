#include "sim/core/rng.hpp"

#include <cmath>

#include "sim/core/check.hpp"

namespace vramsim {

namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

RngStream::RngStream(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

std::uint64_t RngStream::next_u64() {
  // xoshiro256** 1.0 (Blackman & Vigna, 2018).
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double RngStream::uniform01() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

std::int64_t RngStream::uniform_int(std::int64_t lo, std::int64_t hi) {
  VRAMSIM_CHECK(lo <= hi, "uniform_int: empty range [{}, {}]", lo, hi);
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  if (span == 0) return static_cast<std::int64_t>(next_u64());  // the full 64-bit range
  // Rejection sampling: discard the top partial bucket.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  std::uint64_t r = next_u64();
  while (r >= limit) r = next_u64();
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + r % span);
}

double RngStream::exponential(double rate) {
  VRAMSIM_CHECK(rate > 0, "exponential: rate must be positive, got {}", rate);
  // 1 - U lies in (0, 1], so the log is finite.
  return -std::log(1.0 - uniform01()) / rate;
}

double RngStream::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u = 0.0;
  double v = 0.0;
  double s = 0.0;
  do {
    u = 2.0 * uniform01() - 1.0;
    v = 2.0 * uniform01() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double m = std::sqrt(-2.0 * std::log(s) / s);
  spare_ = v * m;
  has_spare_ = true;
  return u * m;
}

RngStream RngStreams::stream(std::string_view name) const {
  return RngStream(seed_ ^ stable_hash(name));
}

}  // namespace vramsim
