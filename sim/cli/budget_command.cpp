// `vramsim budget [SCENARIO]`: vLLM's start-up memory accounting per device, explained.
// Flags override the scenario file; what neither sets takes vLLM's default.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <memory>

#include "sim/cli/budget_report.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/io/scenario_loader.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"

namespace vramsim::cli {

namespace {

struct BudgetFlags {
  std::string scenario;
  std::string model, gpu, dtype = "auto", kv_cache_dtype = "auto", quantization = "none";
  std::int64_t tp = 1, pp = 1, max_model_len = 0, max_num_seqs = 0, max_num_batched_tokens = 0;
  std::int64_t block_size = 16, num_gpu_blocks = 0, seed = 0;
  double gpu_memory_utilization = 0.9;
  bool enforce_eager = false;
  bool subtract_cuda_graph = false;
  bool no_suggestions = false;
  std::string out;
  OutputFormat format = OutputFormat::kTable;
  std::map<std::string, CLI::Option*> options;  // by long flag name, to know what was given

  bool given(const std::string& flag) const {
    auto it = options.find(flag);
    return it != options.end() && it->second->count() > 0;
  }
};

// Where each resolved value came from, so validation problems point at the user's text.
struct Origins {
  std::map<std::string, std::pair<std::string, SourceLocation>> by_flag;  // "--tp" -> field, where
  void from_scenario(const std::string& flag, const std::string& field, SourceLocation where) {
    by_flag[flag] = {field, std::move(where)};
  }
  void relocate(ValidationReport& report) const {
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
};

template <class T>
T pick(const BudgetFlags& f, const std::string& flag, const T& flag_value,
       const std::optional<io::Located<T>>& from_file, const T& fallback, Origins& origins) {
  if (f.given(flag)) return flag_value;
  if (from_file) {
    origins.from_scenario(flag, from_file->field, from_file->where);
    return from_file->value;
  }
  return fallback;
}

int run_budget(BudgetFlags& f) {
  io::ServingScenario sc;
  if (!f.scenario.empty()) sc = io::load_serving_scenario(f.scenario);
  Origins origins;
  ValidationReport report;

  BudgetRequest req;
  req.model_id = pick<std::string>(f, "--model", f.model, sc.model, "", origins);
  req.gpu_id = pick<std::string>(f, "--gpu", f.gpu, sc.gpu, "", origins);
  if (req.model_id.empty()) report.error("--model", "required: a zoo id or a config.json path "
                                                    "(or model.id in the scenario)");
  if (req.gpu_id.empty()) report.error("--gpu", "required: a device id, see `vramsim list gpus` "
                                                "(or hardware.gpu in the scenario)");
  throw_if_errors(report);

  req.tp = pick(f, "--tp", f.tp, sc.tp, std::int64_t{1}, origins);
  req.pp = pick(f, "--pp", f.pp, sc.pp, std::int64_t{1}, origins);
  req.dtype = pick<std::string>(f, "--dtype", f.dtype, sc.dtype, "auto", origins);
  req.kv_cache_dtype =
      pick<std::string>(f, "--kv-cache-dtype", f.kv_cache_dtype, sc.kv_cache_dtype, "auto", origins);
  req.quantization =
      pick<std::string>(f, "--quantization", f.quantization, sc.quantization, "none", origins);
  req.max_model_len =
      pick(f, "--max-model-len", f.max_model_len, sc.max_model_len, std::int64_t{0}, origins);
  req.max_num_seqs =
      pick(f, "--max-num-seqs", f.max_num_seqs, sc.max_num_seqs, std::int64_t{0}, origins);
  req.max_num_batched_tokens = pick(f, "--max-num-batched-tokens", f.max_num_batched_tokens,
                                    sc.max_num_batched_tokens, std::int64_t{0}, origins);
  req.gpu_memory_utilization = pick(f, "--gpu-memory-utilization", f.gpu_memory_utilization,
                                    sc.gpu_memory_utilization, 0.9, origins);
  req.block_size = pick(f, "--block-size", f.block_size, sc.block_size, std::int64_t{16}, origins);
  req.num_gpu_blocks =
      pick(f, "--num-gpu-blocks", f.num_gpu_blocks, sc.num_gpu_blocks, std::int64_t{0}, origins);
  req.enforce_eager = pick(f, "--enforce-eager", f.enforce_eager, sc.enforce_eager, false, origins);
  req.seed = pick(f, "--seed", f.seed, sc.seed, std::int64_t{0}, origins);
  req.subtract_cuda_graph = f.subtract_cuda_graph;
  req.suggest = !f.no_suggestions;

  const std::filesystem::path root = project_root();
  const BudgetAnswer answer = [&] {
    try {
      return answer_budget(req, root);
    } catch (ConfigError& e) {
      ValidationReport r = e.report();
      origins.relocate(r);
      throw ConfigError(r);
    }
  }();

  if (!f.out.empty()) {
    write_budget_results(answer, f.out, command_line(), sc.text);
  }
  if (f.format == OutputFormat::kJson) {
    std::puts(budget_json(answer).dump(2).c_str());
  } else {
    std::fputs(budget_table(answer).c_str(), stdout);
    if (!f.out.empty()) fmt::print("results written to {}\n", f.out);
  }
  return kExitOk;
}

}  // namespace

RunFn register_budget(CLI::App& app) {
  auto f = std::make_shared<BudgetFlags>();
  CLI::App* cmd = app.add_subcommand(
      "budget", "Where each device's memory goes; KV blocks, tokens and max concurrency "
                "(vLLM's start-up accounting)");
  auto add = [&](const std::string& name, auto& target, const std::string& help) {
    CLI::Option* o = cmd->add_option(name, target, help);
    f->options[name] = o;
    return o;
  };
  cmd->add_option("scenario", f->scenario, "Scenario file (TOML); flags override it")
      ->check(CLI::ExistingFile);
  add("--model", f->model, "Zoo model id (Hugging Face, case-insensitive) or config.json path");
  add("--gpu", f->gpu, "Device id from topologies/devices (see `vramsim list gpus`)");
  add("--tp,--tensor-parallel-size", f->tp, "Tensor-parallel degree");
  f->options["--tp"] = f->options["--tp,--tensor-parallel-size"];
  add("--pp,--pipeline-parallel-size", f->pp, "Pipeline-parallel degree");
  f->options["--pp"] = f->options["--pp,--pipeline-parallel-size"];
  add("--dtype", f->dtype, "Weights/activations: auto, bf16, fp16, fp32");
  add("--kv-cache-dtype", f->kv_cache_dtype, "KV cache: auto (= dtype), bf16, fp16, fp8");
  add("--quantization", f->quantization, "Weight quantization: none, fp8, int8, awq, gptq, mxfp4");
  add("--max-model-len", f->max_model_len, "Tokens per request (default: the model's limit)");
  add("--max-num-seqs", f->max_num_seqs, "Requests per step (default: vLLM's for the GPU)");
  add("--max-num-batched-tokens", f->max_num_batched_tokens,
      "Tokens per step (default: vLLM's for the GPU)");
  add("--gpu-memory-utilization", f->gpu_memory_utilization, "Fraction of memory vLLM may use");
  add("--block-size", f->block_size, "Tokens per KV block");
  add("--num-gpu-blocks", f->num_gpu_blocks, "Override the computed number of KV blocks");
  add("--seed", f->seed, "Seed recorded in the results file");
  f->options["--enforce-eager"] =
      cmd->add_flag("--enforce-eager", f->enforce_eager, "No CUDA graphs (as vLLM's flag)");
  cmd->add_flag("--subtract-cuda-graph", f->subtract_cuda_graph,
                "Subtract the CUDA-graph estimate from the KV cache, as vLLM >= 0.21 does");
  cmd->add_flag("--no-suggestions", f->no_suggestions,
                "When it does not fit, skip searching other TP degrees and GPUs");
  cmd->add_option("--out", f->out, "Write an HDF5 results file (see analysis/SCHEMA.md)");
  add_format_option(*cmd, f->format);
  return [cmd, f]() {
    if (!cmd->parsed()) return -1;
    return run_budget(*f);
  };
}

}  // namespace vramsim::cli
