// The model, GPU and vLLM engine flags that `budget`, `serve` (and later `compare`,
// `capacity`) share, how they merge with a scenario file, and where each value came from so
// that a validation problem points at the flag or at the scenario's file:line.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "sim/cli/budget_report.hpp"
#include "sim/core/error.hpp"
#include "sim/io/scenario_loader.hpp"

namespace vramsim::cli {

/// Registered options by long flag name, to tell what the user typed from defaults.
struct GivenFlags {
  std::map<std::string, CLI::Option*> options;
  bool given(const std::string& flag) const {
    auto it = options.find(flag);
    return it != options.end() && it->second->count() > 0;
  }
};

/// Where each resolved value came from: a flag keeps its name, a scenario value its
/// field and file:line.
struct Origins {
  std::map<std::string, std::pair<std::string, SourceLocation>> by_flag;
  void from_scenario(const std::string& flag, const std::string& field, SourceLocation where) {
    by_flag[flag] = {field, std::move(where)};
  }
  /// Rewrites problems filed under a flag name to the scenario field the value came from.
  void relocate(ValidationReport& report) const;
};

/// The flag's value if given, else the scenario's (recording its origin), else `fallback`.
template <class T>
T pick(const GivenFlags& g, const std::string& flag, const T& flag_value,
       const std::optional<io::Located<T>>& from_file, const T& fallback, Origins& origins) {
  if (g.given(flag)) return flag_value;
  if (from_file) {
    origins.from_scenario(flag, from_file->field, from_file->where);
    return from_file->value;
  }
  return fallback;
}

struct EngineFlags {
  std::string model, gpu, dtype = "auto", kv_cache_dtype = "auto", quantization = "none";
  std::int64_t tp = 1, pp = 1, max_model_len = 0, max_num_seqs = 0, max_num_batched_tokens = 0;
  std::int64_t block_size = 16, num_gpu_blocks = 0, seed = 0;
  double gpu_memory_utilization = 0.9;
  bool enforce_eager = false;
  std::string calibration;
};

/// Adds --model --gpu --tp --pp --dtype --kv-cache-dtype --quantization --max-model-len
/// --max-num-seqs --max-num-batched-tokens --gpu-memory-utilization --block-size
/// --num-gpu-blocks --seed --enforce-eager to `cmd`, recording them in `given`.
void add_engine_flags(CLI::App& cmd, EngineFlags& f, GivenFlags& given);

/// Merges flags over the scenario into a budget request. Throws ConfigError when the model or
/// the GPU is missing from both.
BudgetRequest resolve_engine(const EngineFlags& f, const GivenFlags& given,
                             const io::ServingScenario& sc, Origins& origins);

/// answer_budget() with problems moved to where the user wrote the value.
BudgetAnswer answer_budget_located(const BudgetRequest& req, const Origins& origins);

}  // namespace vramsim::cli
