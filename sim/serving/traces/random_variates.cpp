#include "sim/serving/traces/random_variates.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"

namespace vramsim::serving {
namespace {

// log1p(x)/x, continuous at 0.
double log1p_over_x(double x) {
  if (std::fabs(x) > 1e-8) return std::log1p(x) / x;
  return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

// expm1(x)/x, continuous at 0.
double expm1_over_x(double x) {
  if (std::fabs(x) > 1e-8) return std::expm1(x) / x;
  return 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
}

}  // namespace

double sample_gamma(RngStream& rng, double shape, double scale) {
  VRAMSIM_CHECK(shape > 0 && scale > 0, "gamma needs shape > 0 and scale > 0, got {} and {}", shape,
                scale);
  if (shape < 1.0) {
    // 1 - U lies in (0, 1], so the power is finite.
    const double boost = std::pow(1.0 - rng.uniform01(), 1.0 / shape);
    return sample_gamma(rng, shape + 1.0, scale) * boost;
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double x = 0.0;
    double v = 0.0;
    do {
      x = rng.normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = 1.0 - rng.uniform01();  // (0, 1]
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v * scale;
    if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v * scale;
  }
}

// Rejection-inversion after Hörmann & Derflinger, "Rejection-inversion to generate variates
// from monotone discrete distributions", ACM TOMACS 6(3), 1996, in the formulation of Apache
// Commons RNG's RejectionInversionZipfSampler, shifted from [1, N] to [min, max].
ZipfSampler::ZipfSampler(double exponent, std::int64_t min_value, std::int64_t max_value)
    : exponent_(exponent), min_(min_value), max_(max_value) {
  VRAMSIM_CHECK(exponent > 0 && min_value >= 1 && min_value <= max_value,
                "zipf needs exponent > 0 and 1 <= min <= max, got {}, [{}, {}]", exponent,
                min_value, max_value);
  const auto lo = static_cast<double>(min_);
  h_integral_min_ = h_integral(lo + 0.5) - h(lo);
  h_integral_max_ = h_integral(static_cast<double>(max_) + 0.5);
  squeeze_ = lo + 1.0 - h_integral_inverse(h_integral(lo + 1.5) - h(lo + 1.0));
}

double ZipfSampler::h(double x) const { return std::exp(-exponent_ * std::log(x)); }

double ZipfSampler::h_integral(double x) const {
  const double log_x = std::log(x);
  return expm1_over_x((1.0 - exponent_) * log_x) * log_x;
}

double ZipfSampler::h_integral_inverse(double x) const {
  double t = x * (1.0 - exponent_);
  t = std::max(t, -1.0);  // guards rounding at the far end
  return std::exp(log1p_over_x(t) * x);
}

std::int64_t ZipfSampler::sample(RngStream& rng) const {
  while (true) {
    const double u = h_integral_max_ + rng.uniform01() * (h_integral_min_ - h_integral_max_);
    const double x = h_integral_inverse(u);
    auto k = static_cast<std::int64_t>(x + 0.5);
    k = std::clamp(k, min_, max_);
    const auto kd = static_cast<double>(k);
    if (kd - x <= squeeze_ || u >= h_integral(kd + 0.5) - h(kd)) return k;
  }
}

double ZipfSampler::probability(std::int64_t n) const {
  if (n < min_ || n > max_) return 0.0;
  double norm = 0.0;
  for (std::int64_t k = min_; k <= max_; ++k) norm += h(static_cast<double>(k));
  return h(static_cast<double>(n)) / norm;
}

}  // namespace vramsim::serving
