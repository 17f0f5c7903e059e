// Multi-LoRA serving (issue 16): vLLM's scheduler bounds the distinct adapters of a step by
// max_loras (vllm/v1/core/sched/scheduler.py, scheduled_loras), an adapter outside the GPU
// slots is copied in over the host link before its step, adapters never share prefix blocks,
// and the punica shrink/expand products add to the step time.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/cost/datasheet_constants.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/memory/lora_memory.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/serving/lora_time_model.hpp"
#include "sim/serving/roofline_options.hpp"
#include "sim/serving/serving_simulation.hpp"
#include "sim/serving/traces/lora_assignment.hpp"
#include "tests/catch.hpp"
#include "tests/serving/serving_test_support.hpp"

namespace vramsim::serving {
namespace {

using testing::KeepAll;
using testing::LinearTimeModel;
using testing::small_setup;

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);

TraceRecord with_adapter(double arrival_s, std::int64_t prompt, std::int64_t output,
                         std::int32_t adapter) {
  TraceRecord r = testing::record(arrival_s, prompt, output);
  r.adapter = adapter;
  return r;
}

// The linear test model, keeping the most adapters any step named and the steps run.
class AdapterCounter final : public ExecutionTimeModel {
 public:
  StepTime step_time(const BatchShape& b) const override {
    max_adapters = std::max(max_adapters, b.num_adapters);
    ++steps;
    return inner.step_time(b);
  }
  std::string describe() const override { return "adapter counter"; }
  LinearTimeModel inner{milliseconds(10), Duration::zero()};
  mutable std::int64_t max_adapters = 0;
  mutable std::int64_t steps = 0;
};

TEST_CASE("a step never names more than max_loras adapters and skipped requests keep their place",
          "[serving][lora]") {
  // Six requests at once naming adapters 1, 2, 3, 1, 2, 3 with max_loras 2: the first step
  // admits requests 0, 1, 3 and 4 (adapters 1 and 2) and skips 2 and 5 (adapter 3), which
  // wait until a step has room for a third adapter.
  ServingSetup s = small_setup(64);
  s.replica.limits.max_loras = 2;
  AdapterCounter model;
  KeepAll keep;
  std::vector<TraceRecord> records;
  for (int i = 0; i < 6; ++i) records.push_back(with_adapter(0.0, 16, 3, 1 + i % 3));
  const ServingResult r = testing::run(records, s, model, &keep);
  REQUIRE(keep.requests.size() == 6);
  CHECK(r.metrics.num_finished == 6);
  CHECK(model.max_adapters == 2);
  std::vector<SimTime> scheduled(6);
  for (const RequestRecord& rec : keep.requests) {
    scheduled[static_cast<std::size_t>(rec.id)] = rec.first_scheduled;
  }
  for (const int i : {0, 1, 3, 4}) CHECK(scheduled[static_cast<std::size_t>(i)] == SimTime::zero());
  // Adapters 1 and 2 run their 3 steps (prefill and 2 decodes): adapter 3 starts at 30 ms.
  CHECK(scheduled[2] == SimTime::zero() + milliseconds(30));
  CHECK(scheduled[5] == SimTime::zero() + milliseconds(30));
  CHECK(r.num_lora_adapter_steps == 3 * 2 + 3 * 1);

  // LoRA off (max_loras 0): requests naming adapters are refused, not run unbounded.
  s.replica.limits.max_loras = 0;
  AdapterCounter off;
  CHECK_THROWS_AS(testing::run(records, s, off), ConfigError);
  // With three slots the same trace runs all three adapters at once.
  s.replica.limits.max_loras = 3;
  AdapterCounter three;
  testing::run(records, s, three);
  CHECK(three.max_adapters == 3);
  CHECK(three.steps == 3);
}

TEST_CASE("an adapter outside the GPU slots is copied in over the host link before its step",
          "[serving][lora]") {
  // 10 ms steps; 250 MB at 25 GB/s is 10 ms. One slot, requests on adapters 1, then 1, then 2:
  // the first request's first step loads adapter 1 (20 ms); the second request reuses it; the
  // third loads adapter 2 into the one slot.
  ServingSetup s = small_setup(64);
  s.replica.limits.max_loras = 1;
  s.replica.lora_adapter_bytes = Bytes(250'000'000);
  const LinearTimeModel model(milliseconds(10), Duration::zero());
  KeepAll keep;
  const ServingResult r = testing::run(
      {with_adapter(0.0, 16, 2, 1), with_adapter(1.0, 16, 2, 1), with_adapter(2.0, 16, 2, 2)},
      s, model, &keep);
  REQUIRE(keep.requests.size() == 3);
  CHECK(r.num_adapter_loads == 2);
  CHECK(keep.requests[0].first_token == SimTime::zero() + milliseconds(20));
  CHECK(keep.requests[1].first_token == SimTime::zero() + milliseconds(1010));
  CHECK(keep.requests[2].first_token == SimTime::zero() + milliseconds(2020));
}

TEST_CASE("two adapters never share prefix blocks, the same adapter does",
          "[serving][lora][prefix]") {
  TraceRecord a = testing::record(0.0, 64, 1);
  a.hash_ids = {7, 8};
  a.hash_block_tokens = 32;
  TraceRecord b = a;
  TraceRecord c = a;
  b.adapter = 1;
  c.adapter = 2;
  const auto ha = prefix_block_hashes(a, 16);
  const auto hb = prefix_block_hashes(b, 16);
  const auto hc = prefix_block_hashes(c, 16);
  REQUIRE(ha.size() == 4);
  REQUIRE(hb.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(ha[i] != hb[i]);
    CHECK(hb[i] != hc[i]);
    CHECK(ha[i] != hc[i]);
  }
  CHECK(prefix_block_hashes(b, 16) == hb);
}

TEST_CASE("adapters are drawn deterministically from the seed, uniform or zipf",
          "[serving][lora]") {
  const auto draw = [](LoraAssignment a, std::int64_t n) {
    std::vector<TraceRecord> records(static_cast<std::size_t>(n), testing::record(0.0, 8, 1));
    LoraAssignedTrace t(std::make_unique<testing::VectorTrace>(records), a);
    std::vector<std::int32_t> out;
    while (const auto r = t.next()) out.push_back(r->adapter);
    return out;
  };
  LoraAssignment uni;
  uni.num_adapters = 4;
  uni.seed = 7;
  const auto u1 = draw(uni, 4000);
  CHECK(draw(uni, 4000) == u1);
  std::vector<std::int64_t> counts(5, 0);
  for (const std::int32_t k : u1) ++counts[static_cast<std::size_t>(k)];
  CHECK(counts[0] == 0);
  for (std::size_t k = 1; k <= 4; ++k) CHECK(counts[k] == Approx(1000).margin(120));
  LoraAssignment zipf = uni;
  ValidationReport report;
  zipf.parse_distribution("zipf:1.0", report, "workload.lora_distribution");
  REQUIRE(report.ok());
  std::fill(counts.begin(), counts.end(), 0);
  for (const std::int32_t k : draw(zipf, 4000)) ++counts[static_cast<std::size_t>(k)];
  // Weights 1, 1/2, 1/3, 1/4 of 25/12: adapter 1 about 48 %, adapter 4 about 12 %.
  CHECK(counts[1] == Approx(4000 * 0.48).margin(150));
  CHECK(counts[4] == Approx(4000 * 0.12).margin(100));
  uni.seed = 8;
  CHECK(draw(uni, 4000) != u1);
  zipf.parse_distribution("zipf:-1", report, "workload.lora_distribution");
  zipf.parse_distribution("pareto", report, "workload.lora_distribution");
  CHECK(report.problems().size() == 2);
}

TEST_CASE("LoRA's shrink and expand add the adapters' weight reads to a decode step",
          "[serving][lora]") {
  // Llama-3.1-8B on one H100, rank 16, bf16; a decode step of 4 sequences on 2 adapters, 2
  // tokens each. Per adapter and layer the eight products read and write, in elements
  // (m x k input, k x n weights, m x n output, m = 2):
  //   qkv shrink 8,192 + 196,608 + 96 = 204,896     expand 32 + 98,304 + 12,288 = 110,624
  //   o   shrink 8,192 +  65,536 + 32 =  73,760     expand 32 + 65,536 +  8,192 =  73,760
  //   gate_up    8,192 + 131,072 + 64 = 139,328     expand 32 + 458,752 + 57,344 = 516,128
  //   down      28,672 + 229,376 + 32 = 258,080     expand 32 + 65,536 +  8,192 =  73,760
  // 1,450,336 elements = 2,900,672 B, every product memory-bound; x 2 adapters x 32 layers =
  // 185,643,008 B at the bandwidth x memory efficiency of the cost model.
  const model::ModelSpec spec =
      model::load_model("meta-llama/Llama-3.1-8B-Instruct", kRoot / "scenarios" / "models");
  const hardware::DeviceSpec device = io::find_device("h100-sxm", kRoot / "topologies");
  memory::LoraConfig cfg;
  cfg.max_loras = 4;
  cfg.max_lora_rank = 16;
  const LinearTimeModel base(milliseconds(10), Duration::zero());
  const LoraTimeModel lora(base, spec, device, model::Parallelism{1, 1}, cfg,
                           RooflineOptions{}.efficiencies(device));
  BatchShape b;
  b.num_decodes = 4;
  b.decode_context_tokens = 400;
  const StepTime plain = lora.step_time(b);
  CHECK(plain.total == milliseconds(10));  // no adapter tokens: nothing added
  b.num_lora_tokens = 4;
  b.num_adapters = 2;
  const StepTime t = lora.step_time(b);
  const double seconds =
      185'643'008.0 / (device.memory_bandwidth.bytes_per_second() * cost::kMemoryEfficiency);
  const Duration expected = Duration::from_seconds(seconds);
  CHECK((t.total - plain.total).nanoseconds() == Approx(expected.nanoseconds()).margin(2));
  CHECK(t.linear - plain.linear == t.total - plain.total);
  // One adapter reads half the weights.
  b.num_adapters = 1;
  const Duration one = lora.step_time(b).total - plain.total;
  CHECK(one < t.total - plain.total);
}

}  // namespace
}  // namespace vramsim::serving
