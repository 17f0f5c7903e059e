// What a trace reader refuses so that it ends quickly and never wraps the clock (issue 18):
// lines longer than kMaxTraceLineBytes, paths that are not regular files, and arrivals more than
// kMaxTraceSpanNs after the first row, in each of the three file formats.
#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "sim/serving/traces/azure_csv_trace.hpp"
#include "sim/serving/traces/file_trace_source.hpp"
#include "sim/serving/traces/mooncake_trace.hpp"
#include "sim/serving/traces/plain_csv_trace.hpp"
#include "sim/serving/traces/trace_file.hpp"
#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;
using Catch::Matchers::Contains;

namespace {

std::vector<std::string> lines_of(LineReader& reader) {
  std::vector<std::string> out;
  while (const auto line = reader.next_data_line()) out.emplace_back(*line);
  return out;
}

}  // namespace

TEST_CASE("the line reader splits lines across its read chunks and keeps every byte",
          "[serving][traces][limits]") {
  ScratchDir dir("lines");
  // Lines of 1 to 200000 bytes cross the 64 KiB read chunks at every offset kind.
  std::string text;
  std::vector<std::string> expected;
  for (const std::size_t len : {1U, 65535U, 65536U, 65537U, 200000U, 3U}) {
    std::string line(len, 'x');
    line.front() = 'a';
    line.back() = 'z';
    expected.push_back(line);
    text += line + "\n";
  }
  text += "last-without-newline";
  expected.emplace_back("last-without-newline");
  LineReader reader(dir.write("lines", text));
  CHECK(lines_of(reader) == expected);
  CHECK(reader.line_number() == 7);
  CHECK_FALSE(reader.next_data_line().has_value());  // stays at the end
}

TEST_CASE("a line longer than the limit is an error naming file, line and limit",
          "[serving][traces][limits]") {
  ScratchDir dir("long-line");
  const std::string path = dir.write("t.csv", "123456789\n1234567890\n12345678901\n");
  LineReader reader(path, 10);
  CHECK(reader.next_data_line() == "123456789");
  CHECK(reader.next_data_line() == "1234567890");  // exactly the limit is fine
  CHECK_THAT(config_error_of([&] { reader.next_data_line(); }),
             Contains(path + ":3: trace: line 3 is longer than 10 bytes"));
  // The line break and a CRLF's '\r' count: '\r' is part of the line until it is removed.
  const std::string crlf = dir.write("crlf.csv", "1234567890\r\n");
  LineReader crlf_reader(crlf, 10);
  CHECK_THAT(config_error_of([&] { crlf_reader.next_data_line(); }),
             Contains("line 1 is longer than 10 bytes"));
}

