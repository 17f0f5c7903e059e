// Context parallelism (--cp, ring or all-to-all) and expert parallelism (--ep) in training: the
// tokens, memory, exchanges and gradient groups each gives a rank, against hand-computed cases.
#include <filesystem>

#include "sim/comm/collective.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/model/flop_count.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/model/param_count.hpp"
#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

TrainingSetup make_setup(const std::string& model, const std::string& gpu,
                         const TrainingPlan& plan) {
  const std::filesystem::path root(VRAMSIM_SOURCE_ROOT);
  TrainingSetup s{model::load_model(model, root / "scenarios" / "models"),
                  io::find_device(gpu, root / "topologies"), plan, {}};
  s.links = default_cluster_links(s.device);
  return s;
}

TrainingPlan plan_of(int gpus, int cp, std::int64_t seq_len) {
  TrainingPlan p;
  p.num_gpus = gpus;
  p.cp = cp;
  p.seq_len = seq_len;
  p.micro_batch = 1;
  return p;
}

bool has_problem(const ValidationReport& r, const std::string& field, const std::string& text) {
  for (const Problem& p : r.problems()) {
    if (p.field == field && p.message.find(text) != std::string::npos) return true;
  }
  return false;
}

// The first decoder layer's block on stage 0 (block 0 is the embedding).
const BlockCosts& first_layer(const std::vector<StagePlan>& stages) {
  return stages.front().chunks.front()[1];
}

// Qwen3-30B-A3B's 128 experts over EP 8 of 8 GPUs, 4096-token sequences.
TrainingPlan ep8_plan() {
  TrainingPlan p;
  p.num_gpus = 8;
  p.ep = 8;
  p.seq_len = 4096;
  return p;
}

constexpr const char* kLlama8B = "meta-llama/Llama-3.1-8B";
constexpr const char* kQwen3Moe = "Qwen/Qwen3-30B-A3B";

}  // namespace

TEST_CASE("a context-parallel rank keeps what a rank of seq_len / cp tokens keeps",
          "[training][cp]") {
  // Llama-3.1-8B, 8192 tokens over CP=2: each rank's layer stores exactly what a plain rank of
  // 4096 tokens stores (flash attention keeps Q, K, V, the output and the LSE of its own
  // queries), and its logits are those of 4096 tokens.
  for (const CpComm comm : {CpComm::kRing, CpComm::kAllToAll}) {
    CAPTURE(to_string(comm));
    TrainingPlan cp2 = plan_of(2, 2, 8192);
    cp2.cp_comm = comm;
    const auto split = plan_stages(make_setup(kLlama8B, "h100-sxm", cp2));
    const auto half = plan_stages(make_setup(kLlama8B, "h100-sxm", plan_of(1, 1, 4096)));
    CHECK(first_layer(split).stored == first_layer(half).stored);
    CHECK(split.front().chunks.front().back().stored == half.front().chunks.front().back().stored);
    CHECK(split.front().activation_message == half.front().activation_message);
    // The ring holds two K/V chunks of 4096 tokens in flight (2 x 2 x 4096 x 1024 x 2 B = 32 MiB);
    // Ulysses a second copy of Q, K, V (2 x 4096 x (4096 + 2 x 1024) B = 48 MiB).
    const Bytes extra = comm == CpComm::kRing ? MiB(32) : MiB(48);
    CHECK(first_layer(split).forward_transient == first_layer(half).forward_transient + extra);
  }
}

