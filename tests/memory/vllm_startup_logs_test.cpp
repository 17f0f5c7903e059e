// vLLM's start-up KV-cache accounting against every logged run in
// tests/validation/vllm_startup_logs.csv (sources and columns: tests/validation/README.md).
// Each row goes through run::answer_budget, the function `vramsim budget` answers with, and the
// modelled KV-cache tokens are compared with the "GPU KV cache size: N tokens" vLLM logged.
// Constants were fitted only to the rows marked used_for_fitting = yes; the error bounds hold
// on the other rows: the band `budget` quotes on the vLLM 0.19 / H100 rows it is quoted for, the
// bounds reached at this commit on the rows of other releases and GPUs.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/cost/validated_bands.hpp"
#include "sim/run/budget_run.hpp"
#include "tests/catch.hpp"
#include "tests/validation/validation_table.hpp"

using namespace vramsim;

namespace {

const std::vector<std::string> kColumns = {
    "run_id", "model", "zoo_model", "gpu", "vllm_version", "tp", "pp", "max_model_len",
    "max_num_seqs", "max_num_batched_tokens", "gpu_memory_utilization", "block_size", "dtype",
    "kv_cache_dtype", "quantization", "flashinfer_installed", "gpu_p2p", "logged_weights_gib",
    "logged_activation_gib", "logged_non_torch_gib", "logged_kv_cache_gib", "logged_kv_tokens",
    "used_for_fitting", "source"};

using LoggedRun = vramsim::testing::ValidationRow;

std::vector<LoggedRun> load_runs() {
  return vramsim::testing::read_validation_table("vllm_startup_logs.csv", kColumns);
}

run::BudgetRequest request_for(const LoggedRun& r) {
  run::BudgetRequest q;
  // A zoo id, or a config.json under tests/validation/models/ for a model the zoo lacks.
  const std::string& model = r.field.at("zoo_model");
  q.model_id = model.ends_with(".json")
                   ? (std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "tests/validation/models" / model)
                         .string()
                   : model;
  q.gpu_id = r.field.at("gpu");
  q.tp = r.integer("tp");
  q.pp = r.integer("pp");
  q.max_model_len = r.integer("max_model_len");
  q.max_num_seqs = r.integer("max_num_seqs");
  q.max_num_batched_tokens = r.integer("max_num_batched_tokens");
  q.gpu_memory_utilization = r.number("gpu_memory_utilization");
  q.block_size = r.integer("block_size");
  q.dtype = r.field.at("dtype");
  q.kv_cache_dtype = r.field.at("kv_cache_dtype");
  q.quantization = r.field.at("quantization");
  q.vllm_version = r.field.at("vllm_version");
  // "no" where the log says FlashInfer is not available; "-" where the release ignores it.
  q.flashinfer_installed = r.field.at("flashinfer_installed") != "no";
  // "no" where the log says vLLM's custom all-reduce is off for want of GPU peer access or
  // because the group spans nodes; "-" at TP 1.
  q.gpu_p2p = r.field.at("gpu_p2p") != "no";
  q.suggest = false;
  return q;
}

struct ErrorSummary {
  int count = 0;
  double sum_abs_percent = 0.0;
  double max_abs_percent = 0.0;
  double mean() const { return count > 0 ? sum_abs_percent / count : 0.0; }
};

// The mean and worst absolute error (%) the held-out rows of other releases and GPUs reach at
// this commit (see the NOTE at the checks).
constexpr double kOtherMeanBoundPercent = 0.6;  // reached: 0.51%
constexpr double kOtherMaxBoundPercent = 3.0;   // reached: 2.90% (0.10.1.1, A100 80GB, TP 1, 0.25)
// The worst error the held-out 0.19 / H100 rows reach at this commit, inside the band `budget`
// quotes (5%): a record that fails if it grows.
constexpr double kBandMaxReachedPercent = 2.5;  // reached: 2.41% (Qwen2.5-72B-Instruct TP 2)
constexpr double kBandMeanReachedPercent = 0.2;  // reached: 0.16%
// Every held-out row together (issue 12's target: 1% mean): the mean reached at this commit.
constexpr double kEveryRunMeanPercent = 0.3;  // reached: 0.23%
// Issue 12's target: no held-out run worse than 3%.
constexpr double kEveryRunMaxPercent = 3.0;

// The scope of the band `budget` quotes (cost::kStartupKvBand): vLLM 0.19 on H100.
bool in_band_scope(const LoggedRun& r) {
  const std::string& v = r.field.at("vllm_version");
  return r.field.at("gpu") == "h100-sxm" && v.rfind("0.19.", 0) == 0;
}

}  // namespace

