// Speculative decoding (issue 16): vLLM's --speculative-config read with errors naming the key,
// the acceptance rates, the expected tokens per step, the verification shape and step time of a
// speculating replica, and the tokens a request emits per decode step, all by hand.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/serving/speculative.hpp"
#include "tests/catch.hpp"
#include "tests/serving/serving_test_support.hpp"

namespace vramsim::serving {
namespace {

using testing::LinearTimeModel;
using testing::record;
using testing::small_setup;

const std::string kField = "engine.speculative_config";

/// The fields of the problems of the ConfigError `f` throws ("" when it does not throw).
template <typename F>
std::string error_fields(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    std::string out;
    for (const Problem& p : e.report().problems()) out += (out.empty() ? "" : " ") + p.field;
    return out;
  }
  return "";
}

TEST_CASE("expected tokens per step: 1 + a1 + a1 a2 + ... and the closed form for a constant",
          "[serving][speculative]") {
  // Constant a = 0.6, k = 3: (1 - 0.6^4) / (1 - 0.6) = 0.8704 / 0.4 = 2.176.
  CHECK(expected_tokens_per_step(std::vector<double>{0.6, 0.6, 0.6}) == Approx(2.176));
  // Per position 0.8, 0.5, 0.25: 1 + 0.8 + 0.4 + 0.1 = 2.3.
  CHECK(expected_tokens_per_step(std::vector<double>{0.8, 0.5, 0.25}) == Approx(2.3));
  CHECK(expected_tokens_per_step(std::vector<double>{1.0, 1.0, 1.0}) == 4.0);  // k + 1
  CHECK(expected_tokens_per_step(std::vector<double>{0.0, 0.9}) == 1.0);  // nothing after a miss
}

TEST_CASE("the acceptance rate setting takes one rate for every position or exactly k of them",
          "[serving][speculative]") {
  const std::string f = "engine.spec_acceptance_rate";
  CHECK(parse_acceptance_rates("0.7", 3, f) == std::vector<double>{0.7, 0.7, 0.7});
  CHECK(parse_acceptance_rates("0.8, 0.6,0.5", 3, f) == std::vector<double>{0.8, 0.6, 0.5});
  CHECK(error_fields([&] { parse_acceptance_rates("0.8,0.6", 3, f); }) == f);
  CHECK(error_fields([&] { parse_acceptance_rates("1.2", 3, f); }) == f);
  CHECK(error_fields([&] { parse_acceptance_rates("-0.1", 1, f); }) == f);
  CHECK(error_fields([&] { parse_acceptance_rates("high", 2, f); }) == f);
  CHECK(error_fields([&] { parse_acceptance_rates("0.5,", 2, f); }) == f);
}

TEST_CASE("the speculative config reads vLLM's JSON and names the method from the model as vLLM",
          "[serving][speculative]") {
  const SpeculativeConfig e3 = parse_speculative_config(
      R"({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
          "num_speculative_tokens": 3})",
      kField);
  CHECK(e3.method == SpeculativeMethod::kEagle3);
  CHECK(e3.model == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B");
  CHECK(e3.num_speculative_tokens == 3);
  CHECK(parse_speculative_config(R"({"model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B",
                                     "num_speculative_tokens": 2})",
                                 kField)
            .method == SpeculativeMethod::kEagle);
  CHECK(parse_speculative_config(R"({"model": "meta-llama/Llama-3.2-1B",
                                     "num_speculative_tokens": 4})",
                                 kField)
            .method == SpeculativeMethod::kDraftModel);
  const SpeculativeConfig ng = parse_speculative_config(
      R"({"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4})", kField);
  CHECK(ng.method == SpeculativeMethod::kNgram);
  CHECK(!ng.has_draft_model());
  CHECK(ng.prompt_lookup_max == 4);
  CHECK(parse_speculative_config(R"({"method": "deepseek_mtp", "num_speculative_tokens": 1})",
                                 kField)
            .method == SpeculativeMethod::kMtp);
}

