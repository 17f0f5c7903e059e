// Pipeline-parallel decode as vLLM runs it (serving::ReplicaConfig::pipeline_depth): a request
// is in one batch at a time and its batch passes the stages in turn, so with nothing but
// decodes a token costs every stage's weight read once. Hand-computed for Llama-3.1-70B
// (hidden 8192, 80 layers, 64 query and 8 KV heads of 128, intermediate 28672, vocabulary
// 128256, untied) in bf16 on 4 x H100 SXM at PP 4: per layer q and o 2 x 8192^2, k and v
// 2 x 8192 x 1024, the MLP 3 x 8192 x 28672 = 855,638,016 weights; 80 layers and the lm_head
// (8192 x 128256) give 69,501,714,432 weights read per token (the embedding is a lookup), or
// 139.0 GB, which at the datasheet roofline's 0.85 of 3.35 TB/s (cost/datasheet_constants.hpp)
// take 48.82 ms; the 80 layers' 10 kernels each (TP 1) add 800 gaps of 1.3 us, and each
// layer's 4 GEMM kernels 4.7 us and its 6 other kernels 3 us of fixed time (the lm_head's GEMM
// 4.7 us more): 80 x 49.8 us + 4.7 us = 3.99 ms (cost/datasheet_constants.hpp). The
// rest of a step is attention over a short context, the stage-to-stage sends and the host time
// (hidden behind the GPU with async scheduling).
#include <string>

#include "sim/run/serve_options.hpp"
#include "sim/run/serve_run.hpp"
#include "tests/catch.hpp"

namespace {

using namespace vramsim;

double tpot_mean_s(const std::string& engine) {
  const std::string text =
      "[model]\nid = \"meta-llama/Llama-3.1-70B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "[engine]\nmax_model_len = 4096\npp = 4\n" + engine +
      "[workload]\nnum_requests = 48\nmax_concurrency = 16\nprompt_tokens = \"fixed:100\"\n"
      "output_tokens = \"fixed:200\"\n";
  run::ServeAnswer a = run::prepare_serve(run::serve_config(
      run::resolve_serve_options(run::load_serve_scenario_text(text, "pp_decode.toml"))));
  REQUIRE(a.feasible);
  run::simulate_serve(a, nullptr);
  REQUIRE(a.result.metrics.num_finished == 48);
  return a.result.metrics.tpot.mean_seconds();
}

}  // namespace

TEST_CASE("pipeline-parallel decode reads every stage's weights once per token",
          "[run][serve][pp]") {
  constexpr double kWeightsReadS = 69'501'714'432.0 * 2.0 / (3.35e12 * 0.85);  // 48.82 ms
  constexpr double kKernelGapsS =
      80 * (10 * 1.3e-6 + 4 * 4.7e-6 + 6 * 3.0e-6) + 4.7e-6;  // 3.99 ms
  const double async_s = tpot_mean_s("");  // 0.19.0: async scheduling on with PP
  const double sync_s = tpot_mean_s("async_scheduling = false\n");
  CAPTURE(kWeightsReadS, kKernelGapsS, async_s, sync_s);
  CHECK(async_s > kWeightsReadS + kKernelGapsS);
  CHECK(async_s < (kWeightsReadS + kKernelGapsS) * 1.02);
  // Synchronous, each token also waits for the step's host time (0.5 ms + 5 us a sequence).
  CHECK(sync_s > async_s);
  CHECK(sync_s < (kWeightsReadS + kKernelGapsS) * 1.04);
}
