#include "sim/cli/engine_flags.hpp"

#include "sim/cli/commands.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "sim/model/weight_format.hpp"

namespace vramsim::cli {

void Origins::relocate(ValidationReport& report) const {
  ValidationReport moved;
  for (Problem p : report.problems()) {
    if (auto it = by_flag.find(p.field); it != by_flag.end()) {
      p.field = it->second.first;
      p.where = it->second.second;
    }
    moved.error(p.field, p.message, p.where);
  }
  report = moved;
}

void add_engine_flags(CLI::App& cmd, EngineFlags& f, GivenFlags& given) {
  auto add = [&](const std::string& name, auto& target, const std::string& help) {
    CLI::Option* o = cmd.add_option(name, target, help);
    given.options[name.substr(0, name.find(','))] = o;
    return o;
  };
  add("--model", f.model, "Zoo model id (Hugging Face, case-insensitive) or config.json path");
  add("--gpu", f.gpu, "Device id from topologies/devices (see `vramsim list gpus`)");
  add("--tp,--tensor-parallel-size", f.tp, "Tensor-parallel degree");
  add("--pp,--pipeline-parallel-size", f.pp, "Pipeline-parallel degree");
  add("--dtype", f.dtype, "Weights/activations: auto, bf16, fp16, fp32");
  add("--kv-cache-dtype", f.kv_cache_dtype, "KV cache: auto (= dtype), bf16, fp16, fp8");
  add("--quantization", f.quantization,
      fmt::format("Weight quantization: {}", join_names(model::kQuantMethods)));
  add("--max-model-len", f.max_model_len, "Tokens per request (default: the model's limit)");
  add("--max-num-seqs", f.max_num_seqs, "Requests per step (default: vLLM's for the GPU)");
  add("--max-num-batched-tokens", f.max_num_batched_tokens,
      "Tokens per step (default: vLLM's for the GPU)");
  add("--gpu-memory-utilization", f.gpu_memory_utilization, "Fraction of memory vLLM may use");
  add("--block-size", f.block_size, "Tokens per KV block");
  add("--num-gpu-blocks", f.num_gpu_blocks, "Override the computed number of KV blocks");
  add("--seed", f.seed, "Seed (recorded in the results file)");
  add("--calibration", f.calibration,
      "Calibration profile (JSON from vramsim-calibrate) for this GPU: measured overheads and "
      "step times replace the datasheet defaults");
  given.options["--enforce-eager"] =
      cmd.add_flag("--enforce-eager", f.enforce_eager, "No CUDA graphs (as vLLM's flag)");
}

BudgetRequest resolve_engine(const EngineFlags& f, const GivenFlags& g,
                             const io::ServingScenario& sc, Origins& origins) {
  ValidationReport report;
  BudgetRequest req;
  req.model_id = pick<std::string>(g, "--model", f.model, sc.model, "", origins);
  req.gpu_id = pick<std::string>(g, "--gpu", f.gpu, sc.gpu, "", origins);
  if (req.model_id.empty()) {
    report.error("--model", "required: a zoo id or a config.json path (or model.id in the "
                            "scenario)");
  }
  if (req.gpu_id.empty()) {
    report.error("--gpu", "required: a device id, see `vramsim list gpus` (or hardware.gpu in "
                          "the scenario)");
  }
  throw_if_errors(report);
  req.tp = pick(g, "--tp", f.tp, sc.tp, std::int64_t{1}, origins);
  req.pp = pick(g, "--pp", f.pp, sc.pp, std::int64_t{1}, origins);
  req.dtype = pick<std::string>(g, "--dtype", f.dtype, sc.dtype, "auto", origins);
  req.kv_cache_dtype =
      pick<std::string>(g, "--kv-cache-dtype", f.kv_cache_dtype, sc.kv_cache_dtype, "auto", origins);
  req.quantization =
      pick<std::string>(g, "--quantization", f.quantization, sc.quantization, "none", origins);
  req.max_model_len =
      pick(g, "--max-model-len", f.max_model_len, sc.max_model_len, std::int64_t{0}, origins);
  req.max_num_seqs =
      pick(g, "--max-num-seqs", f.max_num_seqs, sc.max_num_seqs, std::int64_t{0}, origins);
  req.max_num_batched_tokens = pick(g, "--max-num-batched-tokens", f.max_num_batched_tokens,
                                    sc.max_num_batched_tokens, std::int64_t{0}, origins);
  req.gpu_memory_utilization = pick(g, "--gpu-memory-utilization", f.gpu_memory_utilization,
                                    sc.gpu_memory_utilization, 0.9, origins);
  req.block_size = pick(g, "--block-size", f.block_size, sc.block_size, std::int64_t{16}, origins);
  req.num_gpu_blocks =
      pick(g, "--num-gpu-blocks", f.num_gpu_blocks, sc.num_gpu_blocks, std::int64_t{0}, origins);
  req.enforce_eager = pick(g, "--enforce-eager", f.enforce_eager, sc.enforce_eager, false, origins);
  req.seed = pick(g, "--seed", f.seed, sc.seed, std::int64_t{0}, origins);
  req.calibration = pick<std::string>(g, "--calibration", f.calibration, sc.calibration, "", origins);
  // 0 stands for "not given" in these four; a 0 the user wrote must not silently become the
  // default.
  for (const auto& [flag, value] :
       {std::pair<const char*, std::int64_t>{"--max-model-len", req.max_model_len},
        {"--max-num-seqs", req.max_num_seqs},
        {"--max-num-batched-tokens", req.max_num_batched_tokens},
        {"--num-gpu-blocks", req.num_gpu_blocks}}) {
    if ((g.given(flag) || origins.by_flag.count(flag) > 0) && value <= 0) {
      report.error(flag, fmt::format("must be positive, got {}", value));
    }
  }
  origins.relocate(report);
  throw_if_errors(report);
  // A relative profile path in a scenario file is relative to the scenario's folder.
  if (!g.given("--calibration") && sc.calibration && !req.calibration.empty() &&
      std::filesystem::path(req.calibration).is_relative()) {
    req.calibration =
        (std::filesystem::path(sc.file).parent_path() / req.calibration).string();
  }
  return req;
}

BudgetAnswer answer_budget_located(const BudgetRequest& req, const Origins& origins) {
  try {
    return answer_budget(req, project_root());
  } catch (ConfigError& e) {
    ValidationReport r = e.report();
    origins.relocate(r);
    throw ConfigError(r);
  }
}

}  // namespace vramsim::cli
