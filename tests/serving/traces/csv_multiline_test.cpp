// RFC 4180 records that span lines (issue 18, "valid inputs refused"): section 2, rule 6 lets a
// quoted field hold line breaks (CRLF, and LF as pandas and Python's csv module write and read
// it), so a record may cover several physical lines. The CSV trace readers (plain CSV, Azure CSV,
// the vidur length statistics) read records: errors name the line a record starts on, the lines
// after it keep their numbers, and the 64 MiB line cap applies to the whole record.
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/serving/traces/azure_csv_trace.hpp"
#include "sim/serving/traces/file_trace_source.hpp"
#include "sim/serving/traces/length_distribution.hpp"
#include "sim/serving/traces/plain_csv_trace.hpp"
#include "sim/serving/traces/trace_parsing.hpp"
#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;
using Catch::Matchers::Contains;

namespace {

struct ScanCase {
  std::string_view name;
  std::vector<std::string_view> pieces;  // fed to one scanner in order
  bool in_quoted_field = false;          // after the last piece
};

struct Record {
  std::string text;
  std::int64_t first_line = 0;
  std::int64_t last_line = 0;
  bool operator==(const Record&) const = default;
};

struct RecordCase {
  std::string_view name;
  std::string_view file;
  std::vector<Record> records;
};

struct TraceCase {
  std::string_view name;
  std::string file;
  MalformedRowPolicy policy = MalformedRowPolicy::kError;
  std::string_view error;  // "" when the file reads; else a substring after "<path>"
  std::int64_t rows = 0;   // rows read when it reads
  std::int64_t first_skipped_line = 0;
};

std::vector<Record> records_of(LineReader& reader) {
  std::vector<Record> out;
  while (const auto r = reader.next_csv_record()) {
    out.push_back({std::string(*r), reader.line_number(), reader.last_line_number()});
  }
  return out;
}

constexpr std::string_view kPlainHeader = "arrival_s,prompt_tokens,output_tokens\n";

}  // namespace

