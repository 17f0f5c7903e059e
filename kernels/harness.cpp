#include "kernels/harness.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "kernels/random_hash.hpp"

namespace vramsim::kernels {

Timer::~Timer() = default;

HarnessOptions parse_options(int argc, char** argv) {
  HarnessOptions o;
  CLI::App app{"vramsim-calibrate: measures this machine's GPUs into a calibration profile"};
  app.add_option("--device-id", o.device_id,
                 "device sheet the profile belongs to (topologies/devices/<id>.toml), e.g. h200");
  app.add_option("--out", o.out, "profile file to write (JSON)");
  app.add_option("--device", o.device, "CUDA device index")->check(CLI::NonNegativeNumber);
  app.add_option("--warmup", o.warmup, "untimed runs before timing")->check(CLI::NonNegativeNumber);
  app.add_option("--repetitions", o.repetitions, "timed runs per point")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-copy-bytes", o.max_copy_bytes, "largest copy")->check(CLI::PositiveNumber);
  app.add_option("--max-collective-bytes", o.max_collective_bytes, "largest collective message")
      ->check(CLI::PositiveNumber);
  app.add_option("--only", o.only,
                 "measurements to run: memory, copy, gemm, decode-attention, "
                 "prefill-attention, collectives")
      ->delimiter(',');
  app.add_option("--driver-version", o.driver_version,
                 "NVIDIA driver version for the profile's identity (nvidia-smi)");
  app.add_flag("--quick", o.quick, "small grids (a smoke test, not a calibration)");
  app.add_flag("--mpi", o.mpi, "one process per GPU, NCCL bootstrapped over MPI");
  app.add_flag("--check-device", o.check_device, "exit 0 when a CUDA device exists, 77 if none");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    throw HelpRequested{};
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(e.what());
  }
  if (!o.check_device) {
    if (o.device_id.empty()) throw std::invalid_argument("--device-id is required");
    if (o.out.empty()) throw std::invalid_argument("--out is required");
  }
  o.command = join_command_line(argc, argv);
  return o;
}

calibration::Timing summarize(std::vector<double> samples_s) {
  if (samples_s.empty()) throw std::invalid_argument("summarize: no samples");
  std::sort(samples_s.begin(), samples_s.end());
  // numpy.quantile's default ("linear"): position q * (n - 1) between order statistics.
  auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(samples_s.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, samples_s.size() - 1);
    const double w = pos - static_cast<double>(lo);
    return samples_s[lo] + w * (samples_s[hi] - samples_s[lo]);
  };
  calibration::Timing t;
  t.median_s = quantile(0.5);
  t.q1_s = quantile(0.25);
  t.q3_s = quantile(0.75);
  t.min_s = samples_s.front();
  t.max_s = samples_s.back();
  t.num_repetitions = static_cast<std::int32_t>(samples_s.size());
  return t;
}

calibration::Timing time_repetitions(Timer& timer, int warmup, int repetitions,
                                     const std::function<void()>& work) {
  if (repetitions < 1) throw std::invalid_argument("time_repetitions: repetitions < 1");
  for (int i = 0; i < warmup; ++i) work();
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(repetitions));
  for (int i = 0; i < repetitions; ++i) {
    timer.start();
    work();
    samples.push_back(timer.stop_s());
  }
  return summarize(std::move(samples));
}

calibration::CheckOutcome compare(std::span<const float> got, std::span<const float> reference,
                                  double rtol, double atol) {
  if (got.size() != reference.size()) {
    throw std::invalid_argument(fmt::format("compare: {} values against {} reference values",
                                            got.size(), reference.size()));
  }
  if (got.empty()) return calibration::CheckOutcome::kNotChecked;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], r = reference[i];
    if (!(std::abs(g - r) <= atol + rtol * std::abs(r))) return calibration::CheckOutcome::kFailed;
  }
  return calibration::CheckOutcome::kPassed;
}

std::uint16_t float_to_bf16(float f) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

float bf16_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float random_bf16_value(std::uint64_t index, std::uint64_t seed, float scale) {
  return bf16_to_float(float_to_bf16(hash_uniform(seed, index, scale)));
}

std::vector<float> random_values(std::size_t n, std::uint64_t seed) {
  std::vector<float> out(n);
  std::uint64_t state = seed;
  for (float& v : out) {
    state += 0x9e3779b97f4a7c15ull;  // splitmix64 (Steele, Lea, Flood 2014)
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    v = static_cast<float>(static_cast<double>(z >> 40) / 16777216.0 * 2.0 - 1.0);
  }
  return out;
}

std::vector<std::int64_t> doubling_sizes(std::int64_t min_bytes, std::int64_t max_bytes) {
  if (min_bytes < 1 || max_bytes < min_bytes) {
    throw std::invalid_argument(fmt::format("doubling_sizes({}, {})", min_bytes, max_bytes));
  }
  std::vector<std::int64_t> out;
  for (std::int64_t s = min_bytes; s <= max_bytes; s *= 2) {
    out.push_back(s);
    if (s > max_bytes / 2) break;
  }
  return out;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string join_command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.find_first_of(" \t'\"") != std::string::npos) {
      std::string quoted = "'";
      for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      a = quoted + "'";
    }
    out += (i == 0 ? "" : " ") + a;
  }
  return out;
}

}  // namespace vramsim::kernels