TEST_CASE("speculative config errors name the key: bad JSON, unknown keys and methods, k",
          "[serving][speculative]") {
  CHECK(error_fields([] { parse_speculative_config("{method: eagle}", kField); }) == kField);
  CHECK(error_fields([] { parse_speculative_config("[1, 2]", kField); }) == kField);
  CHECK(error_fields([] {
          parse_speculative_config(R"({"method": "ngram", "num_speculative_tokens": 2,
                                       "speculative_token_tree": "x"})",
                                   kField);
        }) == kField + ".speculative_token_tree");
  CHECK(error_fields([] {
          parse_speculative_config(R"({"method": "medusa", "model": "m",
                                       "num_speculative_tokens": 2})",
                                   kField);
        }) == kField + ".method");
  CHECK(error_fields([] { parse_speculative_config(R"({"method": "ngram"})", kField); }) ==
        kField + ".num_speculative_tokens");
  CHECK(error_fields([] {
          parse_speculative_config(R"({"method": "ngram", "num_speculative_tokens": 0})",
                                   kField);
        }) == kField + ".num_speculative_tokens");
  CHECK(error_fields([] {
          parse_speculative_config(R"({"method": "ngram", "num_speculative_tokens": "3"})",
                                   kField);
        }) == kField + ".num_speculative_tokens");
  CHECK(error_fields([] {
          parse_speculative_config(R"({"method": "eagle3", "num_speculative_tokens": 3})", kField);
        }) == kField + ".model");
  // A setting of another method would be ignored: refused.
  CHECK(error_fields([] {
          parse_speculative_config(R"({"method": "eagle", "model": "m",
                                       "num_speculative_tokens": 3, "prompt_lookup_min": 2})",
                                   kField);
        }) == kField + ".prompt_lookup_min");
}

TEST_CASE("the verification pass holds k + 1 tokens per decode after its own context",
          "[serving][speculative]") {
  BatchShape b;
  b.prefills.push_back({100, 0});
  b.num_decodes = 3;
  b.decode_context_tokens = 11 + 21 + 32;  // contexts 10, 20, 31 plus each one's new token
  const BatchShape v = verification_shape(b, 2);
  REQUIRE(v.prefills.size() == 4);
  CHECK(v.num_decodes == 0);
  CHECK(v.prefills[0].num_tokens == 100);
  // (64 - 3) = 61 tokens of context split evenly: 21, 20, 20.
  CHECK(v.prefills[1].num_tokens == 3);
  CHECK(v.prefills[1].num_context == 21);
  CHECK(v.prefills[2].num_context == 20);
  CHECK(v.prefills[3].num_context == 20);
  CHECK(v.num_tokens() == 100 + 3 * 3);
}