TEST_CASE("ring context parallelism exposes only the transfer its attention does not hide",
          "[training][cp]") {
  // One CP rank per node (gpus_per_node 1): each ring step sends this rank's K and V chunk,
  // 2 x 2 B x 4096 tokens x 1024 = 16 MiB, over the 400 Gb/s network, against 1/2 of the local
  // attention (half the causal pairs of 8192 tokens).
  TrainingPlan p = plan_of(2, 2, 8192);
  p.gpus_per_node = 1;
  const TrainingSetup setup = make_setup(kLlama8B, "h100-sxm", p);
  const auto stages = plan_stages(setup);
  const BlockCosts& layer = first_layer(stages);
  const Duration send =
      comm::collective_time(comm::Collective::kSendRecv, MiB(16), 2, setup.links.inter);
  const model::ModelSpec& m = setup.model;
  const cost::CostModel cm = cost_model(setup);
  const double pairs = 8192.0 * 8193.0 / 2.0 / 2.0;
  const Duration attention =
      cm.prefill_attention({.attended_pairs = pairs,
                            .num_sequences = 1,
                            .num_q_heads = m.num_attention_heads,
                            .head_dim = m.head_dim,
                            .dtype = DType::kBf16,
                            .flops_per_pair = model::attention_flops_per_attended_token(
                                m, model::ForwardMode::kPrefill)})
          .time;
  const Duration per_step = Duration::from_seconds(attention.seconds() / 2);
  REQUIRE(send > per_step);  // the network is the slower: something is exposed
  CHECK(layer.cp_forward == send - per_step);
  // Inside one NVLink node the same transfer hides behind the attention.
  const auto nvlink = plan_stages(make_setup(kLlama8B, "h100-sxm", plan_of(2, 2, 8192)));
  CHECK(first_layer(nvlink).cp_forward == Duration::zero());
  CHECK(first_layer(nvlink).cp_backward == Duration::zero());
  // Selective recompute re-runs the attention with its exposed ring transfer.
  TrainingPlan sel = p;
  sel.checkpointing = *checkpointing_from_string("selective");
  const BlockCosts rec = first_layer(plan_stages(make_setup(kLlama8B, "h100-sxm", sel)));
  CHECK(rec.recompute == attention + layer.cp_forward);
}

TEST_CASE("all-to-all context parallelism runs four all-to-alls each way per layer",
          "[training][cp]") {
  // Ulysses over CP=2 in one node: Q (2 B x 4096 x 4096 = 32 MiB per rank) and the output the
  // same, K and V 8 MiB each, all-to-all over 2 ranks: each sends half of its buffer.
  TrainingPlan p = plan_of(2, 2, 8192);
  p.cp_comm = CpComm::kAllToAll;
  const TrainingSetup setup = make_setup(kLlama8B, "h100-sxm", p);
  const BlockCosts layer = first_layer(plan_stages(setup));
  const comm::LinkModel& link = setup.links.intra;
  const Duration expected =
      2 * comm::collective_time(comm::Collective::kAllToAll, MiB(32), 2, link) +
      2 * comm::collective_time(comm::Collective::kAllToAll, MiB(8), 2, link);
  CHECK(layer.cp_forward == expected);
  CHECK(layer.cp_backward == expected);
}

TEST_CASE("context-parallel ranks reduce and shard the gradients as data-parallel ranks do",
          "[training][cp]") {
  TrainingPlan p = plan_of(4, 2, 8192);
  CHECK(p.dp() == 2);
  CHECK(p.grad_group() == 4);
  p.strategy = Strategy::kZero3;
  p.param_persistence_threshold = 0;  // every parameter sharded (no whole norms)
  CHECK(p.shard_degree() == 4);
  const auto stages = plan_stages(make_setup(kLlama8B, "h100-sxm", p));
  const std::int64_t n = stages.front().trainable_params;
  // bf16-mixed AdamW, everything sharded over the 4 ranks: 16 B per parameter / 4.
  CHECK(stages.front().state.total() == Bytes(16 * ceil_div(n, 4)));
  // DDP over CP=2 alone (dp = 1): the gradients are still all-reduced, in buckets.
  TrainingPlan ddp = plan_of(2, 2, 8192);
  const TrainingResult r = simulate_training(make_setup(kLlama8B, "h100-sxm", ddp));
  int all_reduces = 0;
  for (const Op& op : r.graph.ops) all_reduces += op.kind == OpKind::kAllReduce ? 1 : 0;
  CHECK(all_reduces > 0);
  for (const DeviceResult& d : r.devices) {
    CHECK(d.compute + d.tp_comm + d.cp_comm + d.ep_comm + d.exposed_comm + d.bubble ==
          d.step_time);
  }
}

