// A quantization method the GPU cannot run is refused as vLLM refuses it at start-up: each
// method's get_min_capability (vllm/model_executor/layers/quantization/<method>.py) against the
// device sheet's compute capability (topologies/devices, compute.compute_capability). The error
// names the flag when the user asked for the method, and the checkpoint's
// quantization_config.quant_method (with its file) when the checkpoint is stored that way.
#include <filesystem>
#include <string>

#include "sim/core/error.hpp"
#include "sim/run/budget_run.hpp"
#include "sim/run/data_root.hpp"
#include "tests/catch.hpp"

namespace {

using namespace vramsim;

run::BudgetRequest request(const std::string& model, const std::string& gpu,
                           const std::string& quantization) {
  run::BudgetRequest req;
  req.model_id = model;
  req.gpu_id = gpu;
  req.dtype = "fp16";
  req.quantization = quantization;
  req.max_model_len = 4096;
  req.suggest = false;
  return req;
}

// "field: message" of every problem of the budget's ConfigError; "" when it answers.
std::string problems(const run::BudgetRequest& req) {
  try {
    run::answer_budget(req, run::project_root());
  } catch (const ConfigError& e) {
    std::string out;
    for (const Problem& p : e.report().problems()) out += p.field + ": " + p.message + "\n";
    return out;
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string kLlama = "meta-llama/Llama-3.1-8B";

}  // namespace

TEST_CASE("a method below the GPU's compute capability is refused naming both",
          "[run][budget][quantization]") {
  // T4 is compute capability 7.5: fp8 (8.0), MXFP4 (8.0) and the Marlin kernels (8.0) are out,
  // AWQ (7.5) and GPTQ (6.0) run.
  std::string p = problems(request(kLlama, "t4", "fp8"));
  CHECK(has(p, "engine.quantization: fp8 needs compute capability 8.0 or newer in vLLM; t4 "
               "(hardware.gpu) has 7.5"));
  CHECK(has(problems(request(kLlama, "t4", "gptq_marlin")), "gptq_marlin needs compute "
                                                            "capability 8.0"));
  CHECK(has(problems(request(kLlama, "t4", "awq_marlin")), "awq_marlin needs compute capability "
                                                           "8.0"));
  // The same methods run where the capability suffices (A10G: 8.6; A100: 8.0).
  CHECK(problems(request(kLlama, "a10g", "fp8")).find("compute capability") == std::string::npos);
  CHECK(problems(request(kLlama, "a100-sxm-80g", "gptq_marlin")).find("compute capability") ==
        std::string::npos);
  CHECK(problems(request(kLlama, "t4", "gptq")).find("compute capability") == std::string::npos);
  // ModelOpt FP8 needs Ada (8.9): an A100 (8.0) is refused, an L40S (8.9) runs it.
  CHECK(has(problems(request(kLlama, "a100-sxm-80g", "modelopt")),
            "modelopt needs compute capability 8.9 or newer in vLLM; a100-sxm-80g (hardware.gpu) "
            "has 8.0"));
  CHECK(problems(request(kLlama, "l40s", "modelopt")).find("compute capability") ==
        std::string::npos);
}

TEST_CASE("a checkpoint stored in a method the GPU cannot run names its quantization_config",
          "[run][budget][quantization]") {
  const std::string config = (std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "tests" / "model" /
                              "data" / "quant_fp8_per_tensor.json")
                                 .string();
  const std::string p = problems(request(config, "t4", "none"));
  CHECK(has(p, "quantization_config.quant_method: the checkpoint's quantization fp8 needs "
               "compute capability 8.0 or newer in vLLM; t4 (hardware.gpu) has 7.5"));
}

TEST_CASE("Gemma 2 and 3 never run in fp16: auto picks bf16, or fp32 on a GPU without bf16, and "
          "an explicit fp16 is refused",
          "[run][budget][dtype]") {
  // vllm/config/model.py: _FLOAT16_NOT_SUPPORTED_MODELS (gemma2, gemma3, gemma3_text: "Numerical
  // instability. Please use bfloat16 or float32 instead."); _resolve_auto_dtype takes the first
  // of the platform's dtypes the model type allows: fp16, fp32 below compute capability 8.0.
  run::BudgetRequest req = request("google/gemma-2-2b-it", "t4", "none");
  req.dtype = "auto";
  const run::BudgetAnswer t4 = run::answer_budget(req, run::project_root());
  CHECK(t4.engine.dtype == DType::kFp32);
  req.gpu_id = "h100-sxm";
  CHECK(run::answer_budget(req, run::project_root()).engine.dtype == DType::kBf16);
  req.dtype = "fp16";
  CHECK(problems(req).find("engine.dtype: the model type 'gemma2' does not support float16") !=
        std::string::npos);
  req.model_id = "google/gemma-3-4b-it";
  CHECK(problems(req).find("'gemma3' does not support float16") != std::string::npos);
  // Other models keep fp16 on a T4.
  run::BudgetRequest llama = request("meta-llama/Llama-3.2-1B", "t4", "none");
  llama.dtype = "auto";
  CHECK(run::answer_budget(llama, run::project_root()).engine.dtype == DType::kFp16);
}
