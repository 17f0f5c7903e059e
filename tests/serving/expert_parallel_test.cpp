// Data-parallel MoE serving: the token exchange of one MoE layer against the alpha-beta ring
// formulas, the routed work of the busiest EP rank, the roofline's per-rank step, and the
// lock-step of the DP ranks in the simulation (one step of the group lasts as long as its
// slowest rank; a rank with nothing to do runs a dummy batch of one token).
#include "sim/serving/expert_parallel.hpp"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/serving/roofline_time_model.hpp"
#include "tests/catch.hpp"
#include "tests/serving/serving_test_support.hpp"

namespace vramsim::serving {
namespace {

using testing::record;

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);

bool within_one_ns(Duration got, double expected_ns) {
  return std::abs(static_cast<double>(got.nanoseconds()) - expected_ns) <= 1.0;
}

TEST_CASE("one MoE layer's dispatch and combine follow the ring formulas of comm::collective",
          "[serving][expert_parallel]") {
  const comm::LinkModel link{GBps(10.0), Duration::from_nanoseconds(2'000)};
  // 2 DP ranks with one token each, hidden 2048, 128 experts, top-8, bf16.
  const MoeExchangeShape shape{1, 2, 2048, 128, 8, 2};
  // allgather_reducescatter: all-gather of 2 * (2048 + 128) * 2 = 8,704 B over 2 ranks: one
  // hop of 2 us + 4,352 B at 10 GB/s = 2,435.2 ns; reduce-scatter of 2 * 2048 * 2 = 8,192 B:
  // 2,000 + 409.6 = 2,409.6 ns.
  const MoeExchange agrs = moe_exchange_time(All2AllBackend::kAllgatherReducescatter, shape, 2,
                                             link);
  CHECK(within_one_ns(agrs.dispatch, 2'435.2));
  CHECK(within_one_ns(agrs.combine, 2'409.6));
  // DeepEP: each rank sends its token to its 8 experts, 1 * 8 * 2048 * 2 = 32,768 B, half of
  // which leaves the rank: 2,000 + 1,638.4 ns, the same back.
  const MoeExchange a2a = moe_exchange_time(All2AllBackend::kDeepepHighThroughput, shape, 2,
                                            link);
  CHECK(within_one_ns(a2a.dispatch, 3'638.4));
  CHECK(a2a.combine == a2a.dispatch);
  CHECK(moe_exchange_time(All2AllBackend::kPplx, shape, 1, link).total() == Duration::zero());
}

TEST_CASE("the busiest EP rank serves its share of the routed tokens times the imbalance",
          "[serving][expert_parallel]") {
  // 100 tokens x top-8 over 128 experts, 64 of them local: 400 assignments.
  CHECK(routed_assignments(100, 8, 128, 64, 1.0) == Approx(400.0));
  CHECK(routed_assignments(100, 8, 128, 64, 1.5) == Approx(600.0));
  // At most every token on min(k, local) local experts: 100 * 8.
  CHECK(routed_assignments(100, 8, 128, 64, 10.0) == Approx(800.0));
  CHECK(routed_assignments(100, 8, 128, 4, 10.0) == Approx(250.0));  // 25 * 10
  CHECK(routed_assignments(100, 8, 128, 4, 20.0) == Approx(400.0));  // capped at 100 * 4
}

struct Qwen3Moe {
  model::ModelSpec spec = model::load_model("Qwen/Qwen3-30B-A3B", kRoot / "scenarios" / "models");
  hardware::DeviceSpec device = io::find_device("rtx-pro-6000", kRoot / "topologies");
};

BatchShape one_decode(std::int32_t dp_rank, std::int64_t group_tokens) {
  BatchShape b;
  b.num_decodes = 1;
  b.decode_context_tokens = 100;
  b.dp_rank = dp_rank;
  b.dp_padded_tokens = 1;
  b.dp_group_tokens = group_tokens;
  return b;
}

TEST_CASE("a DP 2 + EP rank of Qwen3-30B-A3B pays one exchange per MoE layer over PCIe",
          "[serving][expert_parallel]") {
  const Qwen3Moe q;
  ExpertParallelSetup ep;
  ep.data_parallel_size = 2;
  ep.enable_expert_parallel = true;
  const RooflineOptions options;
  const RooflineTimeModel m(q.spec, q.device, {1, 1}, model::WeightFormat{}, DType::kBf16,
                            options, ep);
  REQUIRE(m.dp_group());
  // The RTX PRO 6000 has no NVLink: the PCIe link, scaled as the all-reduces are.
  comm::LinkModel link = comm::intra_node_link(q.device);
  link.bandwidth = options.pcie_collective_efficiency * link.bandwidth;
  const StepTime t = m.step_time(one_decode(0, 2));
  const MoeExchange x = moe_exchange_time(All2AllBackend::kAllgatherReducescatter,
                                          {1, 2, 2048, 128, 8, 2}, 2, link);
  // TP 1: no all-reduce; 48 MoE layers.
  CHECK(t.communication == 48 * x.total());

  SECTION("the experts of one rank are half the model's: a decode reads less than at DP 1") {
    const RooflineTimeModel single(q.spec, q.device, {1, 1}, model::WeightFormat{},
                                   DType::kBf16, options);
    BatchShape b = one_decode(0, 0);
    CHECK(t.linear < single.step_time(b).linear);
  }
  SECTION("an imbalance of 2 slows a compute-bound expert pass, not the exchange") {
    ExpertParallelSetup skewed = ep;
    skewed.expert_load_imbalance = 2.0;
    const RooflineTimeModel s(q.spec, q.device, {1, 1}, model::WeightFormat{}, DType::kBf16,
                              options, skewed);
    BatchShape big;
    big.prefills.push_back({2048, 0});
    big.dp_padded_tokens = 2048;
    big.dp_group_tokens = 4096;
    const StepTime fair = m.step_time(big);
    const StepTime slow = s.step_time(big);
    CHECK(slow.linear > fair.linear);
    CHECK(slow.communication == fair.communication);
    CHECK(slow.attention == fair.attention);
  }
}

TEST_CASE("without a DP group the roofline is the one of before, bit for bit",
          "[serving][expert_parallel]") {
  const Qwen3Moe q;
  const RooflineTimeModel plain(q.spec, q.device, {1, 1}, model::WeightFormat{}, DType::kBf16);
  ExpertParallelSetup one;  // D = 1, no EP
  const RooflineTimeModel with_setup(q.spec, q.device, {1, 1}, model::WeightFormat{},
                                     DType::kBf16, {}, one);
  CHECK_FALSE(with_setup.dp_group());
  // A dense model's DP ranks are independent engines: no group either.
  const model::ModelSpec dense =
      model::load_model("meta-llama/Llama-3.1-8B", kRoot / "scenarios" / "models");
  ExpertParallelSetup dp2;
  dp2.data_parallel_size = 2;
  const RooflineTimeModel dense_dp(dense, q.device, {1, 1}, model::WeightFormat{}, DType::kBf16,
                                   {}, dp2);
  const RooflineTimeModel dense_plain(dense, q.device, {1, 1}, model::WeightFormat{},
                                      DType::kBf16);
  CHECK_FALSE(dense_dp.dp_group());
  for (std::int64_t n : {1, 7, 300, 2048}) {
    BatchShape b;
    b.prefills.push_back({n, 10});
    b.num_decodes = 3;
    b.decode_context_tokens = 900;
    CHECK(plain.step_time(b).total == with_setup.step_time(b).total);
    CHECK(dense_dp.step_time(b).total == dense_plain.step_time(b).total);
  }
}

// Rank 0 steps take 10 ms, rank 1 steps 30 ms, whatever the batch; every batch seen is kept.
class RankTimeModel final : public ExecutionTimeModel {
 public:
  StepTime step_time(const BatchShape& b) const override {
    seen.push_back(b);
    StepTime t;
    t.overhead = milliseconds(b.dp_rank == 0 ? 10 : 30);
    t.total = t.overhead;
    t.stage_interval = t.total;
    return t;
  }
  std::string describe() const override { return "rank test model"; }
  mutable std::vector<BatchShape> seen;
};

TEST_CASE("the DP ranks of an MoE engine step together, as long as the slowest, idle ones "
          "running a dummy batch",
          "[serving][expert_parallel]") {
  ServingSetup setup = testing::small_setup(100);
  setup.data_parallel_size = 2;
  setup.dp_lockstep = true;
  RankTimeModel model;
  // One request of 16 prompt tokens and 3 output tokens: round-robin puts it on rank 0.
  const ServingResult res = testing::run({record(0.0, 16, 3)}, setup, model);
  REQUIRE(res.metrics.num_finished == 1);
  // Every step of the group takes rank 1's 30 ms: prefill, then two decodes.
  CHECK(res.metrics.ttft.mean_seconds() == Approx(0.030));
  CHECK(res.metrics.e2e.mean_seconds() == Approx(0.090));
  CHECK(res.num_steps == 3);  // rank 1's dummy steps are not steps of a replica
  REQUIRE(model.seen.size() == 6);
  // The prefill: rank 0 runs 16 tokens, rank 1 a one-token dummy padded to 16.
  CHECK(model.seen[0].num_tokens() == 16);
  CHECK(model.seen[1].num_decodes == 1);
  CHECK(model.seen[1].dp_rank == 1);
  CHECK(model.seen[1].dp_padded_tokens == 16);
  CHECK(model.seen[0].dp_group_tokens == 32);

  SECTION("without padding the group's tokens are the ranks' own, summed") {
    ServingSetup unpadded = setup;
    unpadded.dp_pad_to_largest = false;
    RankTimeModel m2;
    testing::run({record(0.0, 16, 3)}, unpadded, m2);
    REQUIRE(m2.seen.size() >= 2);
    CHECK(m2.seen[0].dp_group_tokens == 17);
    CHECK(m2.seen[1].dp_padded_tokens == 1);
  }
  SECTION("independent ranks (a dense model's) step alone") {
    ServingSetup alone = setup;
    alone.dp_lockstep = false;
    RankTimeModel m3;
    const ServingResult r3 = testing::run({record(0.0, 16, 3)}, alone, m3);
    CHECK(r3.metrics.ttft.mean_seconds() == Approx(0.010));
    CHECK(r3.metrics.e2e.mean_seconds() == Approx(0.030));
  }
  SECTION("two requests on the two ranks finish together") {
    testing::KeepAll keep;
    RankTimeModel m4;
    testing::run({record(0.0, 16, 3), record(0.0, 16, 3)}, setup, m4, &keep);
    REQUIRE(keep.requests.size() == 2);
    CHECK(keep.requests[0].replica != keep.requests[1].replica);
    CHECK(keep.requests[0].finish == keep.requests[1].finish);
    CHECK(keep.requests[0].finish == SimTime::zero() + milliseconds(90));
  }
}

}  // namespace
}  // namespace vramsim::serving
