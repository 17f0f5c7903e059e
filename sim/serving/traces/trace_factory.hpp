// The one entry point the simulator uses for its requests: a TraceSpec (a file or a synthetic
// generator, plus transforms) validated up front and opened as a TraceSource.
//
//   TraceSpec spec;                       // or azure_conv_synthetic(n, seed)
//   spec.kind = TraceKind::kFile;
//   spec.path = "AzureLLMInferenceTrace_conv.csv";
//   spec.transforms.time_scale = 2.0;
//   ValidationReport report;
//   spec.validate(report, "workload");    // "workload.time_scale: must be > 0 ..."
//   throw_if_errors(report);
//   std::unique_ptr<TraceSource> trace = open_trace(spec);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/enum_table.hpp"
#include "sim/core/error.hpp"
#include "sim/serving/trace_source.hpp"
#include "sim/serving/traces/file_trace_source.hpp"
#include "sim/serving/traces/lora_assignment.hpp"
#include "sim/serving/traces/synthetic_trace.hpp"
#include "sim/serving/traces/trace_file.hpp"
#include "sim/serving/traces/trace_transforms.hpp"

namespace vramsim::serving {

enum class TraceKind : std::uint8_t { kFile, kSynthetic };
inline constexpr auto kTraceKinds = enum_table<TraceKind>({
    {TraceKind::kFile, "file", "replay a trace file"},
    {TraceKind::kSynthetic, "synthetic", "generate requests from arrival and length laws"},
});
static_assert(covers_every_enumerator(kTraceKinds) && names_are_unique(kTraceKinds));
/// "file", "synthetic".
std::string_view to_string(TraceKind kind);
std::optional<TraceKind> trace_kind_from_string(std::string_view text);

struct TraceSpec {
  TraceKind kind = TraceKind::kSynthetic;
  // kFile:
  std::string path;
  TraceFormat format = TraceFormat::kAuto;
  MalformedRowPolicy malformed_rows = MalformedRowPolicy::kError;
  // kSynthetic:
  SyntheticSpec synthetic;
  // Both:
  TraceTransforms transforms;
  /// LoRA adapters for the records that name none (applied after the transforms).
  LoraAssignment lora;

  /// Reports every bad option, each on "<at>.<key>" with flat keys: path, and those of
  /// SyntheticSpec::validate (kSynthetic only) and TraceTransforms::validate. Does not open
  /// files (open_trace reports a missing one).
  void validate(ValidationReport& report, const std::string& at) const;
};

/// Opens the trace a spec describes, transforms applied. Validates first (field prefix
/// "workload") and throws ConfigError with every problem; throws ConfigError naming the path
/// for a missing or unreadable file, an undetectable format or a wrong header. Data rows are
/// read lazily, so a malformed row surfaces from next().
std::unique_ptr<TraceSource> open_trace(const TraceSpec& spec);

}  // namespace vramsim::serving
