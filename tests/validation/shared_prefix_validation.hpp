// llm-d's tiered-prefix-cache benchmark (guides/tiered-prefix-cache/cpu/README.md, "Appendix:
// Benchmark") replayed as it ran, for the rows of llmd_cpu_offload_qwen3_32b.csv (vLLM's
// native OffloadingConnector) and llmd_lmcache_cpu_offload_qwen3_32b.csv (LMCacheConnectorV1):
// the row's engines (TP, gpu_memory_utilization, max_num_seqs) behind vramsim's prefix-aware
// router (llm-d's scorers send a request where its prefix is cached, within a load bound), and
// inference-perf's shared-prefix workload at the row's constant concurrency, each prompt a
// group's system prompt and a question, groups drawn uniformly per request (inference-perf
// shuffles its prompts), one pass over the prompts (the source does not state the run's length).
// The two tests differ only in the [engine] lines of the tier.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "tests/validation/serve_validation.hpp"

namespace vramsim::testing {

/// What the rows compare, for one simulated run.
struct SharedPrefixRun {
  std::int64_t num_gpu_blocks = 0;  // one engine's, as vLLM logs them (not the replicas' sum)
  std::int64_t num_offload_blocks = 0;  // the host tier's blocks per engine
  double throughput_total_tokens_per_s = 0.0;
  double ttft_mean_s = 0.0;
  double ttft_p90_s = 0.0;
  double e2e_mean_s = 0.0;
  double e2e_p90_s = 0.0;
  double cpu_hit_share = 0.0;  // of the prompt tokens, found in the host tier
  double gpu_hit_share = 0.0;  // of the prompt tokens, found in the GPU cache

  /// The figure the row's `metric` names; fails the test, naming the row, for another.
  double metric(const ValidationRow& row) const {
    const std::string& m = row.at("metric");
    if (m == "num_gpu_blocks") return static_cast<double>(num_gpu_blocks);
    if (m == "throughput_total_tokens_per_s") return throughput_total_tokens_per_s;
    if (m == "ttft_mean_s") return ttft_mean_s;
    if (m == "ttft_p90_s") return ttft_p90_s;
    if (m == "e2e_mean_s") return e2e_mean_s;
    if (m == "e2e_p90_s") return e2e_p90_s;
    FAIL(fmt::format("{}:{}: unknown metric '{}'", row.file, row.line, m));
    return 0.0;
  }
};

/// `row`'s engines and workload, with `tier_engine` (the [engine] lines of the KV tier, "" for
/// none) added to the engine table.
inline SharedPrefixRun simulated_shared_prefix_run(const ValidationRow& row,
                                                   const std::string& tier_engine) {
  const std::int64_t prompt =
      row.integer("system_prompt_tokens") + row.integer("question_tokens");
  const std::string engine =
      fmt::format("tp = {}\ngpu_memory_utilization = {}\nmax_num_seqs = {}\n{}",
                  row.integer("tp"), row.number("gpu_memory_utilization"),
                  row.integer("max_num_seqs"), tier_engine);
  const std::string text = fmt::format(
      "seed = 1\n[model]\nid = \"{}\"\n[hardware]\ngpu = \"{}\"\n[engine]\n{}[workload]\n"
      "max_concurrency = {}\nnum_requests = {}\nprompt_tokens = \"fixed:{}\"\n"
      "output_tokens = \"fixed:{}\"\nprefix_groups = {}\nprefix_tokens = {}\n[serving]\n"
      "replicas = {}\nrouter = \"prefix-aware\"\nenable_prefix_caching = true\n",
      row.at("zoo_model"), row.at("gpu"), engine, row.integer("max_concurrency"),
      row.integer("num_requests"), prompt, row.integer("output_tokens"),
      row.integer("num_groups"), row.integer("system_prompt_tokens"), row.integer("replicas"));
  const run::ServeAnswer a = simulated_serve_of_row(row, text, row.integer("num_requests"));
  const serving::ServingMetrics& m = a.result.metrics;
  SharedPrefixRun s;
  s.num_gpu_blocks = a.budget.result.num_gpu_blocks;
  s.num_offload_blocks = a.config.setup.replica.kv.num_offload_blocks;
  s.throughput_total_tokens_per_s = total_tokens_per_s(a.result);
  s.ttft_mean_s = m.ttft.mean_seconds();
  s.ttft_p90_s = m.ttft.quantile(0.90).seconds();
  s.e2e_mean_s = m.e2e.mean_seconds();
  s.e2e_p90_s = m.e2e.quantile(0.90).seconds();
  const double queried = static_cast<double>(a.result.prefix_query_tokens);
  if (queried > 0) {
    s.cpu_hit_share = static_cast<double>(a.result.offload_hit_tokens) / queried;
    s.gpu_hit_share =
        static_cast<double>(a.result.prefix_hit_tokens - a.result.offload_hit_tokens) / queried;
  }
  return s;
}

}  // namespace vramsim::testing
