#include "sim/training/sample_lengths.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"

namespace vramsim::training {

std::string_view to_string(Packing p) { return name_of(kPackings, p); }
std::optional<Packing> packing_from_string(std::string_view s) { return parse_name(kPackings, s); }
std::string_view packing_names() { return names_list<kPackings>(); }

double attended_pairs(std::int64_t s, std::int64_t window) {
  const double sd = static_cast<double>(s);
  if (window <= 0 || window >= s) return sd * (sd + 1.0) / 2.0;
  const double w = static_cast<double>(window);
  return w * (w + 1.0) / 2.0 + (sd - w) * w;
}

SampleLengths::SampleLengths(std::span<const std::int64_t> lengths) {
  VRAMSIM_CHECK(!lengths.empty(), "no sample lengths");
  std::vector<std::int64_t> sorted(lengths.begin(), lengths.end());
  std::sort(sorted.begin(), sorted.end());
  VRAMSIM_CHECK(sorted.front() >= 1, "sample length {} < 1", sorted.front());
  for (const std::int64_t l : sorted) {
    if (values_.empty() || values_.back() != l) {
      values_.push_back(l);
      counts_.push_back(0);
    }
    ++counts_.back();
  }
  total_ = static_cast<std::int64_t>(sorted.size());
}

std::int64_t SampleLengths::longest(std::int64_t max_len) const {
  return std::min(values_.back(), max_len);
}

template <class F>
double SampleLengths::expectation(std::int64_t max_len, F f) const {
  double sum = 0.0;
  for (std::size_t k = 0; k < values_.size(); ++k) {
    sum += static_cast<double>(counts_[k]) * f(std::min(values_[k], max_len));
  }
  return sum / static_cast<double>(total_);
}

double SampleLengths::mean(std::int64_t max_len) const {
  return expectation(max_len, [](std::int64_t l) { return static_cast<double>(l); });
}

double SampleLengths::expected_longest(std::int64_t n, std::int64_t max_len) const {
  VRAMSIM_CHECK(n >= 1, "expected_longest of {} draws", n);
  const double total = static_cast<double>(total_);
  const double draws = static_cast<double>(n);
  double below = 0.0;  // F before this value, raised to the n-th power
  std::int64_t cumulative = 0;
  double sum = 0.0;
  for (std::size_t k = 0; k < values_.size(); ++k) {
    cumulative += counts_[k];
    const double at = std::pow(static_cast<double>(cumulative) / total, draws);
    sum += static_cast<double>(std::min(values_[k], max_len)) * (at - below);
    below = at;
  }
  return sum;
}

double SampleLengths::mean_pairs(std::int64_t max_len, std::int64_t window) const {
  return expectation(max_len, [window](std::int64_t l) { return attended_pairs(l, window); });
}

double SampleLengths::mean_attended_tokens(std::int64_t max_len, std::int64_t window) const {
  return expectation(max_len, [window](std::int64_t l) {
    const std::int64_t w = window > 0 ? std::min(window, l) : l;
    return static_cast<double>(l) * static_cast<double>(w);
  });
}

}  // namespace vramsim::training
