// The public traces in VRAMSIM_SHARED_DATA read completely, with the row counts and first/last
// arrivals python3 gives (SOURCES.md).
#include <string>

#include "sim/serving/traces/trace_file.hpp"
#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;

namespace {
struct Summary {
  std::int64_t rows = 0;
  std::int64_t last_arrival_ns = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t hash_ids = 0;
};

Summary read_all(const std::string& name) {
  auto source = open_trace_file(shared_trace(name), TraceFormat::kAuto, MalformedRowPolicy::kError);
  Summary s;
  while (const auto r = source->next()) {
    if (s.rows == 0) CHECK(r->arrival.nanoseconds() == 0);
    ++s.rows;
    s.last_arrival_ns = r->arrival.nanoseconds();
    s.prompt_tokens += r->prompt_tokens;
    s.output_tokens += r->output_tokens;
    s.hash_ids += static_cast<std::int64_t>(r->hash_ids.size());
  }
  CHECK(source->stats().rows_read == s.rows);
  CHECK(source->stats().rows_skipped == 0);
  return s;
}
}  // namespace

TEST_CASE("the Azure 2023 conversation trace reads completely", "[serving][traces][data]") {
  const Summary s = read_all("AzureLLMInferenceTrace_conv.csv");
  CHECK(s.rows == 19'366);
  CHECK(s.last_arrival_ns == 3'501'721'937'000);  // 19:14:08.4025270 - 18:15:46.6805900
  CHECK(s.prompt_tokens == 22'361'870);
  CHECK(s.output_tokens == 4'088'665);
}

TEST_CASE("the Azure 2023 code trace reads completely", "[serving][traces][data]") {
  const Summary s = read_all("AzureLLMInferenceTrace_code.csv");
  CHECK(s.rows == 8'819);
  CHECK(s.last_arrival_ns == 3'435'948'056'000);  // 19:14:19.9280160 - 18:17:03.9799600
  CHECK(s.prompt_tokens == 18'059'974);
  CHECK(s.output_tokens == 245'896);
}

TEST_CASE("the Mooncake conversation and synthetic traces read completely",
          "[serving][traces][data]") {
  const Summary conv = read_all("conversation_trace.jsonl");
  CHECK(conv.rows == 12'031);
  CHECK(conv.last_arrival_ns == 3'536'999'000'000);
  CHECK(conv.prompt_tokens == 144'793'823);
  CHECK(conv.hash_ids == 288'500);
  const Summary syn = read_all("mooncake_synthetic_trace.jsonl");
  CHECK(syn.rows == 3'993);
  CHECK(syn.last_arrival_ns == 1'022'025'000'000);
  CHECK(syn.prompt_tokens == 61'194'628);
  CHECK(syn.hash_ids == 121'877);
}

TEST_CASE("the vllm-bench request streams read completely", "[serving][traces][data]") {
  const Summary s = read_all("vllm-bench/rtx4090_llama-3.1-8b.csv");
  CHECK(s.rows == 300);
  CHECK(s.last_arrival_ns == 29'120'628'000);
  CHECK(s.prompt_tokens == 257'239);
  const Summary q = read_all("vllm-bench/rtxpro6000_qwen3-32b_tp2.csv");
  CHECK(q.rows == 300);
  CHECK(q.last_arrival_ns == 29'153'246'000);
  CHECK(q.prompt_tokens == 258'691);
}
