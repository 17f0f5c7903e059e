// torchtitan's FSDP2 runs of Llama 3.1 8B against their published peak reserved memory and
// tokens/s per GPU: pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md (torch
// 1963fc8, torchtitan 9dec370, December 2024), Table 1 (8 GPUs) and Table 3 (128 GPUs), the
// plain "FSDP" rows (no torch.compile, no Float8). The settings each row ran with and where
// they come from: tests/validation/torchtitan_llama3_fsdp.csv and tests/validation/README.md.
// Nothing was fitted to them (used_for_fitting = no). The bounds below are the errors this
// commit achieves, so a change that makes them worse fails.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/io/topology_loader.hpp"
#include "sim/run/train_run.hpp"
#include "tests/catch.hpp"
#include "tests/validation/validation_scenario.hpp"
#include "tests/validation/validation_table.hpp"

using namespace vramsim;

namespace {

const std::vector<std::string> kColumns = {
    "case",          "model",          "num_gpus",     "strategy",
    "precision",     "optimizer_impl", "checkpointing", "loss",
    "micro_batch",   "seq_len",        "published_memory_gib",
    "published_tps_per_gpu", "used_for_fitting", "source"};

// The row as a training scenario on H100 SXM; the benchmark's GPUs are Grand Teton's H100 with
// 96 GB of HBM2e at 2.4 TB/s and a 500 W power limit (the benchmark's Hardware section), which
// no shipped sheet describes: the memory and its bandwidth are set here, the compute peaks stay
// the SXM sheet's (the benchmark says the real peak lies between SXM's and NVL's).
training::TrainingSetup setup_of(const vramsim::testing::ValidationRow& r) {
  training::TrainingSetup s = vramsim::testing::training_setup_of_row(
      r,
      "[model]\nid = \"{model}\"\n[hardware]\ngpu = \"h100-sxm\"\nnum_gpus = {num_gpus}\n"
      "[parallel]\nstrategy = \"{strategy}\"\n"
      "[batch]\nmicro_batch = {micro_batch}\nseq_len = {seq_len}\n"
      "[memory]\nprecision = \"{precision}\"\noptimizer_impl = \"{optimizer_impl}\"\n"
      "checkpointing = \"{checkpointing}\"\nloss = \"{loss}\"\n");
  // The SXM sheet's cudaMemGetInfo reading of its 80 GiB, scaled to 96 GiB of HBM.
  s.device.memory_total = Bytes(s.device.memory_total.count() / 80 * 96);
  s.device.memory_bandwidth = GBps(2400);
  return s;
}

}  // namespace

