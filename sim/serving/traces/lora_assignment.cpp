#include "sim/serving/traces/lora_assignment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sim/core/check.hpp"

namespace vramsim::serving {

void LoraAssignment::parse_distribution(std::string_view text, ValidationReport& report,
                                        const std::string& at) {
  if (text == "uniform") {
    zipf_exponent = 0.0;
    return;
  }
  constexpr std::string_view kZipf = "zipf:";
  if (text.substr(0, kZipf.size()) == kZipf) {
    const std::string_view num = text.substr(kZipf.size());
    double s = 0.0;
    const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), s);
    if (ec == std::errc() && end == num.data() + num.size() && s > 0.0 && s <= 100.0) {
      zipf_exponent = s;
      return;
    }
  }
  report.error(at, fmt::format("expected uniform or zipf:S with an exponent S in (0, 100] "
                               "(zipf:1.2), got '{}'",
                               text));
}

void LoraAssignment::validate(ValidationReport& report, const std::string& at) const {
  if (num_adapters < 0 || num_adapters > 1'000'000) {
    report.error(at + ".num_lora_adapters",
                 fmt::format("must be in [0, 1000000], got {}", num_adapters));
  }
}

LoraAssignedTrace::LoraAssignedTrace(std::unique_ptr<TraceSource> source,
                                     const LoraAssignment& assignment)
    : source_(std::move(source)),
      a_(assignment),
      rng_(RngStreams(assignment.seed).stream("lora-adapters")) {
  VRAMSIM_CHECK(source_ != nullptr && a_.num_adapters >= 1, "LoRA assignment without adapters");
  cdf_.reserve(static_cast<std::size_t>(a_.num_adapters));
  double sum = 0.0;
  for (std::int64_t k = 1; k <= a_.num_adapters; ++k) {
    sum += a_.zipf_exponent > 0.0 ? std::pow(static_cast<double>(k), -a_.zipf_exponent) : 1.0;
    cdf_.push_back(sum);
  }
  for (double& c : cdf_) c /= sum;
}

std::optional<TraceRecord> LoraAssignedTrace::next() {
  std::optional<TraceRecord> r = source_->next();
  if (!r || r->adapter != 0) return r;
  const double u = rng_.uniform01();
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  const auto k = std::min<std::ptrdiff_t>(it - cdf_.begin(), std::ssize(cdf_) - 1);
  r->adapter = static_cast<std::int32_t>(k + 1);
  return r;
}

std::string LoraAssignedTrace::describe() const {
  return fmt::format("{}; LoRA adapters: {} {}", source_->describe(), a_.num_adapters,
                     a_.zipf_exponent > 0.0 ? fmt::format("zipf:{}", a_.zipf_exponent)
                                            : std::string("uniform"));
}

std::unique_ptr<TraceSource> assign_adapters(std::unique_ptr<TraceSource> source,
                                             const LoraAssignment& assignment) {
  if (assignment.num_adapters == 0) return source;
  return std::make_unique<LoraAssignedTrace>(std::move(source), assignment);
}

}  // namespace vramsim::serving
