// Random variates the core RNG does not provide, built only on RngStream's uniform01() and
// normal(), so the draws are bit-identical across compilers (no <random> distributions):
//   - gamma (Marsaglia & Tsang 2000), for inter-arrival gaps with a chosen coefficient of
//     variation;
//   - a bounded Zipf / power law over [min, max] by rejection-inversion (Hörmann & Derflinger
//     1996), O(1) per draw and O(1) memory whatever the range.
#pragma once

#include <cstdint>

#include "sim/core/rng.hpp"

namespace vramsim::serving {

/// A Gamma(shape, scale) draw (mean shape*scale, CV 1/sqrt(shape)). Marsaglia & Tsang, "A
/// simple method for generating gamma variables", ACM TOMS 26(3), 2000; for shape < 1 it uses
/// their boost Gamma(shape) = Gamma(shape + 1) * U^(1/shape). Requires shape > 0, scale > 0.
double sample_gamma(RngStream& rng, double shape, double scale);

/// Integers n in [min_value, max_value] with P(n) proportional to n^-exponent.
class ZipfSampler {
 public:
  /// Requires 1 <= min_value <= max_value and exponent > 0.
  ZipfSampler(double exponent, std::int64_t min_value, std::int64_t max_value);
  std::int64_t sample(RngStream& rng) const;
  /// The exact probability of `n` (O(max - min) the first call: sums the normaliser). For tests.
  double probability(std::int64_t n) const;

 private:
  double h(double x) const;           // x^-exponent
  double h_integral(double x) const;  // an antiderivative of h
  double h_integral_inverse(double x) const;

  double exponent_;
  std::int64_t min_;
  std::int64_t max_;
  double h_integral_min_;  // H(min + 1/2) - h(min)
  double h_integral_max_;  // H(max + 1/2)
  double squeeze_;
};

}  // namespace vramsim::serving