TEST_CASE("a trace file of one line past 64 MiB ends with the limit, not with the memory",
          "[serving][traces][limits]") {
  ScratchDir dir("huge-line");
  const std::string path = dir / "zeros.jsonl";
  {
    std::ofstream out(path, std::ios::binary);
    const std::string block(std::size_t{1} << 20, '\0');
    for (int i = 0; i < 65; ++i)
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
  const std::string expected =
      path + ":1: trace: line 1 is longer than 67108864 bytes (64 MiB), the longest line";
  CHECK_THAT(config_error_of([&] { detect_trace_format(path); }), Contains(expected));
  CHECK_THAT(config_error_of([&] {
               MooncakeTrace trace(path, MalformedRowPolicy::kSkip);
               drain(trace);
             }),
             Contains(expected));
}

TEST_CASE("a path that is not a regular file is refused saying what it is",
          "[serving][traces][limits]") {
  ScratchDir dir("not-regular");
  const std::string fifo = dir / "fifo.csv";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  struct Case {
    std::string path;
    std::string says;
  };
  const std::vector<Case> cases = {
      {fifo, "'" + fifo + "' is a FIFO (named pipe), not a regular file"},
      {"/dev/zero", "'/dev/zero' is a character device, not a regular file"},
      {"/dev/null", "'/dev/null' is a character device, not a regular file"},
      {dir / "", "is a directory, not a trace file"},
      {dir / "missing.csv", "cannot open trace file '" + (dir / "missing.csv") + "': no such file"},
  };
  for (const Case& c : cases) {
    INFO(c.path);
    CHECK_THAT(config_error_of([&] { detect_trace_format(c.path); }), Contains(c.says));
    CHECK_THAT(config_error_of([&] { PlainCsvTrace(c.path, MalformedRowPolicy::kError); }),
               Contains(c.says));
  }
  // A symbolic link to a regular file is read through.
  const std::string target =
      dir.write("target.csv", "arrival_s,prompt_tokens,output_tokens\n0,5,1\n");
  const std::string link = dir / "link";
  std::filesystem::create_symlink(target, link);
  CHECK(open_trace_file(link, TraceFormat::kAuto, MalformedRowPolicy::kError)
            ->next()
            ->prompt_tokens == 5);
}

TEST_CASE("an arrival more than 100 years after the first is refused naming file:line",
          "[serving][traces][limits]") {
  // kMaxTraceSpanNs = 3155760000 s; the int64-ns clock ends at 9223372036.854775807 s.
  ScratchDir dir("span");
  struct Case {
    std::string name;
    std::string text;
    TraceFormat format;
    std::int64_t last_accepted_ns;  // the arrival of the row at the limit
  };
  const std::string plain = "arrival_s,prompt_tokens,output_tokens\n";
  const std::string azure = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  const std::vector<Case> cases = {
      {"plain.csv", plain + "5,1,1\n3155760005,1,1\n3155760005.000000001,1,1\n", TraceFormat::kCsv,
       kMaxTraceSpanNs},
      {"plain_far.csv", plain + "0,1,1\n0,1,1\n9000000000,1,1\n", TraceFormat::kCsv, 0},
      // Mooncake timestamps are ms: 9223372036854 ms is the last that fits int64 ns.
      {"mooncake.jsonl",
       R"({"timestamp": 1000, "input_length": 1, "output_length": 1})"
       "\n"
       R"({"timestamp": 3155760001000, "input_length": 1, "output_length": 1})"
       "\n"
       R"({"timestamp": 3155760001001, "input_length": 1, "output_length": 1})"
       "\n",
       TraceFormat::kMooncake, kMaxTraceSpanNs},
      {"mooncake_far.jsonl",
       R"({"timestamp": 0, "input_length": 1, "output_length": 1})"
       "\n"
       R"({"timestamp": 0, "input_length": 1, "output_length": 1})"
       "\n"
       R"({"timestamp": 9223372036854, "input_length": 1, "output_length": 1})"
       "\n",
       TraceFormat::kMooncake, 0},
      // 1970-01-01 + 3155760000 s = 2070-01-01 00:00:00 (36525 days).
      {"azure.csv",
       azure +
           "1970-01-01 00:00:00,1,1\n2070-01-01 00:00:00,1,1\n2070-01-01 00:00:00.000000001,1,1\n",
       TraceFormat::kAzure, kMaxTraceSpanNs},
      {"azure_far.csv",
       azure + "1970-01-01 00:00:00,1,1\n1970-01-01 00:00:00,1,1\n2261-12-31 23:59:59,1,1\n",
       TraceFormat::kAzure, 0},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string path = dir.write(c.name, c.text);
    REQUIRE(detect_trace_format(path) == c.format);
    {
      auto trace = open_trace_file(path, c.format, MalformedRowPolicy::kError);
      CHECK(trace->next()->arrival.nanoseconds() == 0);
      CHECK(trace->next()->arrival.nanoseconds() == c.last_accepted_ns);
      CHECK_THAT(config_error_of([&] { trace->next(); }),
                 Contains(path + ":" + std::to_string(c.format == TraceFormat::kMooncake ? 3 : 4) +
                          ": trace: arrival ") &&
                     Contains("s after the first row's; a trace may span at most 3155760000 s "
                              "(100 years)"));
    }
    auto skipping = open_trace_file(path, c.format, MalformedRowPolicy::kSkip);
    CHECK(drain(*skipping).size() == 2);
    CHECK(skipping->stats().rows_skipped == 1);
  }
}
