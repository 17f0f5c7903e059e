#include "sim/serving/roofline_options.hpp"

#include <fmt/format.h>

#include <string>

namespace vramsim::serving {

namespace {

std::string field(std::string_view prefix, std::string_view name) {
  return prefix.empty() ? std::string(name) : fmt::format("{}.{}", prefix, name);
}

void check_fraction(ValidationReport& report, std::string_view prefix, std::string_view name,
                    double value) {
  if (!(value > 0.0 && value <= 1.0)) {
    report.error(field(prefix, name), fmt::format("must be in (0, 1], got {}", value));
  }
}

void check_non_negative(ValidationReport& report, std::string_view prefix, std::string_view name,
                        Duration value) {
  if (value < Duration::zero()) {
    report.error(field(prefix, name),
                 fmt::format("must not be negative, got {} ns", value.nanoseconds()));
  }
}

}  // namespace

void RooflineOptions::validate(ValidationReport& report, std::string_view prefix) const {
  check_fraction(report, prefix, "matmul_efficiency", matmul_efficiency);
  check_fraction(report, prefix, "memory_efficiency", memory_efficiency);
  check_fraction(report, prefix, "prefill_attention_efficiency", prefill_attention_efficiency);
  check_fraction(report, prefix, "decode_attention_efficiency", decode_attention_efficiency);
  check_fraction(report, prefix, "hopper_marlin_moe_efficiency", hopper_marlin_moe_efficiency);
  check_fraction(report, prefix, "hopper_matmul_ogs_moe_efficiency",
                 hopper_matmul_ogs_moe_efficiency);
  check_non_negative(report, prefix, "fa2_mixed_empty_tile", fa2_mixed_empty_tile);
  check_non_negative(report, prefix, "fa2_mixed_decode_tile", fa2_mixed_decode_tile);
  if (!(fa2_mixed_repeat_miss >= 0.0 && fa2_mixed_repeat_miss <= 1.0)) {
    report.error(field(prefix, "fa2_mixed_repeat_miss"),
                 fmt::format("must be in [0, 1], got {}", fa2_mixed_repeat_miss));
  }
  check_non_negative(report, prefix, "step_overhead", step_overhead);
  check_non_negative(report, prefix, "per_sequence_overhead", per_sequence_overhead);
  check_non_negative(report, prefix, "launch_per_layer", launch_per_layer);
  check_non_negative(report, prefix, "kernel_gap", kernel_gap);
  check_non_negative(report, prefix, "gemm_kernel_fixed", gemm_kernel_fixed);
  check_non_negative(report, prefix, "small_kernel_fixed", small_kernel_fixed);
  check_fraction(report, prefix, "pcie_collective_efficiency", pcie_collective_efficiency);
}

}  // namespace vramsim::serving
