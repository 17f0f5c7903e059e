#include "sim/serving/traces/trace_factory.hpp"

#include <fmt/format.h>

#include "sim/core/check.hpp"

namespace vramsim::serving {

std::string_view to_string(TraceKind kind) { return name_of(kTraceKinds, kind); }
std::optional<TraceKind> trace_kind_from_string(std::string_view text) {
  return parse_name(kTraceKinds, text);
}

void TraceSpec::validate(ValidationReport& report, const std::string& at) const {
  const std::string p = at.empty() ? std::string() : at + ".";
  switch (kind) {
    case TraceKind::kFile:
      if (path.empty()) report.error(p + "path", "a file trace needs a path");
      break;
    case TraceKind::kSynthetic: synthetic.validate(report, at); break;
  }
  transforms.validate(report, at);
  lora.validate(report, at);
}

std::unique_ptr<TraceSource> open_trace(const TraceSpec& spec) {
  ValidationReport report;
  spec.validate(report, "workload");
  throw_if_errors(report);
  std::unique_ptr<TraceSource> source;
  switch (spec.kind) {
    case TraceKind::kFile:
      source = open_trace_file(spec.path, spec.format, spec.malformed_rows);
      break;
    case TraceKind::kSynthetic: source = std::make_unique<SyntheticTrace>(spec.synthetic); break;
  }
  return assign_adapters(apply_transforms(std::move(source), spec.transforms), spec.lora);
}

}  // namespace vramsim::serving
