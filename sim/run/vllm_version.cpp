#include "sim/run/vllm_version.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace vramsim::run {

namespace {

// Reads one decimal component at `pos`; advances past it.
std::optional<int> read_component(std::string_view text, std::size_t& pos) {
  int value = 0;
  const char* first = text.data() + pos;
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr == first || value < 0 || value > 9999) return std::nullopt;
  pos += static_cast<std::size_t>(ptr - first);
  return value;
}

}  // namespace

std::optional<VllmVersion> parse_vllm_version(std::string_view text) {
  if (!text.empty() && (text.front() == 'v' || text.front() == 'V')) text.remove_prefix(1);
  std::size_t pos = 0;
  VllmVersion v;
  const auto major = read_component(text, pos);
  if (!major || pos >= text.size() || text[pos] != '.') return std::nullopt;
  ++pos;
  const auto minor = read_component(text, pos);
  if (!minor) return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  if (pos < text.size() && text[pos] == '.' && pos + 1 < text.size() &&
      text[pos + 1] >= '0' && text[pos + 1] <= '9') {
    ++pos;
    const auto patch = read_component(text, pos);
    if (!patch) return std::nullopt;
    v.patch = *patch;
    // NOTE: a fourth number is a hot-fix release of that patch (vLLM 0.10.1.1, the version its
    // banner prints); it is modelled as the patch release, so it is read and dropped.
    if (pos < text.size() && text[pos] == '.' && pos + 1 < text.size() &&
        text[pos + 1] >= '0' && text[pos + 1] <= '9') {
      ++pos;
      if (!read_component(text, pos)) return std::nullopt;
    }
  }
  // PEP 440 suffixes of a release: rcN, aN, bN, .postN, .devN, +local.
  const std::string_view rest = text.substr(pos);
  if (rest.empty()) return v;
  for (std::string_view suffix : {"rc", "a", "b", ".post", ".dev", "+", "-"}) {
    if (rest.substr(0, suffix.size()) == suffix) return v;
  }
  return std::nullopt;
}

std::string to_string(const VllmVersion& v) {
  return fmt::format("{}.{}.{}", v.major, v.minor, v.patch);
}

VllmBehaviour vllm_behaviour(const VllmVersion& v) {
  VllmBehaviour b;
  // The Triton top-k/top-p kernel (vllm/v1/sample/ops/topk_topp_triton.py, vllm-project/vllm
  // PR #33538, opened 2026-02-02) replaced the sort-based path for batches of >= 8 rows in 0.17
  // (see memory/activation_profile.hpp). NOTE: 0.17, not 0.16: llm-d-planner's version sweep
  // (Qwen3-14B, one H100, same settings; tests/validation/vllm_startup_logs.csv) logs a
  // 5.64 GiB activation peak on 0.15.0 and on 0.16.0, and 2.23 GiB from 0.17.0 on.
  b.sampler = v >= VllmVersion{0, 17, 0} ? memory::SamplerKind::kTritonTopKTopP
                                         : memory::SamplerKind::kSortTopKTopP;
  // FlashInfer's top-k/top-p kernel: the V1 sampler's choice on CUDA where FlashInfer is
  // installed since vllm-project/vllm PR #11394 (December 2024, before the oldest modelled
  // release), turned off by default by PR #26859 (opened 2025-10-15, after the 0.11.0 release,
  // merged; taken here to ship in 0.11.1, the next release; from then
  // on vLLM logs "FlashInfer top-p/top-k sampling is available but disabled by default", as the
  // 0.19.0 logs of tests/validation/vllm_startup_logs.csv do). vLLM 0.10.1.1 logs "Using
  // FlashInfer for top-p & top-k sampling" (dennislee22/vLLM-benchmarking@b474d1e0).
  b.flashinfer_sampler = v < VllmVersion{0, 11, 1};
  // The start-up CUDA-graph memory profile (vllm-project/vllm PR #30515, "adding a dummy CUDA
  // graph capture with a small dummy KV cache during memory profiling"; its estimate is only
  // subtracted with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, but the capture runs either way,
  // PR #51590). It runs in 0.17.1rc (PR #36634's log: "Profiling CUDA graph memory") and in
  // 0.18.0 and 0.19.0 (their logs print "Estimated CUDA graph memory"), not in 0.15.0-0.17.0
  // (llm-d-planner's version-sweep records hold no such figure for them).
  b.profiles_cuda_graph_memory = v >= VllmVersion{0, 17, 1};
  // 0.21 profiles the CUDA graphs and subtracts them from the KV cache by default
  // (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS); 0.19 has it only behind that variable
  // (--subtract-cuda-graph).
  b.estimates_cuda_graphs = v >= VllmVersion{0, 21, 0};
  // scheduler_reserve_full_isl: added by vllm-project/vllm PR #37307 (March 2026); on in
  // 0.19.0's resolved SchedulerConfig (LLMServingSim's bench meta.json, see
  // analysis/validation/vllm_bench.md). Earlier releases are modelled without it.
  b.reserve_full_isl = v >= VllmVersion{0, 19, 0};
  // Async scheduling: an opt-in flag since vllm-project/vllm PR #19970 (June 2025), on by
  // default from 0.14.0 (PR #27614; the 0.14.0 release notes: "Async scheduling is now
  // enabled by default", except with pipeline parallelism, the CPU backend and speculative
  // decoding other than EAGLE/MTP). vllm/config/scheduler.py leaves async_scheduling None and
  // VllmConfig.__post_init__ (vllm/config/vllm.py) resolves it; run::serve_config applies the
  // exceptions vramsim models. LLMServingSim's vLLM 0.19.0 run records it on
  // (bench/examples/RTX4090/Llama-3.1-8B/vllm/meta.json, casys-kaist/LLMServingSim 5daddb2).
  b.async_scheduling = v >= VllmVersion{0, 14, 0};
  // With pipeline parallelism: vllm-project/vllm PR #32359 (merged 2026-01-14, a request not
  // scheduled again while its last token is in flight) and PR #32618 (the last stage
  // broadcasts the sampled tokens to the first, so the scheduler runs ahead of the outputs;
  // its measurement: Qwen3-30B-A3B FP8 at PP 4, TPOT -31.8 %), released in 0.16.0 ("async
  // scheduling + pipeline parallelism fully supported", the 0.16.0 release notes). From then
  // on the PP exception of 0.14 is gone, so it is on by default with PP too.
  b.async_scheduling_with_pp = v >= VllmVersion{0, 16, 0};
  // MXFP4 MoE on Hopper: get_mxfp4_backend takes triton_kernels' matmul_ogs when the package
  // imports, else Marlin; triton_kernels became a vLLM dependency with vllm-project/vllm PR
  // #27370 (merged 2025-10-22: "At the moment, users have to install triton_kernels manually"),
  // first released in 0.11.1, after which "SM90 [defaults] to Triton instead of Marlin" (PR
  // #27523, closed unmerged). Before it, the vLLM recipe for 0.10.1-0.11.0 says Hopper runs
  // gpt-oss "by default, using the FlashAttention3 backend and Marlin MXFP4 MoE"
  // (vllm-project/recipes OpenAI/GPT-OSS.md at 888856d, c23f4ff, 1e750f8).
  b.mxfp4_triton_kernels = v >= VllmVersion{0, 11, 1};
  // The engine: V0 up to 0.7, V1 from 0.8.0 (kFirstV1DefaultVllm).
  b.v1_engine = v >= kFirstV1DefaultVllm;
  // Prefix caching: V0's EngineArgs.enable_prefix_caching defaults to False; V1 turns it on
  // unless set (vllm/engine/arg_utils.py, _set_default_args_v1: "V1 enables prefix caching by
  // default"; later EngineArgs resolves None to True for V1).
  b.prefix_caching_by_default = b.v1_engine;
  return b;
}

