// RFC 4180 quoting in the CSV trace readers (issue 18, "valid inputs refused"). The quoted forms
// are what pandas' DataFrame.to_csv writes: quoting=csv.QUOTE_ALL quotes every field and header
// name, QUOTE_NONNUMERIC every non-number (the Azure timestamps), and a field holding a comma or
// a quote is quoted with the quote doubled (RFC 4180 section 2, rules 5-7).
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "sim/serving/traces/azure_csv_trace.hpp"
#include "sim/serving/traces/plain_csv_trace.hpp"
#include "sim/serving/traces/trace_file.hpp"
#include "sim/serving/traces/trace_parsing.hpp"
#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;
using Catch::Matchers::Contains;

namespace {

struct SplitCase {
  std::string_view name;
  std::string_view line;
  std::vector<std::string_view> fields;
};

struct BadSplitCase {
  std::string_view name;
  std::string_view line;
  std::string_view error;
};

}  // namespace

TEST_CASE("a CSV record splits as RFC 4180 quotes it", "[serving][traces][csv]") {
  const std::vector<SplitCase> cases = {
      {"plain fields", "0.5,12,3", {"0.5", "12", "3"}},
      {"every field quoted", R"("0.5","12","3")", {"0.5", "12", "3"}},
      {"some fields quoted", R"(0.5,"12",3)", {"0.5", "12", "3"}},
      {"a comma inside quotes", R"("a,b",c)", {"a,b", "c"}},
      {"a doubled quote", R"("say ""hi""",x)", {"say \"hi\"", "x"}},
      {"only a doubled quote", R"("""")", {"\""}},
      {"an empty quoted field", R"("",1)", {"", "1"}},
      {"blanks around the quotes", R"(  "0.5" , "12"	,3)", {"0.5", "12", "3"}},
      {"blanks inside the quotes", R"(" 0.5 ",12)", {"0.5", "12"}},
      {"an empty last field", "1,", {"1", ""}},
      {"an empty line", "", {""}},
      {"a quote inside an unquoted field stays", R"(ab"c,d)", {"ab\"c", "d"}},
      {"a quoted Azure timestamp",
       R"("2023-11-16 18:15:46.6805900","374","44")",
       {"2023-11-16 18:15:46.6805900", "374", "44"}},
  };
  CsvRecordSplitter csv;
  for (const SplitCase& c : cases) {
    INFO(c.name << ": " << c.line);
    std::array<std::string_view, 4> f;
    std::string error;
    const std::optional<std::size_t> n = csv.split(c.line, f, error);
    REQUIRE(n.has_value());
    REQUIRE(*n == c.fields.size());
    for (std::size_t i = 0; i < c.fields.size(); ++i) CHECK(f[i] == c.fields[i]);
    CHECK(error.empty());
  }
}

TEST_CASE("a quoted field that is not closed, or text after its quote, is an error",
          "[serving][traces][csv]") {
  const std::vector<BadSplitCase> cases = {
      {"unclosed", R"(1,"12,3)", "field 2: its opening quote is not closed by the end of the record"},
      {"unclosed after a doubled quote", R"("a"")", "field 1: its opening quote is not closed"},
      {"text after the closing quote", R"("12"x,3)", "field 1: text after its closing quote"},
      {"a second quoted part", R"(1,"a" "b")", "field 2: text after its closing quote"},
  };
  CsvRecordSplitter csv;
  for (const BadSplitCase& c : cases) {
    INFO(c.name << ": " << c.line);
    std::array<std::string_view, 3> f;
    std::string error;
    CHECK_FALSE(csv.split(c.line, f, error).has_value());
    CHECK_THAT(error, Contains(std::string(c.error)));
  }
}

TEST_CASE("views of earlier quoted fields survive the later ones of the same row",
          "[serving][traces][csv]") {
  // Every field is unquoted into the splitter's buffer; the buffer must not move under them.
  std::string line;
  for (int i = 0; i < 200; ++i) {
    line += '"';
    line += std::to_string(i);
    line += "\"\"x\",";
  }
  line += "\"end\"";
  CsvRecordSplitter csv;
  std::array<std::string_view, 201> f;
  std::string error;
  REQUIRE(csv.split(line, f, error) == 201);
  for (int i = 0; i < 200; ++i) CHECK(f[static_cast<std::size_t>(i)] == std::to_string(i) + "\"x");
  CHECK(f[200] == "end");
}

