// Deterministic random streams. Each component draws from its own named stream, seeded from the
// scenario's seed and the stream's name, so adding a component never shifts another's draws.
// The generator (xoshiro256**) and every transform are defined here, not by the standard
// library, so results are bit-identical across compilers and platforms.
#pragma once

#include <cstdint>
#include <string_view>

namespace vramsim {

/// 64-bit FNV-1a of a string: stable across runs and platforms (unlike std::hash).
constexpr std::uint64_t stable_hash(std::string_view s) {
  std::uint64_t h = 14695981039346656037ULL;
  for (char c : s) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

class RngStream {
 public:
  /// Seeds the state from `seed` through splitmix64 (the seeding xoshiro's authors recommend).
  explicit RngStream(std::uint64_t seed);
  std::uint64_t next_u64();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform01();
  /// Uniform integer in [lo, hi], inclusive, without modulo bias. Requires lo <= hi.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  /// Exponential with the given rate (mean 1/rate). Requires rate > 0.
  double exponential(double rate);
  /// Standard normal (Marsaglia polar method; deterministic given IEEE arithmetic).
  double normal();

 private:
  std::uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

/// The random streams of one simulation, all derived from its seed.
class RngStreams {
 public:
  explicit RngStreams(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  /// A fresh stream for `name` (e.g. "arrivals", "router"): same seed and name, same draws.
  RngStream stream(std::string_view name) const;

 private:
  std::uint64_t seed_;
};

}  // namespace vramsim