TEST_CASE("vLLM start-up logs: KV-cache tokens of the held-out runs within the quoted band on "
          "0.19/H100, and within the reached bound on other releases and GPUs",
          "[memory][budget][validation]") {
  const std::vector<LoggedRun> runs = load_runs();
  REQUIRE(runs.size() >= 30);
  // Keys: "yes" (fitting rows), "band" (held-out 0.19/H100 rows), "other" (held-out rows of other
  // releases or GPUs), "all" (every held-out row).
  std::map<std::string, ErrorSummary> by_split;
  std::string table;
  for (const LoggedRun& r : runs) {
    const run::BudgetAnswer a = run::answer_budget(request_for(r), VRAMSIM_SOURCE_ROOT);
    const double logged = static_cast<double>(r.integer("logged_kv_tokens"));
    const double modelled = static_cast<double>(a.result.kv_cache_tokens);
    const double percent = (modelled - logged) / logged * 100.0;
    const bool fitting = r.field.at("used_for_fitting") == "yes";
    std::vector<std::string> keys;
    if (fitting) {
      keys = {"yes"};
    } else {
      keys = {in_band_scope(r) ? "band" : "other", "all"};
    }
    for (const std::string& k : keys) {
      ErrorSummary& s = by_split[k];
      ++s.count;
      s.sum_abs_percent += std::abs(percent);
      s.max_abs_percent = std::max(s.max_abs_percent, std::abs(percent));
    }
    // The profile's terms of rank 0, modelled vs logged (GiB), to show where a gap comes from
    // (an empty logged figure: the log does not print it at INFO level).
    const memory::DeviceBudget& d = a.result.devices.front();
    const auto gib = [](Bytes b) { return static_cast<double>(b.count()) / (1 << 30); };
    table += fmt::format(
        "  {:<60} v{:<8} {:<12} fit={:<3} logged {:>8} modelled {:>8} {:+6.2f}% | weights "
        "{:.2f}/{} activation {:.2f}/{} non-torch {:.2f}/{} kv {:.2f}/{} GiB\n",
        r.field.at("run_id"), r.field.at("vllm_version"), r.field.at("gpu"),
        r.field.at("used_for_fitting"), logged, modelled, percent, gib(d.weights),
        r.field.at("logged_weights_gib"), gib(d.activation_peak),
        r.field.at("logged_activation_gib"), gib(d.non_torch), r.field.at("logged_non_torch_gib"),
        gib(d.kv_cache), r.field.at("logged_kv_cache_gib"));
  }
  const auto line = [&](const char* name, const std::string& key) {
    const ErrorSummary& s = by_split[key];
    return fmt::format("{}: {} runs, mean abs {:.2f}% max {:.2f}%\n", name, s.count, s.mean(),
                       s.max_abs_percent);
  };
  const std::string summary =
      table + line("fitting runs", "yes") + line("held-out, vLLM 0.19 on H100", "band") +
      line("held-out, other releases and GPUs", "other") + line("held-out, all", "all");
  INFO(summary);
  WARN(summary);
  const ErrorSummary& band = by_split["band"];
  const ErrorSummary& other = by_split["other"];
  REQUIRE(band.count >= 25);
  REQUIRE(other.count >= 8);
  // The band `budget` quotes (sim/cost/validated_bands.hpp), over the runs it is quoted for.
  CHECK(band.mean() <= 100.0 * cost::kStartupKvBand.mean_abs);
  CHECK(band.mean() <= kBandMeanReachedPercent);
  CHECK(by_split["all"].mean() <= kEveryRunMeanPercent);
  // NOTE: the worst row, Qwen2.5-72B-Instruct TP2, keeps only 3.04 GiB for its KV cache; its
  // weights now match the log (67.80 GiB: the allocator's blocks, budget.cpp
  // allocated_weight_bytes), and the non-torch memory (2.04 modelled vs 2.09 GiB logged)
  // leaves it 0.07 GiB (+2.4%) more.
  CHECK(band.max_abs_percent <= 100.0 * cost::kStartupKvBand.max_abs);
  CHECK(band.max_abs_percent <= kBandMaxReachedPercent);
  CHECK(by_split["all"].max_abs_percent <= kEveryRunMaxPercent);
  // Other releases and GPUs (vLLM 0.10.1.1 on A100, 0.15, 0.16 and 0.18 on H100; held out, no
  // constant fitted to them; 0.17.0 is a fitting run since non_torch_graph_profiling was fitted
  // to it). NOTE: these bounds are what the model reaches at this commit, not a target and not
  // a band `budget` quotes (it says such settings lie outside its band). The worst row is the
  // A100 TP 1 run at utilization 0.25 (-2.9%): its log leaves 0.55 GiB for activation and
  // non-torch memory together where 0.57 + 0.13 GiB are modelled; vLLM 0.10's non-torch memory
  // is printed by none of these INFO logs (tests/validation/README.md).
  CHECK(other.mean() <= kOtherMeanBoundPercent);
  CHECK(other.max_abs_percent <= kOtherMaxBoundPercent);
}
