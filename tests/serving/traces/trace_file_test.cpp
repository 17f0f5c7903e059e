#include "sim/serving/traces/trace_file.hpp"

#include <string>

#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;
using Catch::Matchers::Contains;

TEST_CASE("auto detection picks the format from the extension and the CSV header",
          "[serving][traces]") {
  ScratchDir dir("detect");
  const std::string azure = dir.write(
      "a.csv", "# comment\nTIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,1,1\n");
  const std::string plain =
      dir.write("p.csv", "arrival_s,prompt_tokens,output_tokens\r\n0,1,1\r\n");
  const std::string mooncake =
      dir.write("m.jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n");
  CHECK(detect_trace_format(azure) == TraceFormat::kAzure);
  CHECK(detect_trace_format(plain) == TraceFormat::kCsv);
  CHECK(detect_trace_format(mooncake) == TraceFormat::kMooncake);
  CHECK(open_trace_file(azure, TraceFormat::kAuto, MalformedRowPolicy::kError)->describe() ==
        "Azure CSV a.csv");
  CHECK(open_trace_file(plain, TraceFormat::kAuto, MalformedRowPolicy::kError)->describe() ==
        "CSV p.csv");
  CHECK(open_trace_file(mooncake, TraceFormat::kAuto, MalformedRowPolicy::kError)->describe() ==
        "Mooncake JSONL m.jsonl");
}

TEST_CASE("an undetectable or missing trace file is an error naming the path and the formats",
          "[serving][traces]") {
  ScratchDir dir("detect-bad");
  const std::string other = dir.write("x.csv", "num_prefill_tokens,num_decode_tokens\n1,1\n");
  const std::string txt = dir.write("x.txt", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n");
  CHECK_THAT(config_error_of([&] { detect_trace_format(other); }),
             Contains("cannot detect the trace format of '" + other + "'") &&
                 Contains("azure (.csv, header TIMESTAMP,ContextTokens,GeneratedTokens)") &&
                 Contains("mooncake (.jsonl"));
  CHECK_THAT(config_error_of([&] { detect_trace_format(txt); }),
             Contains("from its extension '.txt'"));
  const std::string missing = dir / "nope.csv";
  CHECK_THAT(config_error_of(
                 [&] { open_trace_file(missing, TraceFormat::kAuto, MalformedRowPolicy::kError); }),
             Contains("cannot open trace file '" + missing + "'"));
  CHECK_THAT(config_error_of(
                 [&] { open_trace_file(dir / "", TraceFormat::kCsv, MalformedRowPolicy::kError); }),
             Contains("is a directory"));
  // A format given explicitly overrides the extension.
  CHECK(
      open_trace_file(txt, TraceFormat::kCsv, MalformedRowPolicy::kError)->next()->prompt_tokens ==
      1);
}

TEST_CASE("a CSV of only comments, or of binary bytes, is named without dumping its bytes",
          "[serving][traces]") {
  ScratchDir dir("detect-garbage");
  const std::string comments = dir.write("c.csv", "# one\n\n# two\n");
  CHECK_THAT(config_error_of([&] { detect_trace_format(comments); }),
             Contains("'" + comments + "': it has no header, only blank lines or comments"));
  std::string bytes(200, '\x01');
  bytes[3] = '\xff';
  const std::string garbage = dir.write("g.csv", "ab" + bytes + "\n");
  const std::string msg = config_error_of([&] { detect_trace_format(garbage); });
  CHECK_THAT(msg, Contains("its header 'ab???") && Contains("...' is neither"));
  CHECK(msg.find('\x01') == std::string::npos);
}

TEST_CASE("format, kind and policy names round-trip", "[serving][traces]") {
  for (auto f :
       {TraceFormat::kAuto, TraceFormat::kAzure, TraceFormat::kMooncake, TraceFormat::kCsv}) {
    CHECK(trace_format_from_string(to_string(f)) == f);
  }
  CHECK_FALSE(trace_format_from_string("jsonl").has_value());
  CHECK(malformed_row_policy_from_string("skip") == MalformedRowPolicy::kSkip);
  CHECK(malformed_row_policy_from_string("error") == MalformedRowPolicy::kError);
  CHECK_FALSE(malformed_row_policy_from_string("ignore").has_value());
}
