// --vllm-version selects the release whose start-up accounting `budget` and `serve` model
// (sim/run/vllm_version.hpp): the profile run's sampler and whether the CUDA-graph estimate is
// subtracted from the KV cache. The activation peaks below are computed by hand from the buffer
// counts of sim/memory/activation_profile.hpp for Llama-3.1-8B-Instruct on one H100 SXM
// (hidden 4096, intermediate 14336, vocabulary V = 128256, 132 SMs) at vLLM's `vllm serve`
// defaults there: N = 8192 profile tokens, R = min(1024, 8192) = 1024 sampler rows.
#include <string>

#include "sim/core/error.hpp"
#include "sim/run/budget_run.hpp"
#include "sim/run/data_root.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/vllm_version.hpp"
#include "tests/catch.hpp"
#include "tests/run/budget_notes.hpp"

namespace {

using namespace vramsim;

run::BudgetAnswer llama_8b(const std::string& version) {
  run::BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  req.gpu_id = "h100-sxm";
  req.max_model_len = 8192;
  req.vllm_version = version;
  req.suggest = false;
  return run::answer_budget(req, run::project_root());
}

std::string version_error(const std::string& version) {
  try {
    llama_8b(version);
  } catch (const ConfigError& e) {
    for (const Problem& p : e.report().problems()) {
      if (p.field == "engine.vllm_version") return p.message;
    }
    return "other field: " + std::string(e.what());
  }
  return "";
}

using testing::has_note;

// The hidden states [N, h] and the sampled rows [R, h] profile_run keeps, in bf16.
constexpr std::int64_t kKeptHidden = (8192 + 1024) * 4096 * 2;  // 75,497,472 B

}  // namespace

TEST_CASE("vLLM versions parse as releases, with pre- and post-release suffixes",
          "[run][budget][vllm_version]") {
  CHECK(run::parse_vllm_version("0.19.0") == run::VllmVersion{0, 19, 0});
  CHECK(run::parse_vllm_version("0.19") == run::VllmVersion{0, 19, 0});
  CHECK(run::parse_vllm_version("v0.10.1") == run::VllmVersion{0, 10, 1});
  CHECK(run::parse_vllm_version("0.11.0rc2") == run::VllmVersion{0, 11, 0});
  CHECK(run::parse_vllm_version("0.10.1.post1") == run::VllmVersion{0, 10, 1});
  CHECK(run::parse_vllm_version("0.10.1.1") == run::VllmVersion{0, 10, 1});
  CHECK_FALSE(run::parse_vllm_version("0.10.1.x"));
  CHECK(run::parse_vllm_version("0.19.0+cu128") == run::VllmVersion{0, 19, 0});
  CHECK_FALSE(run::parse_vllm_version(""));
  CHECK_FALSE(run::parse_vllm_version("latest"));
  CHECK_FALSE(run::parse_vllm_version("0"));
  CHECK_FALSE(run::parse_vllm_version("0.x"));
  CHECK_FALSE(run::parse_vllm_version("0.19.0 beta"));
  CHECK(run::to_string(run::VllmVersion{0, 9, 2}) == "0.9.2");
}

TEST_CASE("vLLM 0.19 (the default) samples with the Triton kernel: 1.89 GiB peak on 8B/H100",
          "[run][budget][vllm_version]") {
  const run::BudgetAnswer a = llama_8b("0.19.0");
  CHECK(a.engine.sampler == memory::SamplerKind::kTritonTopKTopP);
  CHECK_FALSE(a.engine.subtract_cuda_graph);
  REQUIRE(a.result.devices.size() == 1);
  // bf16 logits R*V*2 + 3 fp32 [R, V] + the per-SM buffer min(next_pow2(min(132, R)), 132) = 132
  // rows of V fp32 + the fitted 45 MiB + the kept hidden states.
  const std::int64_t logits = 1024LL * 128256 * 2;           //   262,668,288
  const std::int64_t fp32 = 3LL * 1024 * 128256 * 4;         // 1,576,009,728
  const std::int64_t per_sm = 132LL * 128256 * 4;            //    67,719,168
  const std::int64_t fixed = 45LL << 20;                     //    47,185,920
  CHECK(a.result.devices[0].activation_peak.count() ==
        logits + fp32 + per_sm + fixed + kKeptHidden);  // 2,029,080,576 B = 1.89 GiB
  // The default is the release the start-up logs validate.
  CHECK(run::BudgetRequest{}.vllm_version == run::to_string(run::kNewestValidatedVllm));
}

