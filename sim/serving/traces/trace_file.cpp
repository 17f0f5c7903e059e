#include "sim/serving/traces/trace_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/serving/traces/azure_csv_trace.hpp"
#include "sim/serving/traces/mooncake_trace.hpp"
#include "sim/serving/traces/plain_csv_trace.hpp"
#include "sim/serving/traces/trace_parsing.hpp"

namespace vramsim::serving {
namespace {

// At most 60 bytes of `text` for a message, anything outside printable ASCII shown as '?', so
// that a binary file does not fill the terminal with garbage.
std::string printable_prefix(std::string_view text) {
  constexpr std::size_t kMax = 60;
  std::string out;
  for (const char c : text.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > kMax) out += "...";
  return out;
}

}  // namespace

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
  LineReader lines(path);  // throws for an unreadable path
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".jsonl") return TraceFormat::kMooncake;
  if (ext == ".csv") {
    const auto first = lines.next_data_line();
    const std::string_view header = first ? trim_blanks(*first) : std::string_view();
    if (header == kAzureCsvHeader) return TraceFormat::kAzure;
    if (header == kPlainCsvHeader) return TraceFormat::kCsv;
    if (!first) {
      throw ConfigError("trace", fmt::format("cannot detect the trace format of '{}': it has no "
                                             "header, only blank lines or comments",
                                             path));
    }
    throw ConfigError("trace",
                      fmt::format("cannot detect the trace format of '{}': its header '{}' is "
                                  "neither azure's nor csv's; formats: {}",
                                  path, printable_prefix(header), trace_format_help()));
  }
  throw ConfigError("trace", fmt::format("cannot detect the trace format of '{}' from its "
                                         "extension '{}'; formats: {}",
                                         path, ext, trace_format_help()));
}

std::unique_ptr<TraceSource> open_trace_file(const std::string& path, TraceFormat format,
                                             MalformedRowPolicy policy) {
  if (format == TraceFormat::kAuto) format = detect_trace_format(path);
  switch (format) {
    case TraceFormat::kAuto: break;
    case TraceFormat::kAzure: return std::make_unique<AzureCsvTrace>(path, policy);
    case TraceFormat::kMooncake: return std::make_unique<MooncakeTrace>(path, policy);
    case TraceFormat::kCsv: return std::make_unique<PlainCsvTrace>(path, policy);
  }
  throw ConfigError("trace", fmt::format("cannot open '{}' as format auto", path));
}

}  // namespace vramsim::serving
