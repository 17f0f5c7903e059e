#include "sim/serving/traces/trace_file.hpp"

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/serving/traces/azure_csv_trace.hpp"
#include "sim/serving/traces/mooncake_trace.hpp"
#include "sim/serving/traces/plain_csv_trace.hpp"
#include "sim/serving/traces/trace_parsing.hpp"

namespace vramsim::serving {

std::string_view to_string(TraceFormat format) { return name_of(kTraceFormats, format); }

std::optional<TraceFormat> trace_format_from_string(std::string_view text) {
  return parse_name(kTraceFormats, text);
}

std::string_view trace_format_help() {
  static const std::string help = [] {
    std::string out;
    for (const EnumRow<TraceFormat>& r : kTraceFormats.rows) {
      if (r.value != TraceFormat::kAuto) out += fmt::format("{} ({}), ", r.name, r.description);
    }
    return out + fmt::format("{} ({})", to_string(TraceFormat::kAuto),
                             description_of(kTraceFormats, TraceFormat::kAuto));
  }();
  return help;
}

TraceFormat detect_trace_format(const std::string& path) {
  LineReader lines(path);  // throws for a missing, unreadable or non-regular path
  const std::optional<std::string_view> first = lines.next_data_line();
  if (!first) {
    throw ConfigError("trace",
                      fmt::format("cannot detect the trace format of '{}': it has no header, only "
                                  "blank lines or comments",
                                  path),
                      {path, 0});
  }
  const std::string_view content = trim_blanks(*first);
  if (content.starts_with('{')) return TraceFormat::kMooncake;
  if (csv_header_is(content, kAzureCsvHeader)) return TraceFormat::kAzure;
  if (csv_header_is(content, kPlainCsvHeader)) return TraceFormat::kCsv;
  throw ConfigError(
      "trace",
      fmt::format("cannot detect the trace format of '{}': its first line '{}' is neither a JSON "
                  "object (mooncake) nor the header of azure or csv; name the format with "
                  "--trace-format (workload.format in a scenario): {}",
                  path, message_excerpt(content), trace_format_help()),
      {path, static_cast<int>(lines.line_number())});
}

std::unique_ptr<TraceSource> open_trace_file(const std::string& path, TraceFormat format,
                                             MalformedRowPolicy policy) {
  if (format == TraceFormat::kAuto) format = detect_trace_format(path);
  switch (format) {
    case TraceFormat::kAuto:
      break;
    case TraceFormat::kAzure:
      return std::make_unique<AzureCsvTrace>(path, policy);
    case TraceFormat::kMooncake:
      return std::make_unique<MooncakeTrace>(path, policy);
    case TraceFormat::kCsv:
      return std::make_unique<PlainCsvTrace>(path, policy);
  }
  throw ConfigError("trace", fmt::format("cannot open '{}' as format auto", path));
}

}  // namespace vramsim::serving
