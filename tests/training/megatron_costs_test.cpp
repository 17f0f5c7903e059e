// The block costs of a Megatron-LM run (block_compute.cpp, block_exchanges.cpp), each against a
// closed form computed here from the one cost model: the fused memory-bound kernels' bytes, the
// eager attention core (full s^2 GEMMs, softmax and dropout bytes) and what selective recompute
// re-runs, the backward TP collectives hidden behind the weight-gradient GEMMs, full recompute
// re-running the forward's TP collectives, and TP collectives at NCCL's bus bandwidth on NVLink.
// Sources: Korthikanti et al. 2022 (arXiv:2205.05198) sec. 4.1 (the activations of one layer:
// 34 s b h + 5 a s^2 b bytes; the dropout masks are 1 byte per element) and sec. 5 (selective
// recompute re-runs the attention core); Megatron-LM's tensor_parallel/layers.py (asynchronous
// input-gradient all-reduce overlapping the weight gradient).
#include <filesystem>

#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/training/step_graph.hpp"
#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);

// The 22B GPT of Table 3 (h 6144, 64 heads of 96, 48 layers) on A100s: s 2048, b 1.
TrainingSetup gpt22b(int tp, bool sp, Checkpointing ckpt, Attention attention) {
  TrainingPlan plan;
  plan.num_gpus = tp;
  plan.tp = tp;
  plan.sequence_parallel = sp;
  plan.checkpointing = ckpt;
  plan.attention = attention;
  plan.kernels = Kernels::kMegatron;
  plan.micro_batch = 1;
  plan.seq_len = 2048;
  TrainingSetup s{model::load_model(
                      (kRoot / "tests" / "validation" / "models" / "megatron-gpt-22b.json").string(),
                      kRoot / "scenarios" / "models"),
                  io::find_device("a100-sxm-80g", kRoot / "topologies"),
                  plan,
                  {}};
  s.links = default_cluster_links(s.device);
  return s;
}

const BlockCosts& layer0(const std::vector<StagePlan>&& stages) = delete;  // would dangle
const BlockCosts& layer0(const std::vector<StagePlan>& stages) {
  const BlockCosts& c = stages.front().chunks.front()[1];  // [0] is the embedding
  REQUIRE(c.layer == 0);
  return c;
}

constexpr std::int64_t kS = 2048, kH = 6144, kE = 2, kHeadDim = 96;

double gemm_s(const cost::CostModel& cm, std::int64_t m, std::int64_t n, std::int64_t k) {
  return cm.matmul(DType::kBf16, m, n, k).time.seconds();
}

// The four matmuls of a GPT layer on one TP rank, forward: QKV, output projection, FC1, FC2.
double linear_forward_s(const cost::CostModel& cm, std::int64_t t) {
  return gemm_s(cm, kS, 3 * kH / t, kH) + gemm_s(cm, kS, kH, kH / t) +
         gemm_s(cm, kS, 4 * kH / t, kH) + gemm_s(cm, kS, kH, 4 * kH / t);
}
double weight_gradients_s(const cost::CostModel& cm, std::int64_t t) {
  return gemm_s(cm, kH, 3 * kH / t, kS) + gemm_s(cm, kH / t, kH, kS) +
         gemm_s(cm, kH, 4 * kH / t, kS) + gemm_s(cm, 4 * kH / t, kH, kS);
}

// Eager attention forward: b * a/t score matrices, Q K^T and P V, then (4e + 1) bytes a score.
double eager_attention_s(const cost::CostModel& cm, std::int64_t t) {
  const std::int64_t n = 64 / t;
  return static_cast<double>(n) * (gemm_s(cm, kS, kS, kHeadDim) + gemm_s(cm, kS, kHeadDim, kS)) +
         cm.memory_bound(Bytes(n * kS * kS * (4 * kE + 1))).time.seconds();
}

}  // namespace

TEST_CASE("a Megatron GPT layer's forward is its GEMMs, the eager attention core and the fused "
          "kernels' bytes",
          "[training][megatron][cost]") {
  const TrainingSetup s = gpt22b(1, false, {}, Attention::kEager);
  const cost::CostModel cm = cost_model(s);
  const std::vector<StagePlan> stages = plan_stages(s);
  const BlockCosts& c = layer0(stages);
  // Fused LayerNorm x2 (2e h), bias-dropout-add x2 ((3e + 1) h), bias-GeLU (2e of 4h) per token.
  const Bytes fused(kS * (2 * 2 * kE * kH + 2 * (3 * kE + 1) * kH + 2 * kE * 4 * kH));
  const double expected =
      linear_forward_s(cm, 1) + eager_attention_s(cm, 1) + cm.memory_bound(fused).time.seconds();
  CHECK(c.forward.seconds() == Approx(expected).epsilon(1e-6));
}

