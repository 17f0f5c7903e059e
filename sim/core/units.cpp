#include "sim/core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <utility>

#include "sim/core/check.hpp"

namespace vramsim {

void Duration::reject_seconds(double s) {
  VRAMSIM_CHECK(std::isfinite(s), "Duration::from_seconds got a non-finite value {}", s);
  VRAMSIM_CHECK(false, "duration of {} s overflows int64 nanoseconds", s);
  std::abort();  // unreachable: VRAMSIM_CHECK(false) throws or aborts
}

Duration operator/(Bytes size, Bandwidth bw) {
  VRAMSIM_CHECK(bw.bytes_per_second() > 0, "bandwidth must be positive, got {} B/s",
                bw.bytes_per_second());
  return Duration::from_seconds(static_cast<double>(size.count()) / bw.bytes_per_second());
}

Duration operator/(Flops work, FlopRate rate) {
  VRAMSIM_CHECK(rate.per_second() > 0, "FLOP rate must be positive, got {} FLOP/s",
                rate.per_second());
  return Duration::from_seconds(work.count() / rate.per_second());
}

namespace {

struct Suffix {
  std::string_view name;
  double factor;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "79.2 GiB" into 79.2 and "GiB". Throws UnitError naming what was expected.
std::pair<double, std::string_view> split_number(std::string_view text, std::string_view what,
                                                 std::string_view example) {
  const std::string_view s = trim(text);
  double value = 0.0;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr == first) {
    throw UnitError(fmt::format("expected a {} such as \"{}\", got \"{}\"", what, example, text));
  }
  if (!std::isfinite(value)) {
    throw UnitError(fmt::format("{} must be finite, got \"{}\"", what, text));
  }
  if (value < 0) {
    throw UnitError(fmt::format("{} must not be negative, got \"{}\"", what, text));
  }
  const std::string_view unit = trim(std::string_view(ptr, static_cast<std::size_t>(last - ptr)));
  if (unit.empty()) {
    throw UnitError(fmt::format("{} \"{}\" has no unit; write it with one, e.g. \"{}\"", what,
                                text, example));
  }
  return {value, unit};
}

template <std::size_t N>
double lookup(const std::array<Suffix, N>& table, std::string_view unit, std::string_view text,
              std::string_view what, std::string_view hint) {
  for (const Suffix& s : table) {
    if (s.name == unit) return s.factor;
  }
  std::string valid;
  for (const Suffix& s : table) {
    if (!valid.empty()) valid += ", ";
    valid += s.name;
  }
  throw UnitError(fmt::format("unknown unit \"{}\" in {} \"{}\"; valid units: {}{}", unit, what,
                              text, valid, hint));
}

constexpr std::array<Suffix, 9> kByteUnits{{
    {"B", 1.0},
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
}};

constexpr std::array<Suffix, 14> kBandwidthUnits{{
    {"B/s", 1.0},
    {"KB/s", 1e3},
    {"MB/s", 1e6},
    {"GB/s", 1e9},
    {"TB/s", 1e12},
    {"KiB/s", 1024.0},
    {"MiB/s", 1048576.0},
    {"GiB/s", 1073741824.0},
    {"TiB/s", 1099511627776.0},
    // Bits per second: network links. 1 Gbps = 1e9 / 8 bytes per second.
    {"Mbps", 1e6 / 8},
    {"Gbps", 1e9 / 8},
    {"Tbps", 1e12 / 8},
    {"Gb/s", 1e9 / 8},
    {"Tb/s", 1e12 / 8},
}};

constexpr std::array<Suffix, 10> kFlopRateUnits{{
    {"FLOPS", 1.0},
    {"GFLOPS", 1e9},
    {"TFLOPS", 1e12},
    {"PFLOPS", 1e15},
    {"FLOP/s", 1.0},
    {"GFLOP/s", 1e9},
    {"TFLOP/s", 1e12},
    {"PFLOP/s", 1e15},
    {"TOPS", 1e12},
    {"POPS", 1e15},
}};

constexpr std::array<Suffix, 5> kDurationUnits{{
    {"ns", 1e-9},
    {"us", 1e-6},
    {"ms", 1e-3},
    {"s", 1.0},
    {"min", 60.0},
}};

}  // namespace

Bytes parse_bytes(std::string_view text) {
  auto [value, unit] = split_number(text, "size", "80GiB");
  std::string_view hint;
  if (unit == "Gb" || unit == "Mb" || unit == "Tb" || unit == "Kb") {
    hint = " (lower-case b means bits; sizes are in bytes: write GB or GiB)";
  } else if (unit == "gb" || unit == "gib" || unit == "G" || unit == "GIB") {
    hint = " (units are case-sensitive: GB = 10^9 bytes, GiB = 2^30 bytes)";
  }
  const double factor = lookup(kByteUnits, unit, text, "size", hint);
  const double bytes = value * factor;
  if (bytes >= 9.2e18) throw UnitError(fmt::format("size \"{}\" is too large", text));
  return round_to_bytes(bytes);
}

Bandwidth parse_bandwidth(std::string_view text) {
  auto [value, unit] = split_number(text, "bandwidth", "450GB/s");
  std::string_view hint;
  if (unit == "GB" || unit == "GiB" || unit == "TB") {
    hint = " (a bandwidth needs a per-second unit: GB/s, or Gbps for bits)";
  }
  return Bandwidth::bytes_per_second(value * lookup(kBandwidthUnits, unit, text, "bandwidth", hint));
}

FlopRate parse_flop_rate(std::string_view text) {
  auto [value, unit] = split_number(text, "FLOP rate", "989TFLOPS");
  return FlopRate::per_second(value * lookup(kFlopRateUnits, unit, text, "FLOP rate", ""));
}

Duration parse_duration(std::string_view text) {
  auto [value, unit] = split_number(text, "duration", "5us");
  const double s = value * lookup(kDurationUnits, unit, text, "duration", "");
  if (s * 1e9 >= 9.2e18) throw UnitError(fmt::format("duration \"{}\" is too large", text));
  return Duration::from_seconds(s);
}

std::string format_bytes(Bytes b) {
  const double abs = std::fabs(static_cast<double>(b.count()));
  if (abs >= 1073741824.0) return fmt::format("{:.2f} GiB", b.gib());
  if (abs >= 1048576.0) return fmt::format("{:.2f} MiB", b.mib());
  if (abs >= 1024.0) return fmt::format("{:.2f} KiB", static_cast<double>(b.count()) / 1024.0);
  return fmt::format("{} B", b.count());
}

}  // namespace vramsim