TEST_CASE("the quote scanner knows whether a line break lies inside a quoted field",
          "[serving][traces][csv]") {
  const std::vector<ScanCase> cases = {
      {"no quotes", {"0,1,2"}, false},
      {"a closed quoted field", {R"("0","1","2")"}, false},
      {"an open quote", {R"(0,"1)"}, true},
      {"an open quote closed on the next line", {R"(0,"1)", "\n2\",3"}, false},
      {"a doubled quote keeps the field open", {R"("a"")"}, true},
      {"a doubled quote, then the closing one", {R"("a""")"}, false},
      {"a quote split from its twin across pieces", {R"("a")", R"("b)"}, true},
      {"a closing quote at the end of a piece", {R"("a)", R"(b")"}, false},
      {"blanks before the opening quote", {" \t\"a"}, true},
      {"a quote inside an unquoted field is a character", {R"(ab"c,d)"}, false},
      {"a quote after an unquoted field's comma opens one", {R"(ab"c,"d)"}, true},
      {"text after a closing quote, then a quote", {R"("a"x"b)"}, false},
      {"a comma inside quotes does not end the field", {R"("a,b)"}, true},
      {"a CRLF inside quotes", {"\"a\r", "\nb"}, true},
      {"many lines inside one field", {"1,\"a", "\n", "\n#not a comment", "\n\"\"\"", ",2"},
       false},
  };
  for (const ScanCase& c : cases) {
    INFO(c.name);
    CsvQuoteScanner q;
    for (std::string_view piece : c.pieces) q.scan(piece);
    CHECK(q.in_quoted_field() == c.in_quoted_field);
  }
}

TEST_CASE("a CSV record spans lines while a quoted field is open, numbered by its first line",
          "[serving][traces][csv]") {
  const std::vector<RecordCase> cases = {
      {"one record per line", "a,b\n1,2\n3,4", {{"a,b", 1, 1}, {"1,2", 2, 2}, {"3,4", 3, 3}}},
      {"an LF inside quotes", "h\n1,\"x\ny\",2\n3\n",
       {{"h", 1, 1}, {"1,\"x\ny\",2", 2, 3}, {"3", 4, 4}}},
      {"a CRLF inside quotes is kept, the record's own CRLF removed",
       "h\r\n1,\"x\r\ny\",2\r\n3\r\n",
       {{"h", 1, 1}, {"1,\"x\r\ny\",2", 2, 3}, {"3", 4, 4}}},
      {"blank and '#' lines inside quotes belong to the field", "\"a\n\n# no comment\nb\"\n#c\n2",
       {{"\"a\n\n# no comment\nb\"", 1, 4}, {"2", 6, 6}}},
      {"a field of several lines beside others", "\"1\",\"a\nb\nc\",\"d\ne\"\n",
       {{"\"1\",\"a\nb\nc\",\"d\ne\"", 1, 4}}},
      {"a doubled quote before the line break stays inside", "\"say \"\"\nhi\"\"\"\nz",
       {{"\"say \"\"\nhi\"\"\"", 1, 2}, {"z", 3, 3}}},
      {"a field closed at the line end ends the record", "\"a\"\n\"b\"\n",
       {{"\"a\"", 1, 1}, {"\"b\"", 2, 2}}},
      {"comments and blank lines before a record are skipped, counted", "# c\n\n\"a\nb\"\n",
       {{"\"a\nb\"", 3, 4}}},
      {"a BOM before a quoted header", "\xEF\xBB\xBF\"a\nb\",c\n1",
       {{"\"a\nb\",c", 1, 2}, {"1", 3, 3}}},
      {"an unclosed quote runs to the end of the file", "h\n\"x,1\n2,3\n4,5",
       {{"h", 1, 1}, {"\"x,1\n2,3\n4,5", 2, 4}}},
      {"an unclosed quote ending in a line break", "h\n\"x\n",
       {{"h", 1, 1}, {"\"x", 2, 2}}},
  };
  ScratchDir dir("csv-records");
  for (const RecordCase& c : cases) {
    INFO(c.name);
    LineReader reader(dir.write("t.csv", c.file));
    CHECK(records_of(reader) == c.records);
    CHECK_FALSE(reader.next_csv_record().has_value());  // stays at the end
  }
}

TEST_CASE("the line cap applies to a whole CSV record, named by the line it starts on",
          "[serving][traces][csv][limits]") {
  struct CapCase {
    std::string_view name;
    std::string_view file;
    std::int64_t records_before_error = 0;
    std::string_view error;  // "" when every record fits
  };
  // A cap of 10 bytes; inner line breaks count, the record's own line ending does not.
  const std::vector<CapCase> cases = {
      {"a record of exactly 10 bytes over two lines", "h\n\"1234\n678\"\nz\n", 3, ""},
      {"a record of 11 bytes over two lines", "h\n\"1234\n6789\"\nz\n", 1,
       ":2: trace: the CSV record starting at line 2 is longer than 10 bytes (0 MiB, the longest record a trace may hold) by line 3"},
      {"an unclosed quote over many short lines", "h\n\"1\n2\n3\n4\n5\n6\n7\n", 1,
       "by line 7: a quoted field opened on line 2 is not closed"},
      {"a record whose first 10 bytes fill the cap before its line break", "\"123456789\nx\"", 0,
       ":1: trace: the CSV record starting at line 1 is longer than 10 bytes (0 MiB, the longest record a trace may hold) by line 2"},
      {"one long line is still a long line", "h\n\"12345678901\"\n", 1,
       ":2: trace: line 2 is longer than 10 bytes"},
  };
  ScratchDir dir("csv-record-cap");
  for (const CapCase& c : cases) {
    INFO(c.name);
    const std::string path = dir.write("t.csv", c.file);
    LineReader reader(path, 10);
    std::int64_t n = 0;
    const std::string error = config_error_of([&] {
      while (reader.next_csv_record()) ++n;
    });
    CAPTURE(error);
    CHECK(n == c.records_before_error);
    if (c.error.empty()) {
      CHECK(error == "no error");  // config_error_of's answer when nothing throws
    } else {
      CHECK_THAT(error, Contains(std::string(c.error)));
      if (c.error.front() == ':') CHECK_THAT(error, Contains(path + std::string(c.error)));
    }
  }
}

TEST_CASE("the CSV trace readers read records across lines and name the line a record starts on",
          "[serving][traces][csv]") {
  const std::string h(kPlainHeader);
  const std::vector<TraceCase> plain = {
      {"a line break inside a quoted arrival", h + "0,1,1\n\"1\n\",2,2\n3,3,3\n",
       MalformedRowPolicy::kError,
       ":3: trace: arrival_s: expected a non-negative finite number of seconds, got '1?'"},
      {"the error says which lines the record spans", h + "0,1,1\n\"1\r\n\r\n\",2,2\n",
       MalformedRowPolicy::kError, ":3: trace: arrival_s"},
      {"... and the span", h + "0,1,1\n\"1\r\n\r\n\",2,2\n", MalformedRowPolicy::kError,
       "(the record spans lines 3-5: a quoted field holds a line break)"},
      {"skipped, a record is one row and later lines keep their numbers",
       h + "0,1,1\n\"x\ny\nz\",2,2\n5,3,3\nbad,1,1\n7,4,4\n", MalformedRowPolicy::kSkip, "", 3, 3},
      {"the first skipped line is a record's first line",
       h + "0,1,1\n1,1,1\n2,\"a\nb\",1\n", MalformedRowPolicy::kSkip, "", 2, 4},
      {"a multi-line record's error is at its first line, not its last",
       h + "0,1,1\n1,\"2\n\n\",3\n4,x,1\n", MalformedRowPolicy::kError,
       ":3: trace: prompt_tokens: expected an integer"},
      {"an unclosed quote runs to the end of the file, named at its first line",
       h + "0,1,1\n\"2,1,1\n3,1,1\n4,1,1\n", MalformedRowPolicy::kError,
       ":3: trace: field 1: its opening quote is not closed by the end of the record"},
      {"an unclosed quote skipped takes the rest of the file as one row",
       h + "0,1,1\n\"2,1,1\n3,1,1\n4,1,1\n", MalformedRowPolicy::kSkip, "", 1, 3},
      {"a header name holding a line break", "\"arrival_s\n\",prompt_tokens,output_tokens\n0,1,1\n",
       MalformedRowPolicy::kError, ":1: trace: expected the header"},
      {"a header name holding a line break, the span named",
       "\"arrival_s\n\",prompt_tokens,output_tokens\n0,1,1\n", MalformedRowPolicy::kError,
       "(the record spans lines 1-2"},
      {"quoted rows without line breaks read as before",
       "\"arrival_s\",\"prompt_tokens\",\"output_tokens\"\r\n\"0\",\"1\",\"1\"\r\n\"1\",\"2\",\"2\"\r\n",
       MalformedRowPolicy::kError, "", 2},
  };
  ScratchDir dir("csv-multiline-plain");
  for (const TraceCase& c : plain) {
    INFO(c.name);
    const std::string path = dir.write("t.csv", c.file);
    TraceStats stats;
    std::size_t rows = 0;
    const std::string error = config_error_of([&] {
      PlainCsvTrace trace(path, c.policy);
      rows = drain(trace).size();
      stats = trace.stats();
    });
    CAPTURE(error);
    if (c.error.empty()) {
      CHECK(error == "no error");  // config_error_of's answer when nothing throws
      CHECK(static_cast<std::int64_t>(rows) == c.rows);
      CHECK(stats.first_skipped_line == c.first_skipped_line);
    } else {
      CHECK_THAT(error, Contains(c.error.front() == ':' ? path + std::string(c.error)
                                                        : std::string(c.error)));
    }
  }
}

TEST_CASE("the Azure reader reads records across lines too", "[serving][traces][csv]") {
  ScratchDir dir("csv-multiline-azure");
  const std::string header = "\"TIMESTAMP\",\"ContextTokens\",\"GeneratedTokens\"\r\n";
  const std::string row1 = "\"2023-11-16 18:15:46.6805900\",\"374\",\"44\"\r\n";
  const std::string broken = "\"2023-11-16\r\n18:15:50.7487730\",\"396\",\"109\"\r\n";
  const std::string row4 = "\"2023-11-16 18:15:51.0000000\",\"10\",\"1\"\r\n";
  const std::string path = dir.write("azure.csv", header + row1 + broken + row4);
  CHECK_THAT(config_error_of([&] {
               AzureCsvTrace trace(path, MalformedRowPolicy::kError);
               drain(trace);
             }),
             Contains(path + ":3: trace: TIMESTAMP: expected 'YYYY-MM-DD HH:MM:SS.fffffff'") &&
                 Contains("(the record spans lines 3-4"));
  AzureCsvTrace skipping(path, MalformedRowPolicy::kSkip);
  const std::vector<TraceRecord> rows = drain(skipping);
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].line == 5);
  CHECK(rows[1].prompt_tokens == 10);
  CHECK(skipping.stats().rows_skipped == 1);
  CHECK(skipping.stats().first_skipped_line == 3);
}

TEST_CASE("a length-statistics CSV with a multi-line quoted extra column reads every row",
          "[serving][traces][csv]") {
  ScratchDir dir("csv-multiline-stats");
  // The vidur statistics allow columns past the first two; a note column may hold line breaks.
  const std::string stats = dir.write(
      "s.csv",
      "\"num_prefill_tokens\",\"num_decode_tokens\",\"note\"\n"
      "74,918,\"two\nlines\"\n290,905,\"a \"\"quoted\"\"\r\nnote\"\n12,7,x\n");
  CHECK(read_trace_lengths(stats, LengthRole::kPrompt) == std::vector<std::int32_t>{74, 290, 12});
  CHECK(read_trace_lengths(stats, LengthRole::kOutput) == std::vector<std::int32_t>{918, 905, 7});
  // A bad row after a multi-line one is named by its own line: 7, not 4.
  const std::string bad = dir.write(
      "b.csv", "num_prefill_tokens,num_decode_tokens,note\n1,2,\"a\nb\nc\"\n3,4,x\n5,6,y\n0,1,z\n");
  CHECK_THAT(config_error_of([&] { read_trace_lengths(bad, LengthRole::kPrompt); }),
             Contains(bad + ":7: trace: num_prefill_tokens: expected an integer"));
}

TEST_CASE("a plain CSV whose unclosed quote runs past 64 MiB ends at the cap, naming its line",
          "[serving][traces][csv][limits]") {
  ScratchDir dir("csv-record-huge");
  const std::string path = dir / "t.csv";
  {
    std::ofstream out(path, std::ios::binary);
    out << kPlainHeader << "0,1,1\n\"1,1,1\n";
    const std::string line = std::string((std::size_t{1} << 20) - 1, '7') + "\n";  // 1 MiB
    for (int i = 0; i < 65; ++i) out.write(line.data(), static_cast<std::streamsize>(line.size()));
  }
  // The skip policy does not hide it: the cap guards the memory, not a row's content.
  CHECK_THAT(config_error_of([&] {
               PlainCsvTrace trace(path, MalformedRowPolicy::kSkip);
               drain(trace);
             }),
             Contains(path + ":3: trace: the CSV record starting at line 3 is longer than "
                             "67108864 bytes (64 MiB, the longest record a trace may hold) by "
                             "line 67"));
}
