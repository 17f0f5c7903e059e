#include "sim/serving/traces/azure_csv_trace.hpp"

#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;
using Catch::Matchers::Contains;

namespace {
constexpr std::int64_t kNs = 1'000'000'000;
}

TEST_CASE("days_from_civil counts days from 1970-01-01 on the proleptic Gregorian calendar",
          "[serving][traces]") {
  CHECK(days_from_civil(1970, 1, 1) == 0);
  CHECK(days_from_civil(1969, 12, 31) == -1);
  CHECK(days_from_civil(2000, 3, 1) == 11017);
  CHECK(days_from_civil(2023, 11, 16) == 19677);
  CHECK(days_from_civil(1600, 2, 29) == -135081);
}

TEST_CASE("Azure wall-clock timestamps convert exactly to nanoseconds", "[serving][traces]") {
  const std::int64_t day = 19677LL * 86'400 * kNs;
  const std::int64_t t = day + (18LL * 3600 + 15 * 60 + 46) * kNs;
  CHECK(parse_wall_clock_ns("2023-11-16 18:15:46.6805900") == t + 680'590'000);
  CHECK(parse_wall_clock_ns("2023-11-16 18:15:46") == t);
  CHECK(parse_wall_clock_ns("2023-11-16 18:15:46.1") == t + 100'000'000);
  CHECK(parse_wall_clock_ns("2023-11-16 18:15:46.123456789") == t + 123'456'789);
  CHECK(parse_wall_clock_ns("2024-02-29 00:00:00") == days_from_civil(2024, 2, 29) * 86'400 * kNs);
  CHECK(parse_wall_clock_ns("1970-01-01 00:00:00") == 0);
  CHECK(parse_wall_clock_ns("2261-12-31 23:59:59").has_value());
  for (const char* bad :
       {"2023-02-29 00:00:00", "2023-13-01 00:00:00", "2023-11-31 00:00:00", "2023-11-16 24:00:00",
        "2023-11-16 18:60:00", "2023-11-16 18:15:60", "2023-11-16T18:15:46", "2023-11-16 18:15:46.",
        "2023-11-16 18:15:4", "2023-11-16 18:15:46.1234567890", "2023-11-16 18:15:46.12a",
        "23-11-16 18:15:46", "",
        // Regression (fuzz/fuzz_azure_csv): year 0000 overflowed int64 ns (signed overflow).
        "0000-11-16 18:15:46", "1969-12-31 23:59:59", "2262-01-01 00:00:00"}) {
    INFO(bad);
    CHECK_FALSE(parse_wall_clock_ns(bad).has_value());
  }
}

TEST_CASE("an Azure CSV streams exact arrivals since the first row, lengths and line numbers",
          "[serving][traces]") {
  ScratchDir dir("azure");
  const std::string path = dir.write("a.csv",
                                     "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                     "2023-11-16 23:59:59.9999999,374,44\n"
                                     "2023-11-17 00:00:00.0000001,396,109\n"
                                     "2023-11-17 00:00:01.5,1,1\n");
  AzureCsvTrace trace(path, MalformedRowPolicy::kError);
  const auto rows = drain(trace);
  REQUIRE(rows.size() == 3);
  CHECK(arrivals_ns(rows) == std::vector<std::int64_t>{0, 200, 1'500'000'100});
  CHECK(rows[0].prompt_tokens == 374);
  CHECK(rows[0].output_tokens == 44);
  CHECK(rows[1].prompt_tokens == 396);
  CHECK(rows[1].output_tokens == 109);
  CHECK(rows[2].line == 4);
  CHECK(rows[0].hash_ids.empty());
  CHECK(trace.stats().rows_read == 3);
  CHECK(trace.stats().rows_skipped == 0);
  CHECK(trace.describe() == "Azure CSV a.csv");
  CHECK_FALSE(trace.next().has_value());  // stays at the end
}

TEST_CASE("CRLF endings, comments, blank lines and a missing final newline read the same",
          "[serving][traces]") {
  ScratchDir dir("azure-crlf");
  const std::string path = dir.write("b.csv",
                                     "\xEF\xBB\xBF# exported 2023-11-16\r\n"
                                     "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                                     "\r\n"
                                     "2023-11-16 18:15:46.6805900,374,44\r\n"
                                     "   # a comment\r\n"
                                     "2023-11-16 18:15:50.9951690,396,109");
  AzureCsvTrace trace(path, MalformedRowPolicy::kError);
  const auto rows = drain(trace);
  REQUIRE(rows.size() == 2);
  CHECK(arrivals_ns(rows) == std::vector<std::int64_t>{0, 4'314'579'000});
  CHECK(rows[1].output_tokens == 109);
  CHECK(rows[1].line == 6);
  CHECK(trace.stats().rows_read == 2);
}

TEST_CASE("each malformed Azure row is an error naming file:line and what was expected",
          "[serving][traces]") {
  struct Case {
    const char* row;
    const char* expected;
  };
  const Case c = GENERATE(
      Case{"2023-11-16 18:15:47.0,374", "expected 3 columns"},
      Case{"2023-11-16 18:15:47.0,374,44,9", "expected 3 columns"},
      Case{"2023-11-16 18:15:47.0,abc,44", "ContextTokens: expected an integer in [1, 1000000000]"},
      Case{"2023-11-16 18:15:47.0,12.5,44", "ContextTokens: expected an integer"},
      Case{"2023-11-16 18:15:47.0,0,44", "ContextTokens: expected an integer"},
      Case{"2023-11-16 18:15:47.0,-3,44", "ContextTokens: expected an integer"},
      Case{"2023-11-16 18:15:47.0,1000000001,44", "ContextTokens: expected an integer"},
      Case{"2023-11-16 18:15:47.0,374,nan", "GeneratedTokens: expected an integer"},
      Case{"2023-11-16 18:15:47.0,374,", "GeneratedTokens: expected an integer"},
      Case{"16/11/2023 18:15:47,374,44", "TIMESTAMP: expected 'YYYY-MM-DD HH:MM:SS.fffffff'"},
      Case{"2023-11-16 18:15:45.0,374,44", "arrival goes backwards: 1000000000 ns"},
      Case{"0023-11-16 18:15:47.0,374,44", "(years 1970-2261), got '0023-11-16"});
  ScratchDir dir("azure-bad");
  const std::string path =
      dir.write("bad.csv", std::string("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                       "2023-11-16 18:15:46.0,1,1\n") +
                               c.row + "\n");
  AzureCsvTrace trace(path, MalformedRowPolicy::kError);
  REQUIRE(trace.next().has_value());
  const std::string msg = config_error_of([&] { trace.next(); });
  INFO(msg);
  CHECK_THAT(msg, Contains(path + ":3: trace: "));
  CHECK_THAT(msg, Contains(c.expected));
}

TEST_CASE("under the skip policy malformed and backwards rows are dropped and counted",
          "[serving][traces]") {
  ScratchDir dir("azure-skip");
  const std::string path = dir.write("s.csv",
                                     "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                     "2023-11-16 18:00:00.0,10,1\n"
                                     "2023-11-16 18:00:01.0,0,1\n"   // zero tokens
                                     "2023-11-16 17:59:59.0,10,1\n"  // backwards
                                     "2023-11-16 18:00:02.0,20,2\n"
                                     "garbage\n");  // wrong column count
  AzureCsvTrace trace(path, MalformedRowPolicy::kSkip);
  const auto rows = drain(trace);
  CHECK(arrivals_ns(rows) == std::vector<std::int64_t>{0, 2 * kNs});
  CHECK(rows[1].prompt_tokens == 20);
  const TraceStats s = trace.stats();
  CHECK(s.rows_read == 5);
  CHECK(s.rows_skipped == 3);
  CHECK(s.first_skipped_line == 3);
}

TEST_CASE("a wrong header names the expected one, and an empty trace is an error",
          "[serving][traces]") {
  ScratchDir dir("azure-header");
  const std::string wrong =
      dir.write("h.csv", "timestamp,context,generated\n2023-11-16 18:00:00,1,1\n");
  CHECK_THAT(config_error_of([&] { AzureCsvTrace(wrong, MalformedRowPolicy::kError); }),
             Contains(wrong + ":1: trace: expected the header "
                              "'TIMESTAMP,ContextTokens,GeneratedTokens', got 'timestamp"));
  const std::string empty = dir.write("e.csv", "");
  CHECK_THAT(config_error_of([&] { AzureCsvTrace(empty, MalformedRowPolicy::kError); }),
             Contains("empty file; expected the header"));
  const std::string header_only =
      dir.write("ho.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n# nothing\n");
  AzureCsvTrace trace(header_only, MalformedRowPolicy::kError);
  CHECK_THAT(config_error_of([&] { trace.next(); }), Contains("no data rows"));
  const std::string all_bad =
      dir.write("ab.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\nx,1,1\n");
  AzureCsvTrace skipping(all_bad, MalformedRowPolicy::kSkip);
  CHECK_THAT(config_error_of([&] { skipping.next(); }),
             Contains("no usable data rows (1 malformed rows skipped, first at line 2)"));
}