TEST_CASE("vLLM 0.15 samples with the sort-based path: its peak is inside torch.sort",
          "[run][budget][vllm_version]") {
  const run::BudgetAnswer old = llama_8b("0.15.1");
  const run::BudgetAnswer now = llama_8b("0.19.0");
  CHECK(old.engine.sampler == memory::SamplerKind::kSortTopKTopP);
  REQUIRE(old.result.devices.size() == 1);
  // Per [R, V] element: bf16 logits 2 + fp32 logits 4 + sorted values 4 + int64 indices 8 +
  // int64 source indices 8 + CUB's alternate keys 4 and values 8 = 38 B (R = 1024 >= 128).
  const std::int64_t sort = 38LL * 1024 * 128256 + (45LL << 20);  // 4,037,935,104 B
  CHECK(old.result.devices[0].activation_peak.count() == sort + kKeptHidden);
  // More activation peak: fewer KV blocks; the weights unchanged.
  CHECK(old.result.devices[0].weights == now.result.devices[0].weights);
  CHECK(old.result.num_gpu_blocks < now.result.num_gpu_blocks);
  CHECK(has_note(old, "sort-based"));
}

TEST_CASE("vLLM before 0.11.1 samples with FlashInfer where it is installed",
          "[run][budget][vllm_version]") {
  run::BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  req.gpu_id = "h100-sxm";
  req.max_model_len = 8192;
  req.vllm_version = "0.10.1.1";
  req.suggest = false;
  const run::BudgetAnswer with = run::answer_budget(req, run::project_root());
  CHECK(with.engine.sampler == memory::SamplerKind::kFlashInferTopKTopP);
  CHECK(has_note(with, "FlashInfer"));
  // bf16 logits + fp32 logits, masked_logits and probs (FlashInfer's top_k_first order).
  const std::int64_t flashinfer = (2 + 3 * 4) * 1024LL * 128256 + (45LL << 20);
  CHECK(with.result.devices[0].activation_peak.count() == flashinfer + kKeptHidden);
  req.flashinfer_installed = false;
  CHECK(run::answer_budget(req, run::project_root()).engine.sampler ==
        memory::SamplerKind::kSortTopKTopP);
  // PR #26859 turned it off by default after 0.11.0; installed or not, later releases sort.
  req.flashinfer_installed = true;
  req.vllm_version = "0.11.1";
  CHECK(run::answer_budget(req, run::project_root()).engine.sampler ==
        memory::SamplerKind::kSortTopKTopP);
}

TEST_CASE("releases before 0.17.1 run no start-up CUDA-graph profile: less non-torch memory",
          "[run][budget][vllm_version]") {
  const run::BudgetAnswer before = llama_8b("0.17.0");
  const run::BudgetAnswer after = llama_8b("0.17.1");
  CHECK_FALSE(before.engine.profiles_cuda_graph_memory);
  CHECK(after.engine.profiles_cuda_graph_memory);
  CHECK(after.result.devices[0].non_torch == llama_8b("0.19.0").result.devices[0].non_torch);
  CHECK(after.result.devices[0].non_torch - before.result.devices[0].non_torch ==
        after.overheads.non_torch_graph_profiling);
  CHECK(before.result.num_gpu_blocks > after.result.num_gpu_blocks);
  CHECK(has_note(before, "CUDA-graph memory profile"));
}

TEST_CASE("TP 2 on an A100 NVSwitch node is charged no NVLS buffers, on H100 it is",
          "[run][budget][vllm_version]") {
  const auto tp2 = [](const std::string& gpu) {
    run::BudgetRequest req;
    req.model_id = "meta-llama/Llama-3.1-8B-Instruct";
    req.gpu_id = gpu;
    req.tp = 2;
    req.max_model_len = 8192;
    req.suggest = false;
    return run::answer_budget(req, run::project_root());
  };
  const run::BudgetAnswer h100 = tp2("h100-sxm");
  const run::BudgetAnswer a100 = tp2("a100-sxm-80g");
  CHECK(h100.result.devices[0].non_torch ==
        h100.overheads.non_torch_base + memory::default_overheads(true).non_torch_comm);
  CHECK(a100.result.devices[0].non_torch ==
        a100.overheads.non_torch_base + memory::default_overheads(false).non_torch_comm);
}