TEST_CASE("expert parallelism splits the routed experts and their tokens over the EP ranks",
          "[training][ep]") {
  // Qwen3-30B-A3B: 48 MoE layers of 128 experts, each gate/up/down 2048 x 768:
  // 48 x 128 x 3 x 2048 x 768 = 28,991,029,248 routed parameters; EP=8 keeps 1/8 per rank.
  TrainingPlan p;
  p.num_gpus = 8;
  p.ep = 8;
  p.seq_len = 4096;
  p.micro_batch = 1;
  const TrainingSetup setup = make_setup(kQwen3Moe, "h100-sxm", p);
  const model::ParamCount pc = model::count_params(setup.model);
  const auto stages = plan_stages(setup);
  const StagePlan& st = stages.front();
  CHECK(st.expert_params == 28'991'029'248 / 8);
  CHECK(st.num_params == pc.total - 28'991'029'248 + 28'991'029'248 / 8);
  // DDP, bf16-mixed AdamW: 16 B per parameter, nothing sharded; the expert group is 1 rank.
  CHECK(p.expert_grad_group() == 1);
  CHECK(st.state.total() == Bytes(16 * st.trainable_params));
  // Dispatch and combine: each rank's 4096 tokens x top-8 x 2048 x 2 B = 128 MiB, all-to-all
  // over the 8 ranks of the node, twice each way.
  const BlockCosts& layer = first_layer(stages);
  const Duration a2a = comm::collective_time(comm::Collective::kAllToAll, MiB(128), 8,
                                             setup.links.intra);
  CHECK(layer.ep_forward == 2 * a2a);
  CHECK(layer.ep_backward == 2 * a2a);
  // Without EP: no all-to-all, every expert on every rank, held and reduced as dense weights.
  TrainingPlan none = p;
  none.ep = 1;
  const auto replicated = plan_stages(make_setup(kQwen3Moe, "h100-sxm", none));
  CHECK(first_layer(replicated).ep_forward == Duration::zero());
  CHECK(replicated.front().expert_params == 0);
  CHECK(replicated.front().num_params == pc.total);
}

TEST_CASE("expert gradients are sharded over the ranks that hold the same experts",
          "[training][ep]") {
  // 16 GPUs, EP=4, ZeRO-3: the dense part sharded over all 16, each expert over 16 / 4 = 4.
  TrainingPlan p;
  p.num_gpus = 16;
  p.ep = 4;
  p.strategy = Strategy::kZero3;
  p.param_persistence_threshold = 0;  // every parameter sharded (no whole norms)
  p.seq_len = 2048;
  p.micro_batch = 1;
  CHECK(p.expert_grad_group() == 4);
  CHECK(p.expert_shard_degree() == 4);
  const auto stages = plan_stages(make_setup(kQwen3Moe, "h100-sxm", p));
  const StagePlan& st = stages.front();
  const std::int64_t dense = st.trainable_params - st.expert_params;
  CHECK(st.state.total() == Bytes(16 * (ceil_div(dense, 16) + ceil_div(st.expert_params, 4))));
  const TrainingResult r = simulate_training(make_setup(kQwen3Moe, "h100-sxm", p));
  for (const DeviceResult& d : r.devices) {
    CHECK(d.ep_comm > Duration::zero());
    CHECK(d.compute + d.tp_comm + d.cp_comm + d.ep_comm + d.exposed_comm + d.bubble ==
          d.step_time);
    REQUIRE(d.allocated_after_step.size() == 2);
    CHECK(d.allocated_after_step[0] == d.allocated_after_step[1]);
  }
}

TEST_CASE("context and expert parallelism refuse plans they cannot run, naming the field",
          "[training][cp][ep]") {
  const std::filesystem::path root(VRAMSIM_SOURCE_ROOT);
  const model::ModelSpec llama = model::load_model(kLlama8B, root / "scenarios" / "models");
  const model::ModelSpec moe = model::load_model(kQwen3Moe, root / "scenarios" / "models");
  const auto problems = [](const TrainingPlan& p, const model::ModelSpec* m) {
    ValidationReport r;
    p.validate(r);
    if (m) p.validate_for_model(*m, r);
    return r;
  };
  CHECK(has_problem(problems(plan_of(3, 2, 8192), nullptr), "hardware.num_gpus",
                    "tp x cp x pp = 1 x 2 x 1 = 2"));
  CHECK(has_problem(problems(plan_of(2, 2, 8190), nullptr), "batch.seq_len", "2 x cp = 4"));
  TrainingPlan eager = plan_of(2, 2, 8192);
  eager.attention = Attention::kEager;
  CHECK(has_problem(problems(eager, nullptr), "parallel.cp", "eager"));
  // Ulysses: Llama-3.1-8B has 8 KV heads; over TP=2 and CP=8 they do not split.
  TrainingPlan uly = plan_of(16, 8, 8192);
  uly.tp = 2;
  uly.cp_comm = CpComm::kAllToAll;
  CHECK(has_problem(problems(uly, &llama), "parallel.cp", "4 key/value"));
  TrainingPlan dense_ep = plan_of(2, 1, 4096);
  dense_ep.ep = 2;
  CHECK(has_problem(problems(dense_ep, &llama), "parallel.ep", "no routed experts"));
  TrainingPlan odd = plan_of(6, 1, 4096);
  odd.ep = 3;
  CHECK(has_problem(problems(odd, &moe), "parallel.ep", "128 routed experts"));
  TrainingPlan group = plan_of(4, 1, 4096);
  group.ep = 8;
  CHECK(has_problem(problems(group, &moe), "parallel.ep", "8 does not divide 4"));
  TrainingPlan lora = plan_of(8, 1, 4096);
  lora.ep = 8;
  lora.lora.rank = 8;
  CHECK(has_problem(problems(lora, &moe), "parallel.ep", "LoRA"));
  CHECK(problems(plan_of(8, 2, 8192), &llama).ok());
}

TEST_CASE("MoE routing: the busiest EP rank takes the load imbalance, capped by the capacity "
          "factor, or exactly the capacity when padded",
          "[training][ep][moe]") {
  const std::filesystem::path root(VRAMSIM_SOURCE_ROOT);
  const model::ModelSpec moe = model::load_model(kQwen3Moe, root / "scenarios" / "models");
  TrainingPlan p = ep8_plan();
  p.expert_load_imbalance = 1.5;
  // 16 local experts of 128, top-8: at most every token hits 8 of them, 8x the balanced share.
  CHECK(p.moe_routed_load(*moe.moe) == 1.5);
  CHECK(p.moe_dropped_fraction() == 0.0);
  p.moe_capacity_factor = 1.25;  // drops (1.5 - 1.25) / 1.5 of the busiest expert's tokens
  CHECK(p.moe_routed_load(*moe.moe) == 1.25);
  CHECK(p.moe_dropped_fraction() == Approx(1.0 / 6.0));
  p.moe_pad_to_capacity = true;
  p.moe_capacity_factor = 2.0;
  CHECK(p.moe_routed_load(*moe.moe) == 2.0);
  // Without EP every rank holds every expert: imbalance moves nothing between ranks.
  TrainingPlan no_ep = p;
  no_ep.ep = 1;
  no_ep.moe_pad_to_capacity = false;
  no_ep.moe_capacity_factor = 0.0;
  CHECK(no_ep.moe_routed_load(*moe.moe) == 1.0);

  // Memory and time of a MoE layer on the busiest rank at 1.5x: the experts' inner activations
  // (gate, up, act, act*up: 4 x 2 B x 4096 tokens x 8 x 768) and the dispatched copies and
  // expert outputs (2 x 2 B x 4096 x 8 x 2048) grow by half; the all-to-all buffer too.
  TrainingPlan even = p;
  even.moe_pad_to_capacity = false;
  even.moe_capacity_factor = 0.0;
  even.expert_load_imbalance = 1.0;
  TrainingPlan skewed = even;
  skewed.expert_load_imbalance = 1.5;
  const TrainingSetup se = make_setup(kQwen3Moe, "h100-sxm", even);
  const BlockCosts a = first_layer(plan_stages(se));
  const BlockCosts b = first_layer(plan_stages(make_setup(kQwen3Moe, "h100-sxm", skewed)));
  const std::int64_t inner = 4 * 2 * 4096 * 8 * 768;
  const std::int64_t copies = 2 * 2 * 4096 * 8 * 2048;
  CHECK(b.stored - a.stored == Bytes((inner + copies) / 2));
  CHECK(b.ep_forward == 2 * comm::collective_time(comm::Collective::kAllToAll,
                                                  Bytes(3 * MiB(128).count() / 2), 8,
                                                  se.links.intra));
  CHECK(b.forward > a.forward);
  // Routing settings on a dense model are refused.
  const model::ModelSpec llama = model::load_model(kLlama8B, root / "scenarios" / "models");
  TrainingPlan dense = plan_of(1, 1, 4096);
  dense.expert_load_imbalance = 2.0;
  ValidationReport r;
  dense.validate(r);
  dense.validate_for_model(llama, r);
  CHECK(has_problem(r, "parallel.expert_load_imbalance", "mixture-of-experts"));
  TrainingPlan pad = plan_of(8, 1, 4096);
  pad.moe_pad_to_capacity = true;
  ValidationReport r2;
  pad.validate(r2);
  CHECK(has_problem(r2, "parallel.moe_pad_to_capacity", "capacity factor"));
}

TEST_CASE("MoE routing measured per expert: the busiest rank's experts and the tokens the "
          "capacity drops",
          "[training][ep][moe]") {
  const std::filesystem::path root(VRAMSIM_SOURCE_ROOT);
  const model::ModelSpec moe = model::load_model(kQwen3Moe, root / "scenarios" / "models");
  TrainingPlan p = ep8_plan();
  // 128 experts, 16 per rank: rank 0's experts take 3 units, every other expert 1 (mean
  // (16 x 3 + 112) / 128 = 1.25): relative 2.4 and 0.8.
  p.expert_loads.assign(128, 1.0);
  for (int i = 0; i < 16; ++i) p.expert_loads[static_cast<std::size_t>(i)] = 3.0;
  CHECK(p.busiest_expert_load() == Approx(2.4));
  CHECK(p.moe_routed_load(*moe.moe) == Approx(2.4));  // rank 0: all 16 at 2.4
  CHECK(p.moe_dropped_fraction() == 0.0);              // dropless
  // Capacity 2: rank 0's experts drop 0.4 each, 16 x 0.4 / 128 = 5% of all routed tokens.
  p.moe_capacity_factor = 2.0;
  CHECK(p.moe_routed_load(*moe.moe) == Approx(2.0));
  CHECK(p.moe_dropped_fraction() == Approx(16 * 0.4 / 128));
  // Spread the hot experts over the ranks (two per rank): every rank takes 2 x 2.4 + 14 x 0.8
  // over 16 = 1.0, and the same tokens are dropped at capacity 2.
  TrainingPlan spread = p;
  spread.moe_capacity_factor = 0.0;
  spread.expert_loads.assign(128, 1.0);
  for (int r = 0; r < 8; ++r) {
    spread.expert_loads[static_cast<std::size_t>(16 * r)] = 3.0;
    spread.expert_loads[static_cast<std::size_t>(16 * r + 1)] = 3.0;
  }
  CHECK(spread.moe_routed_load(*moe.moe) == Approx(1.0));
  // Uniform loads are uniform routing, bit for bit in the stage plan.
  TrainingPlan uniform = spread;
  uniform.expert_loads.assign(128, 7.0);
  TrainingPlan none = uniform;
  none.expert_loads.clear();
  CHECK(uniform.moe_routed_load(*moe.moe) == 1.0);
  CHECK(first_layer(plan_stages(make_setup(kQwen3Moe, "h100-sxm", uniform))).forward ==
        first_layer(plan_stages(make_setup(kQwen3Moe, "h100-sxm", none))).forward);
  // Refused: a load per expert or none, no negatives, not with --expert-load-imbalance.
  TrainingPlan short_list = p;
  short_list.expert_loads.resize(3);
  ValidationReport r;
  short_list.validate(r);
  short_list.validate_for_model(moe, r);
  CHECK(has_problem(r, "parallel.expert_loads", "3 loads for Qwen/Qwen3-30B-A3B's 128"));
  TrainingPlan negative = p;
  negative.expert_loads[5] = -1.0;
  negative.expert_load_imbalance = 2.0;
  ValidationReport r2;
  negative.validate(r2);
  CHECK(has_problem(r2, "parallel.expert_loads", "expert 5's load must be"));
  CHECK(has_problem(r2, "parallel.expert_load_imbalance", "not both"));
  TrainingPlan zeros = p;
  zeros.expert_loads.assign(128, 0.0);
  ValidationReport r3;
  zeros.validate(r3);
  CHECK(has_problem(r3, "parallel.expert_loads", "nothing is routed"));
}
