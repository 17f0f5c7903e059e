// Strong unit types for the quantities the simulator moves around.
//
//   Bytes      exact, int64 bytes. GiB(1) != GB(1): binary and decimal prefixes never mix.
//   Duration   relative time, int64 nanoseconds.
//   SimTime    absolute simulated time, int64 nanoseconds since the start of a run.
//   Flops      an amount of floating-point work (double: training FLOPs exceed 2^53).
//   Bandwidth  bytes per second (double).
//   FlopRate   FLOP per second (double).
//
// Only meaningful arithmetic is defined: Bytes / Bandwidth -> Duration,
// Flops / FlopRate -> Duration, SimTime + Duration -> SimTime, SimTime - SimTime -> Duration.
// Doubles become integer nanoseconds exactly once, in Duration::from_seconds.
// Parsing of "80GiB", "450GB/s", "400Gbps", "989TFLOPS", "5us" lives in parse_* below.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace vramsim {

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::int64_t n) : n_(n) {}
  constexpr std::int64_t count() const { return n_; }
  /// Value in GiB (2^30 bytes) as a double, for display only.
  constexpr double gib() const { return static_cast<double>(n_) / 1073741824.0; }
  /// Value in MiB (2^20 bytes) as a double, for display only.
  constexpr double mib() const { return static_cast<double>(n_) / 1048576.0; }
  /// Value in GB (10^9 bytes) as a double, for display only.
  constexpr double gb() const { return static_cast<double>(n_) / 1e9; }

  friend constexpr Bytes operator+(Bytes a, Bytes b) { return Bytes(a.n_ + b.n_); }
  friend constexpr Bytes operator-(Bytes a, Bytes b) { return Bytes(a.n_ - b.n_); }
  friend constexpr Bytes operator-(Bytes a) { return Bytes(-a.n_); }
  friend constexpr Bytes operator*(std::int64_t k, Bytes b) { return Bytes(k * b.n_); }
  friend constexpr Bytes operator*(Bytes b, std::int64_t k) { return Bytes(k * b.n_); }
  /// How many whole `b` fit in `a` (floor division; both non-negative).
  friend constexpr std::int64_t operator/(Bytes a, Bytes b) { return a.n_ / b.n_; }
  constexpr Bytes& operator+=(Bytes b) { n_ += b.n_; return *this; }
  constexpr Bytes& operator-=(Bytes b) { n_ -= b.n_; return *this; }
  friend constexpr auto operator<=>(const Bytes&, const Bytes&) = default;

 private:
  std::int64_t n_ = 0;
};