TEST_CASE("vLLM 0.16 still samples with the sort-based path, 0.17 with the Triton kernel",
          "[run][budget][vllm_version]") {
  // llm-d-planner's version sweep (Qwen3-14B on one H100, the same settings on each release;
  // tests/validation/vllm_startup_logs.csv) logs the same 5.64 GiB activation peak on 0.15.0
  // and 0.16.0 and 2.23 GiB on 0.17.0 and 0.18.0.
  CHECK(llama_8b("0.16.0").engine.sampler == memory::SamplerKind::kSortTopKTopP);
  CHECK(llama_8b("0.17.0").engine.sampler == memory::SamplerKind::kTritonTopKTopP);
  CHECK(llama_8b("0.16.0").result.num_gpu_blocks == llama_8b("0.15.1").result.num_gpu_blocks);
  CHECK(llama_8b("0.17.0").result.devices[0].activation_peak ==
        llama_8b("0.19.0").result.devices[0].activation_peak);
  // 0.17.1 adds the start-up CUDA-graph profile's non-torch memory: the same blocks as 0.19.
  CHECK(llama_8b("0.17.1").result.num_gpu_blocks == llama_8b("0.19.0").result.num_gpu_blocks);
}

TEST_CASE("vLLM 0.21 subtracts the CUDA-graph estimate from the KV cache by default",
          "[run][budget][vllm_version]") {
  const run::BudgetAnswer v21 = llama_8b("0.21.0");
  const run::BudgetAnswer v19 = llama_8b("0.19.0");
  CHECK(v21.engine.subtract_cuda_graph);
  CHECK(v21.engine.sampler == memory::SamplerKind::kTritonTopKTopP);
  REQUIRE(v21.result.devices.size() == 1);
  REQUIRE(v19.result.devices.size() == 1);
  CHECK(v21.result.devices[0].cuda_graph > Bytes(0));
  CHECK(v21.result.devices[0].kv_available ==
        v19.result.devices[0].kv_available - v19.result.devices[0].cuda_graph);
  CHECK(v21.result.num_gpu_blocks < v19.result.num_gpu_blocks);
  CHECK(has_note(v21, "CUDA-graph estimate is subtracted"));

  // 0.19 with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 (--subtract-cuda-graph) agrees.
  run::BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  req.gpu_id = "h100-sxm";
  req.max_model_len = 8192;
  req.subtract_cuda_graph = true;
  req.suggest = false;
  CHECK(run::answer_budget(req, run::project_root()).result.num_gpu_blocks ==
        v21.result.num_gpu_blocks);

  // A release after the newest modelled one is answered with its rules, and says so.
  const run::BudgetAnswer v23 = llama_8b("0.23.0");
  CHECK(v23.result.num_gpu_blocks == v21.result.num_gpu_blocks);
  CHECK(has_note(v23, "answered with the rules of 0.21.0"));
}

TEST_CASE("an unmodelled or malformed vLLM version is refused on engine.vllm_version",
          "[run][budget][vllm_version]") {
  CHECK(version_error("0.8.5").find("not modelled") != std::string::npos);
  CHECK(version_error("0.8.5").find("0.9.0") != std::string::npos);
  CHECK(version_error("latest").find("expected a vLLM release") != std::string::npos);
  CHECK(version_error("0.19.0").empty());
}

TEST_CASE("the serving schema's engine.vllm_version reaches the budget and serve",
          "[run][budget][vllm_version]") {
  const run::ServeOptions o = run::resolve_serve_options(run::load_serve_scenario_text(
      "[model]\nid = \"meta-llama/Llama-3.1-8B-Instruct\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "[engine]\nmax_model_len = 8192\nvllm_version = \"0.15.1\"\n",
      "s.toml"));
  CHECK(run::budget_request(o).vllm_version == "0.15.1");
  const run::ServeAnswer a = run::prepare_serve(o);
  CHECK(a.budget.engine.sampler == memory::SamplerKind::kSortTopKTopP);
  CHECK(a.budget.result.num_gpu_blocks == llama_8b("0.15.1").result.num_gpu_blocks);
}
