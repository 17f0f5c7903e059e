#include "sim/serving/traces/trace_transforms.hpp"

#include <memory>
#include <string>
#include <vector>

#include "sim/serving/traces/trace_file.hpp"
#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;

namespace {
// A tiny in-memory source: arrivals in seconds, prompt/output lengths, Mooncake-style ids.
class VectorTrace final : public TraceSource {
 public:
  explicit VectorTrace(std::vector<TraceRecord> rows) : rows_(std::move(rows)) {}
  std::optional<TraceRecord> next() override {
    if (i_ == rows_.size()) return std::nullopt;
    ++stats_.rows_read;
    return rows_[i_++];
  }
  std::string describe() const override { return "vector"; }
  TraceStats stats() const override { return stats_; }

 private:
  std::vector<TraceRecord> rows_;
  std::size_t i_ = 0;
  TraceStats stats_{0, 2, 0, 0, 9};  // pretend the reader skipped two rows
};

TraceRecord rec(std::int64_t arrival_ms, std::int64_t prompt, std::int64_t output) {
  TraceRecord r;
  r.arrival = SimTime::zero() + milliseconds(arrival_ms);
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.hash_block_tokens = 512;
  for (std::int64_t i = 0; i < (prompt + 511) / 512; ++i)
    r.hash_ids.push_back(static_cast<std::uint64_t>(i));
  return r;
}

std::unique_ptr<TraceSource> five_rows() {
  return std::make_unique<VectorTrace>(
      std::vector<TraceRecord>{rec(0, 100, 10), rec(1000, 2000, 20), rec(2500, 300, 3000),
                               rec(4000, 400, 40), rec(6000, 500, 50)});
}
}  // namespace

TEST_CASE("a window keeps rows from its start up to its end, re-bases on its start and counts earlier rows",
          "[serving][traces][transforms]") {
  TraceTransforms t;
  t.window_start = milliseconds(1000);
  t.window_end = milliseconds(4000);
  auto source = apply_transforms(five_rows(), t);
  const auto rows = drain(*source);
  CHECK(arrivals_ns(rows) == std::vector<std::int64_t>{0, 1'500'000'000});
  CHECK(rows[0].prompt_tokens == 2000);
  const TraceStats s = source->stats();
  CHECK(s.rows_filtered == 1);  // the row at 0 s; rows after the end are never read
  CHECK(s.rows_read == 4);      // the wrapped source's counters pass through
  CHECK(s.rows_skipped == 2);
  CHECK(s.first_skipped_line == 9);
  CHECK(source->describe() == "vector, window [1 s, 4 s)");
}

TEST_CASE("caps shorten lengths and hash ids, and the total filter drops long rows after caps",
          "[serving][traces][transforms]") {
  TraceTransforms t;
  t.max_prompt_tokens = 1000;
  t.max_output_tokens = 1000;
  t.max_total_tokens = 1030;
  auto source = apply_transforms(five_rows(), t);
  const auto rows = drain(*source);
  REQUIRE(rows.size() == 4);
  CHECK(rows[1].prompt_tokens == 1000);  // 2000 capped
  CHECK(rows[1].output_tokens == 20);
  CHECK(rows[1].hash_ids == std::vector<std::uint64_t>{0, 1});  // ceil(1000 / 512)
  CHECK(rows[2].prompt_tokens == 400);  // 300 + 1000 (capped from 3000) > 1030: dropped
  CHECK(source->stats().rows_capped == 1);
  CHECK(source->stats().rows_filtered == 1);
}

TEST_CASE("a time scale of 2 replays twice as fast, and max_requests ends the stream",
          "[serving][traces][transforms]") {
  TraceTransforms t;
  t.time_scale = 2.0;
  t.max_requests = 3;
  auto source = apply_transforms(five_rows(), t);
  const auto rows = drain(*source);
  CHECK(arrivals_ns(rows) == std::vector<std::int64_t>{0, 500'000'000, 1'250'000'000});
  CHECK_FALSE(source->next().has_value());
  CHECK(source->stats().rows_read == 3);  // the fourth row is never pulled
  CHECK(source->describe() == "vector, 2x speed, first 3 requests");
}

TEST_CASE("identity transforms return the source itself", "[serving][traces][transforms]") {
  auto source = five_rows();
  TraceSource* raw = source.get();
  CHECK(apply_transforms(std::move(source), TraceTransforms{}).get() == raw);
}

TEST_CASE("transform options are validated with the field named", "[serving][traces][transforms]") {
  TraceTransforms t;
  t.time_scale = 0.0;
  t.window_start = seconds(5);
  t.window_end = seconds(5);
  t.max_requests = 0;
  t.max_total_tokens = -1;
  ValidationReport report;
  t.validate(report, "workload");
  std::vector<std::string> lines;
  for (const auto& p : report.problems()) lines.push_back(format_problem(p));
  CHECK(lines ==
        std::vector<std::string>{"workload.time_scale: must be > 0 (a replay speed), got 0",
                                 "workload.window_end: must be after window_start (5 s), got 5 s",
                                 "workload.max_requests: must be > 0, got 0",
                                 "workload.max_total_tokens: must be > 0, got -1"});
}

TEST_CASE("a window over the Azure conversation trace keeps the rows of that minute",
          "[serving][traces][transforms][data]") {
  TraceTransforms t;
  t.window_start = seconds(600);
  t.window_end = seconds(660);
  auto source = apply_transforms(open_trace_file(shared_trace("AzureLLMInferenceTrace_conv.csv"),
                                                 TraceFormat::kAuto, MalformedRowPolicy::kError),
                                 t);
  const auto rows = drain(*source);
  REQUIRE_FALSE(rows.empty());
  CHECK(rows.front().arrival >= SimTime::zero());
  CHECK(rows.back().arrival < SimTime::zero() + seconds(60));
  CHECK(source->stats().rows_filtered + static_cast<std::int64_t>(rows.size()) + 1 ==
        source->stats().rows_read);  // +1: the first row past the window ends the stream
}