TEST_CASE("torchtitan's FSDP2 Llama 3.1 8B peak reserved memory and tokens/s are reproduced",
          "[run][training][validation]") {
  const auto rows =
      vramsim::testing::read_validation_table("torchtitan_llama3_fsdp.csv", kColumns);
  REQUIRE(rows.size() == 2);
  double mem_max = 0, tps_max = 0;
  std::vector<double> reserved_gib;
  for (const auto& r : rows) {
    CAPTURE(r.at("case"));
    CHECK(r.at("used_for_fitting") == "no");
    const training::TrainingResult res =
        training::simulate_training(setup_of(r), {.num_steps = 2, .record_timeline = false});
    const training::DeviceResult* d = run::binding_device(res);
    REQUIRE(d != nullptr);
    // torchtitan logs torch.cuda.memory_stats()["reserved_bytes.all.peak"] in GiB (metrics.py,
    // DeviceMemoryMonitor.get_peak_stats; "memory: {max_reserved_gib}GiB").
    const double simulated_gib =
        static_cast<double>(d->peak_reserved.count()) / (1024.0 * 1024.0 * 1024.0);
    const double mem_err = simulated_gib / r.number("published_memory_gib") - 1.0;
    const double simulated_tps =
        res.tokens_per_s / static_cast<double>(r.integer("num_gpus"));
    const double tps_err = simulated_tps / r.number("published_tps_per_gpu") - 1.0;
    WARN(fmt::format("{:>26}: peak reserved {:6.2f} GiB vs {} GiB ({:+6.1f} %), {:6.0f} vs {} "
                     "tokens/s per GPU ({:+6.1f} %)",
                     r.at("case"), simulated_gib, r.at("published_memory_gib"), 100.0 * mem_err,
                     simulated_tps, r.at("published_tps_per_gpu"), 100.0 * tps_err));
    CHECK(res.fits);
    reserved_gib.push_back(simulated_gib);
    mem_max = std::max(mem_max, std::abs(mem_err));
    tps_max = std::max(tps_max, std::abs(tps_err));
  }
  // The 8- to 128-GPU drop is the sharded model state (16 B per parameter over 8 vs 128
  // ranks) and the foreach step's copy of one state: published 15.4 GiB.
  const double drop = reserved_gib[0] - reserved_gib[1];
  WARN(fmt::format("8 -> 128 GPUs: {:.2f} GiB less reserved (published 15.4)", drop));
  // This commit: peak reserved -2.3 % (8 GPUs: 80.50 GiB) and -0.8 % (128: 66.47 GiB), with the
  // allocated peak at 72.88 / 58.86 GiB: the caching allocator, fed one request per tensor
  // (the loss's bf16 logits, fp32 copy and gradients apart, each layer's saved tensors apart)
  // and FSDP's gathers on their own stream, reserves 7.6 GiB above the allocation (it was
  // 15.5 GiB with one lump per layer and loss in one pool). The drop 14.03 GiB. Tokens/s per
  // GPU +33.5 % (7,694) and +38.6 % (7,768): the datasheet roofline of the 700 W SXM part's
  // compute peaks against cards held at 500 W (the benchmark's own MFU reading is 33 to 39 %).
  CHECK(mem_max <= 0.025);
  CHECK(std::abs(drop - 15.4) <= 1.5);
  CHECK(tps_max <= 0.40);
}

TEST_CASE("torchtitan's FSDP2 tokens/s with the lower bound its benchmark gives the 500 W H100s' "
          "peak",
          "[run][training][validation]") {
  // The benchmark's footnote 2: "the actual peak TFLOPs number is between SXM and NVL". With the
  // compute peaks of the H100 NVL sheet (835.5 TFLOP/s dense bf16, against the SXM's 989.4) the
  // simulated tokens/s is the bracket's low end; the published figure lies below even that.
  const auto rows =
      vramsim::testing::read_validation_table("torchtitan_llama3_fsdp.csv", kColumns);
  const hardware::DeviceSpec nvl =
      io::find_device("h100-nvl", std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "topologies");
  for (const auto& r : rows) {
    CAPTURE(r.at("case"));
    training::TrainingSetup s = setup_of(r);
    const training::TrainingResult sxm =
        training::simulate_training(s, {.num_steps = 2, .record_timeline = false});
    s.device.peak = nvl.peak;
    const training::TrainingResult low =
        training::simulate_training(s, {.num_steps = 2, .record_timeline = false});
    const double gpus = static_cast<double>(r.integer("num_gpus"));
    const double published = r.number("published_tps_per_gpu");
    const double low_err = low.tokens_per_s / gpus / published - 1.0;
    WARN(fmt::format("{:>26}: {:6.0f} (NVL peaks) to {:6.0f} (SXM peaks) vs {} tokens/s per GPU "
                     "({:+6.1f} % at the low end)",
                     r.at("case"), low.tokens_per_s / gpus, sxm.tokens_per_s / gpus,
                     r.at("published_tps_per_gpu"), 100.0 * low_err));
    CHECK(low.tokens_per_s < sxm.tokens_per_s);
    // This commit: +19.1 % (8 GPUs: 6,864) and +23.5 % (128: 6,922): the roofline's compute at
    // 0.70 of either peak is still faster than these runs; held so that it fails if it grows.
    CHECK(low_err <= 0.26);
  }
}