constexpr Bytes KiB(std::int64_t n) { return Bytes(n * (std::int64_t{1} << 10)); }
constexpr Bytes MiB(std::int64_t n) { return Bytes(n * (std::int64_t{1} << 20)); }
constexpr Bytes GiB(std::int64_t n) { return Bytes(n * (std::int64_t{1} << 30)); }
constexpr Bytes TiB(std::int64_t n) { return Bytes(n * (std::int64_t{1} << 40)); }
constexpr Bytes KB(std::int64_t n) { return Bytes(n * 1'000); }
constexpr Bytes MB(std::int64_t n) { return Bytes(n * 1'000'000); }
constexpr Bytes GB(std::int64_t n) { return Bytes(n * 1'000'000'000); }
constexpr Bytes TB(std::int64_t n) { return Bytes(n * 1'000'000'000'000); }

/// Rounds a fractional byte count (e.g. 4.5 bits per weight times a count) to whole bytes, once.
inline Bytes round_to_bytes(double n) { return Bytes(std::llround(n)); }
/// ceil(a / b) for positive b: blocks needed to hold `a`.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
constexpr Bytes max(Bytes a, Bytes b) { return a < b ? b : a; }
constexpr Bytes min(Bytes a, Bytes b) { return a < b ? a : b; }

class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration from_nanoseconds(std::int64_t ns) { return Duration(ns); }
  /// Rounds to the nearest nanosecond, half away from zero (std::llround's rule, without its
  /// library call: the conversion truncates, and a double minus its integer part is exact);
  /// the one place a double becomes simulated time. Inline: step times call it per stage.
  static Duration from_seconds(double s) {
    const double ns = s * 1e9;
    if (!(std::fabs(ns) < 9.2e18)) [[unlikely]] reject_seconds(s);  // NaN fails it too
    auto n = static_cast<std::int64_t>(ns);
    const double frac = ns - static_cast<double>(n);
    if (frac >= 0.5) {
      ++n;
    } else if (frac <= -0.5) {
      --n;
    }
    return Duration(n);
  }
  static constexpr Duration zero() { return Duration(0); }
  static constexpr Duration infinite() { return Duration(std::numeric_limits<std::int64_t>::max()); }
  constexpr std::int64_t nanoseconds() const { return ns_; }
  constexpr double seconds() const { return static_cast<double>(ns_) * 1e-9; }

  friend constexpr Duration operator+(Duration a, Duration b) { return Duration(a.ns_ + b.ns_); }
  friend constexpr Duration operator-(Duration a, Duration b) { return Duration(a.ns_ - b.ns_); }
  friend constexpr Duration operator*(std::int64_t k, Duration d) { return Duration(k * d.ns_); }
  constexpr Duration& operator+=(Duration b) { ns_ += b.ns_; return *this; }
  friend constexpr auto operator<=>(const Duration&, const Duration&) = default;

 private:
  /// Throws (through VRAMSIM_CHECK) for a non-finite time or one past int64 nanoseconds.
  [[noreturn]] static void reject_seconds(double s);
  constexpr explicit Duration(std::int64_t ns) : ns_(ns) {}
  std::int64_t ns_ = 0;
};

constexpr Duration nanoseconds(std::int64_t n) { return Duration::from_nanoseconds(n); }
constexpr Duration microseconds(std::int64_t n) { return Duration::from_nanoseconds(n * 1'000); }
constexpr Duration milliseconds(std::int64_t n) { return Duration::from_nanoseconds(n * 1'000'000); }
constexpr Duration seconds(std::int64_t n) { return Duration::from_nanoseconds(n * 1'000'000'000); }

class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime from_nanoseconds(std::int64_t ns) { return SimTime(ns); }
  static constexpr SimTime zero() { return SimTime(0); }
  constexpr std::int64_t nanoseconds() const { return ns_; }
  constexpr double seconds() const { return static_cast<double>(ns_) * 1e-9; }

  friend constexpr SimTime operator+(SimTime t, Duration d) {
    return SimTime(t.ns_ + d.nanoseconds());
  }
  friend constexpr Duration operator-(SimTime a, SimTime b) {
    return Duration::from_nanoseconds(a.ns_ - b.ns_);
  }
  friend constexpr auto operator<=>(const SimTime&, const SimTime&) = default;

 private:
  constexpr explicit SimTime(std::int64_t ns) : ns_(ns) {}
  std::int64_t ns_ = 0;
};

class Flops {
 public:
  constexpr Flops() = default;
  constexpr explicit Flops(double n) : n_(n) {}
  constexpr double count() const { return n_; }
  friend constexpr Flops operator+(Flops a, Flops b) { return Flops(a.n_ + b.n_); }
  friend constexpr Flops operator*(double k, Flops f) { return Flops(k * f.n_); }
  constexpr Flops& operator+=(Flops b) { n_ += b.n_; return *this; }
  friend constexpr auto operator<=>(const Flops&, const Flops&) = default;

 private:
  double n_ = 0.0;
};

class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_second(double v) { return Bandwidth(v); }
  constexpr double bytes_per_second() const { return v_; }
  friend constexpr Bandwidth operator*(double k, Bandwidth b) { return Bandwidth(k * b.v_); }
  friend constexpr auto operator<=>(const Bandwidth&, const Bandwidth&) = default;

 private:
  constexpr explicit Bandwidth(double v) : v_(v) {}
  double v_ = 0.0;
};

/// Decimal gigabytes per second (10^9 B/s), as datasheets quote HBM and NVLink.
constexpr Bandwidth GBps(double v) { return Bandwidth::bytes_per_second(v * 1e9); }
/// Binary gibibytes per second (2^30 B/s).
constexpr Bandwidth GiBps(double v) { return Bandwidth::bytes_per_second(v * 1073741824.0); }
/// Gigabits per second (10^9 bit/s), as network links are quoted.
constexpr Bandwidth Gbps(double v) { return Bandwidth::bytes_per_second(v * 1e9 / 8.0); }

class FlopRate {
 public:
  constexpr FlopRate() = default;
  static constexpr FlopRate per_second(double v) { return FlopRate(v); }
  constexpr double per_second() const { return v_; }
  friend constexpr FlopRate operator*(double k, FlopRate r) { return FlopRate(k * r.v_); }
  friend constexpr auto operator<=>(const FlopRate&, const FlopRate&) = default;

 private:
  constexpr explicit FlopRate(double v) : v_(v) {}
  double v_ = 0.0;
};

constexpr FlopRate TFLOPS(double v) { return FlopRate::per_second(v * 1e12); }

/// Time to move `size` at `bw`. Requires bw > 0.
Duration operator/(Bytes size, Bandwidth bw);
/// Time to compute `work` at `rate`. Requires rate > 0.
Duration operator/(Flops work, FlopRate rate);

/// Thrown by the parse_* functions; the loader adds the file, line and field.
class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// "80GiB", "79.2 GiB", "16GB", "512MiB", "1024B", "4KiB". A unit is required; "GiB" and "GB"
/// differ; bits ("Gb") are refused for sizes with a hint. Fractional values are rounded to bytes.
Bytes parse_bytes(std::string_view text);
/// "3.35TB/s", "450GB/s", "64GiB/s", "400Gbps" / "400Gb/s" (bits), "25GB/s".
Bandwidth parse_bandwidth(std::string_view text);
/// "989TFLOPS", "989 TFLOP/s", "1.98PFLOPS", "312e12FLOPS".
FlopRate parse_flop_rate(std::string_view text);
/// "5us", "1.5ms", "2s", "100ns".
Duration parse_duration(std::string_view text);

/// "14.96 GiB" style rendering for tables (binary units, two decimals).
std::string format_bytes(Bytes b);

}  // namespace vramsim