TEST_CASE("selective recompute re-runs exactly the eager attention core, full recompute the "
          "forward and its TP collectives",
          "[training][megatron][recompute]") {
  Checkpointing selective{CheckpointKind::kSelective};
  Checkpointing full{CheckpointKind::kFull};
  const TrainingSetup sel = gpt22b(8, true, selective, Attention::kEager);
  const std::vector<StagePlan> sel_stages = plan_stages(sel);
  const BlockCosts& cs = layer0(sel_stages);
  CHECK(cs.recompute.seconds() == Approx(eager_attention_s(cost_model(sel), 8)).epsilon(1e-6));

  const TrainingSetup fr = gpt22b(8, false, full, Attention::kEager);
  const std::vector<StagePlan> fr_stages = plan_stages(fr);
  const BlockCosts& cf = layer0(fr_stages);
  CHECK(cf.tp_forward > Duration::zero());
  CHECK(cf.recompute == cf.forward + cf.tp_forward);

  // Flash attention: the causal half of the FLOPs in one kernel, far less than eager's core.
  const TrainingSetup fl = gpt22b(8, true, selective, Attention::kFlash);
  const std::vector<StagePlan> fl_stages = plan_stages(fl);
  CHECK(layer0(fl_stages).recompute < cs.recompute);
}

TEST_CASE("the backward TP collectives hide behind the weight gradient except SP's all-gathers",
          "[training][megatron][tp]") {
  const TrainingSetup no_sp = gpt22b(8, false, {}, Attention::kEager);
  const TrainingSetup sp = gpt22b(8, true, {}, Attention::kEager);
  const cost::CostModel cm = cost_model(no_sp);
  const double wgrad = weight_gradients_s(cm, 8);
  // Two all-reduces of s b h bf16 elements per pass at NCCL's bus bandwidth on NVLink.
  comm::LinkModel nvlink = default_cluster_links(no_sp.device).intra;
  nvlink.bandwidth = kNcclNvlinkBusBandwidthFraction * nvlink.bandwidth;
  const Bytes message(kS * kH * kE);
  const Duration ar = comm::collective_time(comm::Collective::kAllReduce, message, 8, nvlink);
  const Duration ag = comm::collective_time(comm::Collective::kAllGather, message, 8, nvlink);
  const Duration rs = comm::collective_time(comm::Collective::kReduceScatter, message, 8, nvlink);
  REQUIRE(2 * ar < Duration::from_seconds(wgrad));  // at this size the GEMM hides them

  const std::vector<StagePlan> no_sp_stages = plan_stages(no_sp);
  const BlockCosts& a = layer0(no_sp_stages);
  CHECK(a.tp_forward == 2 * ar);
  CHECK(a.tp_backward == Duration::zero());
  const std::vector<StagePlan> sp_stages = plan_stages(sp);
  const BlockCosts& b = layer0(sp_stages);
  CHECK(b.tp_forward == 2 * ag + 2 * rs);
  CHECK(b.tp_backward == 2 * ag);
}

TEST_CASE("Megatron's optimizer step moves 46 bytes per parameter over fp32 main gradients",
          "[training][megatron][optimizer]") {
  // Gradient norm 4 + inf/NaN check 4 + Adam (gradient 4, master 8, two states 16) + master to
  // bf16 parameters (4 + 2) + zeroing the gradient buffer 4 (stage_state.cpp); eager: 28.
  TrainingSetup s = gpt22b(8, false, {}, Attention::kEager);
  s.plan.optimizer = Optimizer::kAdam;
  const cost::CostModel cm = cost_model(s);
  const std::vector<StagePlan> megatron = plan_stages(s);
  CHECK(megatron.front().optimizer ==
        cm.memory_bound(Bytes(megatron.front().num_params * 46)).time);
  s.plan.kernels = Kernels::kEager;
  const std::vector<StagePlan> eager = plan_stages(s);
  CHECK(eager.front().optimizer == cm.memory_bound(Bytes(eager.front().num_params * 28)).time);
}

TEST_CASE("Megatron-LM keeps bf16 training's gradients in fp32: 18 bytes per parameter under "
          "DDP, 6 + 12/d with its distributed optimizer",
          "[training][megatron][memory]") {
  // megatron/training/arguments.py: --bf16 sets accumulate_allreduce_grads_in_fp32 ("bfloat16
  // requires gradient accumulation and all-reduce to be done in fp32"): bf16 weights 2, fp32
  // main gradients 4, fp32 master weights 4, Adam's two fp32 moments 8 = 18 B per parameter;
  // the distributed optimizer (zero1 here) shards the 12 B of master and moments over DP.
  TrainingSetup s = gpt22b(8, false, {}, Attention::kEager);
  s.plan.num_gpus = 16;  // TP=8 x DP=2
  s.plan.optimizer = Optimizer::kAdam;
  CHECK(s.plan.grad_element_bytes() == 4);
  const std::vector<StagePlan> ddp = plan_stages(s);
  const std::int64_t n = ddp.front().trainable_params;
  CHECK(ddp.front().state.total() == Bytes(18 * n));
  CHECK(ddp.front().ddp_buckets.empty());  // the contiguous buffer is reduced in place
  s.plan.strategy = Strategy::kZero1;
  const std::vector<StagePlan> dist = plan_stages(s);
  CHECK(dist.front().state.total() == Bytes(6 * n + 12 * ceil_div(n, 2)));
  // PyTorch (eager) keeps the gradients in bf16 and DDP copies them into its buckets.
  s.plan.kernels = Kernels::kEager;
  s.plan.strategy = Strategy::kDdp;
  CHECK(s.plan.grad_element_bytes() == 2);
  const std::vector<StagePlan> torch = plan_stages(s);
  CHECK(torch.front().state.total() == Bytes(16 * n));
  CHECK_FALSE(torch.front().ddp_buckets.empty());
}
