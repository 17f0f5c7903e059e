#include "sim/serving/traces/plain_csv_trace.hpp"

#include <string>
#include <vector>

#include "sim/serving/traces/trace_parsing.hpp"
#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;
using Catch::Matchers::Contains;

TEST_CASE("decimal seconds convert exactly to nanoseconds", "[serving][traces]") {
  CHECK(parse_seconds_as_ns("0") == 0);
  CHECK(parse_seconds_as_ns("0.386902") == 386'902'000);
  CHECK(parse_seconds_as_ns("29.120628") == 29'120'628'000);
  CHECK(parse_seconds_as_ns("2.123456789") == 2'123'456'789);
  CHECK(parse_seconds_as_ns("3.0000000005") == 3'000'000'001);  // 10th digit rounds half up
  CHECK(parse_seconds_as_ns("3.0000000004999") == 3'000'000'000);
  CHECK(parse_seconds_as_ns(".5") == 500'000'000);
  CHECK(parse_seconds_as_ns("7.") == 7'000'000'000);
  CHECK(parse_seconds_as_ns("1.25e1") == 12'500'000'000);
  CHECK(parse_seconds_as_ns("1e-9") == 1);
  for (const char* bad : {"", ".", "-1", "-0.5", "+1", "1.2.3", "abc", "1,5", "nan", "inf", "-1e3",
                          "1e300", "99999999999"}) {
    INFO(bad);
    CHECK_FALSE(parse_seconds_as_ns(bad).has_value());
  }
}

TEST_CASE("a plain CSV streams arrivals re-based on the first row", "[serving][traces]") {
  ScratchDir dir("plain");
  const std::string path = dir.write("p.csv",
                                     "arrival_s,prompt_tokens,output_tokens\r\n"
                                     "10.5,2358,531\r\n"
                                     "10.5,1034,769\r\n"
                                     " 12.25 , 7 , 1000000000 ");
  PlainCsvTrace trace(path, MalformedRowPolicy::kError);
  const auto rows = drain(trace);
  REQUIRE(rows.size() == 3);
  CHECK(arrivals_ns(rows) == std::vector<std::int64_t>{0, 0, 1'750'000'000});
  CHECK(rows[0].prompt_tokens == 2358);
  CHECK(rows[1].output_tokens == 769);
  CHECK(rows[2].prompt_tokens == 7);
  CHECK(rows[2].output_tokens == 1'000'000'000);
  CHECK(rows[2].line == 4);
  CHECK(trace.describe() == "CSV p.csv");
}

TEST_CASE("malformed plain CSV rows name file:line and the expected form", "[serving][traces]") {
  struct Case {
    const char* row;
    const char* expected;
  };
  const Case c = GENERATE(
      Case{"2.0,10,10,extra", "expected 3 columns (arrival_s,prompt_tokens,output_tokens), got 4"},
      Case{"2.0,10", "expected 3 columns"},
      Case{"-2.0,10,10", "arrival_s: expected a non-negative finite number of seconds, got '-2.0'"},
      Case{"inf,10,10", "arrival_s: expected a non-negative finite"},
      Case{"0.5,10,10", "arrival goes backwards: 500000000 ns"},
      Case{"2.0,1e3,10", "prompt_tokens: expected an integer in [1, 1000000000], got '1e3'"},
      Case{"2.0,10,0", "output_tokens: expected an integer"});
  ScratchDir dir("plain-bad");
  const std::string path = dir.write(
      "bad.csv", std::string("arrival_s,prompt_tokens,output_tokens\n1.0,5,5\n# note\n") + c.row);
  PlainCsvTrace trace(path, MalformedRowPolicy::kError);
  REQUIRE(trace.next().has_value());
  const std::string msg = config_error_of([&] { trace.next(); });
  INFO(msg);
  CHECK_THAT(msg, Contains(path + ":4: trace: "));
  CHECK_THAT(msg, Contains(c.expected));
}

TEST_CASE("a plain CSV header with an extra column is rejected", "[serving][traces]") {
  ScratchDir dir("plain-header");
  const std::string path =
      dir.write("x.csv", "arrival_s,prompt_tokens,output_tokens,priority\n0,1,1,3\n");
  CHECK_THAT(config_error_of([&] { PlainCsvTrace(path, MalformedRowPolicy::kError); }),
             Contains("expected the header 'arrival_s,prompt_tokens,output_tokens'"));
}

TEST_CASE("CSV fields split at commas and parse as exact integers", "[serving][traces]") {
  std::array<std::string_view, 2> f;
  CHECK(split_csv_fields("a, b ,c", f) == 3);
  CHECK(f[0] == "a");
  CHECK(f[1] == "b");
  CHECK(split_csv_fields("", f) == 1);
  CHECK(f[0].empty());
  CHECK(parse_int64("-42") == -42);
  CHECK_FALSE(parse_int64("42 ").has_value());
  CHECK_FALSE(parse_int64("9223372036854775808").has_value());
  CHECK(parse_finite_double("1.5e3") == 1500.0);
  CHECK_FALSE(parse_finite_double("nan").has_value());
}