TEST_CASE("a CSV header matches with its names quoted but not renamed or reordered",
          "[serving][traces][csv]") {
  CHECK(csv_header_is("arrival_s,prompt_tokens,output_tokens", kPlainCsvHeader));
  CHECK(csv_header_is(R"("arrival_s","prompt_tokens","output_tokens")", kPlainCsvHeader));
  CHECK(csv_header_is(R"( "arrival_s" ,prompt_tokens, "output_tokens")", kPlainCsvHeader));
  CHECK(csv_header_is(R"("TIMESTAMP","ContextTokens","GeneratedTokens")", kAzureCsvHeader));
  CHECK_FALSE(csv_header_is(R"("arrival_s","output_tokens","prompt_tokens")", kPlainCsvHeader));
  CHECK_FALSE(csv_header_is(R"("arrival_s,prompt_tokens,output_tokens")", kPlainCsvHeader));
  CHECK_FALSE(csv_header_is("arrival_s,prompt_tokens,output_tokens,x", kPlainCsvHeader));
  CHECK_FALSE(csv_header_is("Arrival_s,prompt_tokens,output_tokens", kPlainCsvHeader));
  CHECK_FALSE(csv_header_is(R"("arrival_s,prompt_tokens)", kPlainCsvHeader));
}

TEST_CASE("pandas-style quoted plain CSV files read as their unquoted twins",
          "[serving][traces][csv]") {
  ScratchDir dir("csv-quoted");
  const std::vector<std::pair<std::string_view, std::string_view>> files = {
      {"unquoted", "arrival_s,prompt_tokens,output_tokens\n0.0,100,10\n0.25,200,20\n"},
      {"QUOTE_ALL",
       "\"arrival_s\",\"prompt_tokens\",\"output_tokens\"\n"
       "\"0.0\",\"100\",\"10\"\n\"0.25\",\"200\",\"20\"\n"},
      {"QUOTE_ALL with CRLF and a BOM",
       "\xEF\xBB\xBF\"arrival_s\",\"prompt_tokens\","
       "\"output_tokens\"\r\n\"0.0\",\"100\",\"10\"\r\n"
       "\"0.25\",\"200\",\"20\"\r\n"},
      {"quoted header only",
       "\"arrival_s\",\"prompt_tokens\",\"output_tokens\"\n"
       "0.0,100,10\n0.25,200,20\n"},
      {"mixed", "arrival_s,\"prompt_tokens\",output_tokens\n\"0.0\",100,\"10\"\n0.25,\"200\",20"},
  };
  for (const auto& [name, text] : files) {
    INFO(name);
    const std::string path = dir.write("t", text);
    REQUIRE(detect_trace_format(path) == TraceFormat::kCsv);
    PlainCsvTrace trace(path, MalformedRowPolicy::kError);
    const std::vector<TraceRecord> rows = drain(trace);
    REQUIRE(rows.size() == 2);
    CHECK(arrivals_ns(rows) == std::vector<std::int64_t>{0, 250'000'000});
    CHECK(rows[0].prompt_tokens == 100);
    CHECK(rows[1].prompt_tokens == 200);
    CHECK(rows[0].output_tokens == 10);
    CHECK(rows[1].output_tokens == 20);
  }
}

TEST_CASE("a pandas QUOTE_ALL Azure trace reads as the unquoted one", "[serving][traces][csv]") {
  ScratchDir dir("csv-quoted-azure");
  const std::string quoted = dir.write("azure_quoted.csv",
                                       "\"TIMESTAMP\",\"ContextTokens\",\"GeneratedTokens\"\r\n"
                                       "\"2023-11-16 18:15:46.6805900\",\"374\",\"44\"\r\n"
                                       "\"2023-11-16 18:15:50.7487730\",\"396\",\"109\"\r\n");
  // QUOTE_NONNUMERIC: the timestamp (a string to pandas) quoted, the counts bare.
  const std::string nonnumeric = dir.write(
      "azure_nonnumeric.csv",
      "\"TIMESTAMP\",\"ContextTokens\",\"GeneratedTokens\"\n"
      "\"2023-11-16 18:15:46.6805900\",374,44\n\"2023-11-16 18:15:50.7487730\",396,109\n");
  for (const std::string& path : {quoted, nonnumeric}) {
    INFO(path);
    REQUIRE(detect_trace_format(path) == TraceFormat::kAzure);
    AzureCsvTrace trace(path, MalformedRowPolicy::kError);
    const std::vector<TraceRecord> rows = drain(trace);
    REQUIRE(rows.size() == 2);
    CHECK(arrivals_ns(rows) == std::vector<std::int64_t>{0, 4'068'183'000});
    CHECK(rows[1].prompt_tokens == 396);
    CHECK(rows[1].output_tokens == 109);
  }
}

TEST_CASE("a quoted field that is not a number, or badly quoted, names file:line",
          "[serving][traces][csv]") {
  ScratchDir dir("csv-quoted-bad");
  const std::string header = "\"arrival_s\",\"prompt_tokens\",\"output_tokens\"\n";
  const std::string comma = dir.write("comma.csv", header + "0,\"1,5\",3\n");
  CHECK_THAT(config_error_of([&] { PlainCsvTrace(comma, MalformedRowPolicy::kError).next(); }),
             Contains(comma + ":2") && Contains("prompt_tokens") && Contains("'1,5'"));
  const std::string unclosed = dir.write("unclosed.csv", header + "0,1,1\n\"1.0,1,1\n");
  CHECK_THAT(config_error_of([&] {
               PlainCsvTrace trace(unclosed, MalformedRowPolicy::kError);
               drain(trace);
             }),
             Contains(unclosed + ":3") && Contains("field 1: its opening quote is not closed"));
  const std::string after = dir.write("after.csv", header + "\"0\"s,1,1\n");
  CHECK_THAT(config_error_of([&] { PlainCsvTrace(after, MalformedRowPolicy::kError).next(); }),
             Contains(after + ":2") && Contains("text after its closing quote"));
  // Under the skip policy a badly quoted row is one skipped row like any other.
  PlainCsvTrace skipping(unclosed, MalformedRowPolicy::kSkip);
  CHECK(drain(skipping).size() == 1);
  CHECK(skipping.stats().rows_skipped == 1);
  CHECK(skipping.stats().first_skipped_line == 3);
}
