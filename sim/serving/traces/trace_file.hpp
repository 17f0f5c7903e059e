// Opening a trace file by format name, or by detection ("auto") from the file's first line
// that is neither blank nor a '#' comment, whatever the file's name or extension:
//
//   starts with '{'                                              -> mooncake (JSON lines)
//   the CSV header TIMESTAMP,ContextTokens,GeneratedTokens       -> azure
//   the CSV header arrival_s,prompt_tokens,output_tokens         -> csv
//   anything else -> ConfigError naming the file, its line, --trace-format and the formats
//
// CSV headers may be quoted as RFC 4180 does ("TIMESTAMP","ContextTokens",...).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/enum_table.hpp"
#include "sim/serving/trace_source.hpp"
#include "sim/serving/traces/file_trace_source.hpp"

namespace vramsim::serving {

enum class TraceFormat : std::uint8_t { kAuto, kAzure, kMooncake, kCsv };
inline constexpr auto kTraceFormats = enum_table<TraceFormat>({
    {TraceFormat::kAuto, "auto", "detect from the file's first line"},
    {TraceFormat::kAzure, "azure", "CSV, header TIMESTAMP,ContextTokens,GeneratedTokens"},
    {TraceFormat::kMooncake, "mooncake",
     "JSON lines: timestamp, input_length, output_length, hash_ids"},
    {TraceFormat::kCsv, "csv", "CSV, header arrival_s,prompt_tokens,output_tokens"},
});
static_assert(covers_every_enumerator(kTraceFormats) && names_are_unique(kTraceFormats));

/// "auto", "azure", "mooncake", "csv".
std::string_view to_string(TraceFormat format);
std::optional<TraceFormat> trace_format_from_string(std::string_view text);
/// The accepted names and what each reads, one line, for error messages and --help.
/// "azure (.csv, ...), mooncake (...), csv (...), auto (...)": the formats with their
/// descriptions, auto last.
std::string_view trace_format_help();

/// The concrete format of `path` (never kAuto), from its content alone. Reads at most the first
/// data line. Throws ConfigError naming the path (and line) if it cannot be read or matches no
/// format; that message names --trace-format.
TraceFormat detect_trace_format(const std::string& path);

/// Opens `path` as `format` (kAuto: detect_trace_format). Throws ConfigError naming the path
/// for an unreadable file, an undetectable format or a wrong header.
std::unique_ptr<TraceSource> open_trace_file(const std::string& path, TraceFormat format,
                                             MalformedRowPolicy policy);

}  // namespace vramsim::serving
