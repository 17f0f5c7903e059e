#include "sim/serving/traces/mooncake_trace.hpp"

#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;
using Catch::Matchers::Contains;

TEST_CASE("a Mooncake JSONL streams ms arrivals as ns, lengths and 512-token hash ids",
          "[serving][traces]") {
  ScratchDir dir("mooncake");
  const std::string path = dir.write(
      "m.jsonl",
      "{\"timestamp\": 3000, \"input_length\": 1025, \"output_length\": 500, \"hash_ids\": [0, 1, "
      "2]}\n"
      "\n"
      "{\"timestamp\": 3000, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [0, 7]}\r\n"
      "{\"output_length\": 9, \"timestamp\": 6001, \"input_length\": 12, \"note\": \"x\"}");
  MooncakeTrace trace(path, MalformedRowPolicy::kError);
  const auto rows = drain(trace);
  REQUIRE(rows.size() == 3);
  CHECK(arrivals_ns(rows) == std::vector<std::int64_t>{0, 0, 3'001'000'000});
  CHECK(rows[0].prompt_tokens == 1025);
  CHECK(rows[0].output_tokens == 500);
  CHECK(rows[0].hash_ids == std::vector<std::uint64_t>{0, 1, 2});
  CHECK(rows[0].hash_block_tokens == 512);
  CHECK(rows[1].hash_ids == std::vector<std::uint64_t>{0, 7});
  CHECK(rows[1].line == 3);
  CHECK(rows[2].hash_ids.empty());  // no hash_ids: no sharing
  CHECK(rows[2].hash_block_tokens == 0);
  CHECK(rows[2].output_tokens == 9);
  CHECK(trace.describe() == "Mooncake JSONL m.jsonl");
}

TEST_CASE("malformed Mooncake rows name file:line and what was expected", "[serving][traces]") {
  struct Case {
    const char* row;
    const char* expected;
  };
  const Case c = GENERATE(
      Case{"{\"timestamp\": 5, \"input_length\": 10", "not valid JSON"},
      Case{"[1, 2, 3]", "expected a JSON object"},
      // Regression (bad input catalogue): 1e400 overflowed in the JSON parser and escaped as
      // nlohmann's out_of_range, aborting the run.
      Case{"{\"timestamp\": 1e400, \"input_length\": 10, \"output_length\": 1}",
           "number overflow parsing '1e400'"},
      Case{"{\"timestamp\": 5.5, \"input_length\": 10, \"output_length\": 1}",
           "timestamp: expected a non-negative integer (ms), got 5.5"},
      Case{"{\"input_length\": 10, \"output_length\": 1}",
           "timestamp: expected a non-negative integer (ms), got nothing"},
      Case{"{\"timestamp\": 5, \"output_length\": 1}", "missing \"input_length\""},
      Case{"{\"timestamp\": 5, \"input_length\": \"10\", \"output_length\": 1}",
           "input_length: expected an integer in [1, 1000000000], got \"10\""},
      Case{"{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 0}",
           "output_length: expected an integer in [1, 1000000000], got 0"},
      Case{"{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1, -2]}",
           "hash_ids: expected non-negative integers, got -2"},
      Case{"{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": 3}",
           "hash_ids: expected an array"},
      Case{"{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 1}",
           "arrival goes backwards: 1000000 ns"},
      // One id per 512-token block, the last one partial (issue 12): 1025 tokens need 3.
      Case{"{\"timestamp\": 5, \"input_length\": 1025, \"output_length\": 1, \"hash_ids\": [1, 2]}",
           "hash_ids: expected ceil(input_length / 512) = 3 ids for input_length 1025, got 2"},
      Case{"{\"timestamp\": 5, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [1, 2]}",
           "hash_ids: expected ceil(input_length / 512) = 1 ids for input_length 512, got 2"},
      Case{"{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": []}",
           "hash_ids: expected ceil(input_length / 512) = 1 ids for input_length 10, got 0"});
  ScratchDir dir("mooncake-bad");
  const std::string path = dir.write(
      "bad.jsonl", std::string("{\"timestamp\": 2, \"input_length\": 10, \"output_length\": 1}\n") +
                       c.row + "\n");
  MooncakeTrace trace(path, MalformedRowPolicy::kError);
  REQUIRE(trace.next().has_value());
  const std::string msg = config_error_of([&] { trace.next(); });
  INFO(msg);
  CHECK_THAT(msg, Contains(path + ":2: trace: "));
  CHECK_THAT(msg, Contains(c.expected));
}

TEST_CASE("Mooncake rows skipped by policy are counted with the first line", "[serving][traces]") {
  ScratchDir dir("mooncake-skip");
  const std::string path =
      dir.write("s.jsonl",
                "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1}\n"
                "{not json}\n"
                "{\"timestamp\": 10, \"input_length\": 20, \"output_length\": 2}\n"
                "{\"timestamp\": 20, \"input_length\": 0, \"output_length\": 2}\n"
                "{\"timestamp\": 30, \"input_length\": 513, \"output_length\": 2, "
                "\"hash_ids\": [4]}\n"
                "{\"timestamp\": 40, \"input_length\": 513, \"output_length\": 2, "
                "\"hash_ids\": [4, 5]}\n");
  MooncakeTrace trace(path, MalformedRowPolicy::kSkip);
  const auto rows = drain(trace);
  CHECK(arrivals_ns(rows) == std::vector<std::int64_t>{0, 10'000'000, 40'000'000});
  CHECK(rows.back().hash_ids == std::vector<std::uint64_t>{4, 5});
  CHECK(trace.stats().rows_read == 6);
  CHECK(trace.stats().rows_skipped == 3);
  CHECK(trace.stats().first_skipped_line == 2);
}

TEST_CASE("a Mooncake row's lora key names the request's adapter", "[serving][traces][lora]") {
  ScratchDir dir("mooncake-lora");
  const std::string path = dir.write(
      "m.jsonl",
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"lora\": 3}\n"
      "{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 5}\n"
      "{\"timestamp\": 2, \"input_length\": 10, \"output_length\": 5, \"lora\": \"a\"}\n");
  MooncakeTrace trace(path, MalformedRowPolicy::kSkip);
  const auto rows = drain(trace);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].adapter == 3);
  CHECK(rows[1].adapter == 0);
  CHECK(trace.stats().rows_skipped == 1);
}
