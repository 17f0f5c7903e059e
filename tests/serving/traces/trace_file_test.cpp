#include "sim/serving/traces/trace_file.hpp"

#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;
using Catch::Matchers::Contains;

TEST_CASE("auto detection picks the format from the first line, whatever the file's name",
          "[serving][traces]") {
  ScratchDir dir("detect");
  const std::string azure_text =
      "# comment\nTIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,1,1\n";
  const std::string plain_text = "arrival_s,prompt_tokens,output_tokens\r\n0,1,1\r\n";
  const std::string mooncake_text =
      "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [7]}\n";
  struct Case {
    std::string name;
    std::string text;
    TraceFormat format;
    std::string description;
  };
  const std::vector<Case> cases = {
      {"a.csv", azure_text, TraceFormat::kAzure, "Azure CSV a.csv"},
      {"A.CSV", azure_text, TraceFormat::kAzure, "Azure CSV A.CSV"},
      {"azure_trace", azure_text, TraceFormat::kAzure, "Azure CSV azure_trace"},
      {"p.csv", plain_text, TraceFormat::kCsv, "CSV p.csv"},
      {"p.CSV", plain_text, TraceFormat::kCsv, "CSV p.CSV"},
      {"p.txt", plain_text, TraceFormat::kCsv, "CSV p.txt"},
      {"requests", plain_text, TraceFormat::kCsv, "CSV requests"},
      {"q.csv",
       "\xEF\xBB\xBF\"arrival_s\",\"prompt_tokens\",\"output_tokens\"\n\"0\",\"1\",\"1\"\n",
       TraceFormat::kCsv, "CSV q.csv"},
      {"m.jsonl", mooncake_text, TraceFormat::kMooncake, "Mooncake JSONL m.jsonl"},
      {"m.json", mooncake_text, TraceFormat::kMooncake, "Mooncake JSONL m.json"},
      {"m.JSONL", mooncake_text, TraceFormat::kMooncake, "Mooncake JSONL m.JSONL"},
      {"mooncake", "\n  " + mooncake_text, TraceFormat::kMooncake, "Mooncake JSONL mooncake"},
      // A .csv holding JSON lines is read as what it holds.
      {"m.csv", mooncake_text, TraceFormat::kMooncake, "Mooncake JSONL m.csv"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string path = dir.write(c.name, c.text);
    CHECK(detect_trace_format(path) == c.format);
    const auto source = open_trace_file(path, TraceFormat::kAuto, MalformedRowPolicy::kError);
    CHECK(source->describe() == c.description);
    CHECK(source->next()->prompt_tokens == 1);
  }
}

TEST_CASE("an undetectable or missing trace file is an error naming the path and --trace-format",
          "[serving][traces]") {
  ScratchDir dir("detect-bad");
  const std::string other = dir.write("x.csv", "num_prefill_tokens,num_decode_tokens\n1,1\n");
  CHECK_THAT(config_error_of([&] { detect_trace_format(other); }),
             Contains(other + ":1: trace: cannot detect the trace format of '" + other + "'") &&
                 Contains("its first line 'num_prefill_tokens,num_decode_tokens'") &&
                 Contains("name the format with --trace-format") &&
                 Contains("azure (CSV, header TIMESTAMP,ContextTokens,GeneratedTokens)") &&
                 Contains("mooncake (JSON lines"));
  // The header is found after comments and blank lines; the message names its line.
  const std::string late = dir.write("late", "# made by hand\n\nTIMESTAMP,Context,Generated\n");
  CHECK_THAT(config_error_of([&] { detect_trace_format(late); }),
             Contains(late + ":3: trace: cannot detect"));
  const std::string missing = dir / "nope.csv";
  CHECK_THAT(config_error_of(
                 [&] { open_trace_file(missing, TraceFormat::kAuto, MalformedRowPolicy::kError); }),
             Contains("cannot open trace file '" + missing + "'"));
  CHECK_THAT(config_error_of(
                 [&] { open_trace_file(dir / "", TraceFormat::kCsv, MalformedRowPolicy::kError); }),
             Contains("is a directory"));
  // A format given explicitly overrides detection: this Mooncake-looking .csv is then a bad CSV.
  const std::string json_csv = dir.write("j.csv", "{\"timestamp\": 0}\n");
  CHECK_THAT(config_error_of(
                 [&] { open_trace_file(json_csv, TraceFormat::kCsv, MalformedRowPolicy::kError); }),
             Contains(json_csv + ":1: trace: expected the header"));
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
  CHECK_THAT(msg, Contains("its first line 'ab???") && Contains("...' is neither"));
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