TEST_CASE("a speculating step: target over the verification pass plus k draft passes",
          "[serving][speculative]") {
  const LinearTimeModel target(milliseconds(10), milliseconds(1));      // 10 ms + 1 ms/token
  const LinearTimeModel draft(milliseconds(1), microseconds(100));      // 1 ms + 0.1 ms/token
  const SpeculativeTimeModel spec(target, &draft, 3, "eagle3");
  BatchShape b;
  b.num_decodes = 2;
  b.decode_context_tokens = 2 * 50;
  // Target: 2 x (3 + 1) = 8 tokens: 18 ms. Draft pass 1 over the same 8 tokens: 0.8 ms of GPU
  // work; passes 2 and 3 over one token per sequence: 2 x 0.2 ms; the draft's 1 ms of host
  // overhead is not repeated (the step's is the target's). Total 19.2 ms.
  const StepTime t = spec.step_time(b);
  CHECK(t.total == microseconds(19'200));
  CHECK(t.overhead == milliseconds(10));
  CHECK(t.stage_interval == t.total);
  CHECK(t.linear + t.attention + t.communication + t.kernel_gaps + t.overhead == t.total);
  // A prefill-only step: the target's pass and one draft pass over the prompt tokens.
  BatchShape p;
  p.prefills.push_back({100, 0});
  CHECK(spec.step_time(p).total == milliseconds(110) + milliseconds(10));
  // ngram: no draft model, only the verification pass.
  const SpeculativeTimeModel ngram(target, nullptr, 3, "ngram");
  CHECK(ngram.step_time(b).total == milliseconds(18));
}

TEST_CASE("a request emits the expected tokens per decode step through its fractional credit",
          "[serving][speculative]") {
  // k = 2, rates 1.0 and 0.5: E = 1 + 1 + 0.5 = 2.5 tokens per decode step. A 16-token prompt
  // and 11 output tokens: the prefill step emits the first token; the other 10 come 2, 3, 2, 3
  // (credit 2.5 -> 2 + 0.5, 3.0 -> 3, 2.5 -> 2 + 0.5, 3.0 -> 3) in 4 decode steps.
  ServingSetup s = small_setup(64);
  s.replica.num_speculative_tokens = 2;
  s.replica.limits.num_lookahead_tokens = 2;
  s.replica.expected_tokens_per_step = expected_tokens_per_step(std::vector<double>{1.0, 0.5});
  s.replica.check_kv_invariants = true;
  // Every step 10 ms whatever it holds: 5 steps end at 50 ms.
  const LinearTimeModel model(milliseconds(10), Duration::zero());
  testing::KeepAll keep;
  const ServingResult r = testing::run({record(0.0, 16, 11)}, s, model, &keep);
  REQUIRE(keep.requests.size() == 1);
  CHECK(r.num_steps == 5);
  CHECK(keep.requests[0].first_token == SimTime::zero() + milliseconds(10));
  CHECK(keep.requests[0].finish == SimTime::zero() + milliseconds(50));
  CHECK(r.metrics.num_output_tokens == 11);
  CHECK(r.metrics.num_speculative_decodes == 4);
  CHECK(r.metrics.num_speculative_tokens == 10);
  // TPOT = (50 - 10) ms / 10 tokens = 4 ms, the 10 ms step over E = 2.5.
  CHECK(r.metrics.tpot.mean_seconds() == Approx(0.004));

  SECTION("the last step emits only what is left of the output") {
    s.replica.num_speculative_tokens = 3;
    s.replica.limits.num_lookahead_tokens = 3;
    s.replica.expected_tokens_per_step = 4.0;  // every draft accepted
    const ServingResult all = testing::run({record(0.0, 16, 11)}, s, model);
    // 10 tokens after the first: 4, 4, 2.
    CHECK(all.num_steps == 4);
    CHECK(all.metrics.num_output_tokens == 11);
    CHECK(all.metrics.num_speculative_tokens == 10);
  }
}

TEST_CASE("a decode under speculation takes 1 + k tokens of the step's budget",
          "[serving][speculative]") {
  // A budget of 8 tokens and k = 3: two decodes take all 8, so a waiting prompt's prefill waits
  // for the next step; without speculation it would be chunked into the 6 tokens left.
  ServingSetup s = small_setup(64);
  s.replica.limits.max_num_batched_tokens = 8;
  s.replica.num_speculative_tokens = 3;
  s.replica.limits.num_lookahead_tokens = 3;
  s.replica.expected_tokens_per_step = 1.0;
  const LinearTimeModel model(milliseconds(10), Duration::zero());
  testing::KeepAll keep;
  testing::run({record(0.0, 4, 3), record(0.0, 4, 3), record(0.001, 6, 2)}, s, model, &keep);
  REQUIRE(keep.requests.size() == 3);
  // Step 1 (0-10 ms): both 4-token prompts (8 tokens). Step 2 (10-20): two decodes, 2 x 4 = 8
  // tokens: the third prompt waits. Step 3 (20-30): two decodes again (each emits 1 token per
  // step, E = 1): the third waits again; the first two finish at 30 ms. Step 4: its prefill.
  CHECK(keep.requests[0].finish == SimTime::zero() + milliseconds(30));
  CHECK(keep.requests[2].first_scheduled == SimTime::zero() + milliseconds(30));
}

}  // namespace
}  // namespace vramsim::serving