std::string engine_description(std::string_view text) {
  const std::optional<VllmVersion> v = parse_vllm_version(text);
  if (!v) return fmt::format("vLLM {}", text);
  return fmt::format("vLLM {}, {} engine", text, vllm_behaviour(*v).v1_engine ? "V1" : "V0");
}

std::string unmodelled_release(const VllmVersion& v) {
  const std::string ranges =
      fmt::format("modelled: {} to 0.7.x (the V0 engine) and {} and later (V1), validated on {}",
                  to_string(kOldestModelledVllm), to_string(kOldestModelledV1Vllm),
                  to_string(kNewestValidatedVllm));
  if (v < kOldestModelledVllm) {
    return fmt::format("vLLM {} is not modelled: releases before {} ran other V0 scheduling "
                       "and batch defaults; {}",
                       to_string(v), to_string(kOldestModelledVllm), ranges);
  }
  if (v >= kFirstV1DefaultVllm && v < kOldestModelledV1Vllm) {
    return fmt::format("vLLM {} is not modelled: 0.8.x runs V1 by default with batch defaults "
                       "that changed within 0.8 (2048 tokens / 256 sequences for `vllm serve` "
                       "on every GPU, then larger ones for H100/H200 by device name) and "
                       "are not modelled; {}",
                       to_string(v), ranges);
  }
  return "";
}

VllmV0Defaults vllm_v0_defaults(const VllmVersion& v, std::int64_t max_model_len,
                                std::optional<bool> chunked_given, bool lora,
                                bool speculative) {
  VllmV0Defaults d;
  // Chunked prefill: EngineArgs.enable_chunked_prefill is None unless given; V0's
  // create_engine_config turns it on "for models with max_model_len > 32K" (use_long_context:
  // max_model_len > 32768) on CUDA without a sliding window, speculative decoding, LoRA or a
  // prompt adapter, else off (vllm/engine/arg_utils.py, 0.6 and 0.7 trees).
  // NOTE: some V0 releases also kept it off with prefix caching, for sliding-window and
  // multimodal or MLA models; those exceptions are not modelled.
  d.enable_chunked_prefill = chunked_given.value_or(max_model_len > 32768 && !lora &&
                                                    !speculative);
  // max_num_batched_tokens unset: SchedulerConfig picks 512 with chunked prefill up to
  // 0.6.4 ("the values that have the best balance between ITL and TTFT on A100"), 2048 from
  // 0.6.5 (_DEFAULT_MAX_NUM_BATCHED_TOKENS, vllm-project/vllm PR #10544, merged 2024-11-21,
  // after 0.6.4.post1), and max(max_model_len, 2048) without chunked prefill (vllm/config.py).
  const std::int64_t chunked_tokens = v >= VllmVersion{0, 6, 5} ? 2048 : 512;
  d.max_num_batched_tokens = d.enable_chunked_prefill
                                 ? chunked_tokens
                                 : std::max<std::int64_t>(max_model_len, 2048);
  // max_num_seqs: EngineArgs.max_num_seqs = 256 in V0, whatever the GPU.
  d.max_num_seqs = 256;
  return d;
}

}  // namespace vramsim::run
