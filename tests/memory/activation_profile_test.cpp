#include "sim/memory/activation_profile.hpp"

#include "sim/model/model_zoo.hpp"
#include "tests/catch.hpp"

using namespace vramsim;

namespace {
model::ModelSpec zoo(const std::string& id) {
  return model::load_model(id, std::string(VRAMSIM_SOURCE_ROOT) + "/scenarios/models");
}

// NVIDIA H100 Tensor Core GPU Architecture whitepaper: 132 SMs on the SXM5 part.
constexpr int kH100Sms = 132;

memory::ProfileBatch batch(std::int64_t tokens, std::int64_t reqs, int tp = 1,
                           memory::SamplerKind kind = memory::SamplerKind::kTritonTopKTopP) {
  return memory::ProfileBatch{tokens, reqs, tp, DType::kBf16, kH100Sms, kind};
}
}  // namespace

TEST_CASE("the forward peak is three hidden-size buffers + the widest block",
          "[memory][activation]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  // MLP block 3 * 14336 + 4096 = 47104 wider than attention (4096 + 2 * 1024) + 4096 + 4096.
  CHECK(memory::forward_peak_bytes(spec, batch(8192, 256)).count() ==
        8192LL * (3 * 4096 + 47104) * 2);
  // TP=2 splits the MLP's inner width, not the residual stream.
  CHECK(memory::forward_peak_bytes(spec, batch(8192, 256, 2)).count() ==
        8192LL * (3 * 4096 + 2 * 7168 + 7168 + 4096) * 2);
}

TEST_CASE("the Triton sampler holds the model-dtype logits, three fp32 buffers and one per SM",
          "[memory][activation]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  const std::int64_t rv = 256LL * 128256;
  // 256 rows >= 132 SMs: the cached buffer has min(next_pow2(132), 132) = 132 rows.
  CHECK(memory::sampler_peak_bytes(spec, batch(2048, 256)).count() ==
        rv * 2 + 3 * rv * 4 + 132LL * 128256 * 4 + memory::kSamplerFixedBytes);
  // 20 rows: 20 programs, the buffer rounded up to 32 rows.
  const std::int64_t rv20 = 20LL * 128256;
  CHECK(memory::sampler_peak_bytes(spec, batch(2048, 20)).count() ==
        rv20 * 2 + 3 * rv20 * 4 + 32LL * 128256 * 4 + memory::kSamplerFixedBytes);
  // Under 8 rows vLLM sorts instead (apply_top_k_top_p_pytorch); 2-127 rows take PyTorch's
  // full-sort path: bf16 2 + fp32 4 + values 4 + indices 8 + two int2 buffers 16 + its keys 4 +
  // CUB alternates 4 + 8 = 50 B per element.
  CHECK(memory::sampler_peak_bytes(spec, batch(2048, 4)).count() ==
        50LL * 4 * 128256 + memory::kSamplerFixedBytes);
  CHECK(memory::activation_peak_bytes(spec, batch(2048, 256), false) ==
        memory::forward_peak_bytes(spec, batch(2048, 256)));
  // The last stage keeps the hidden states of the 2048 tokens and of the 256 sampled rows.
  CHECK(memory::activation_peak_bytes(spec, batch(2048, 256), true) ==
        Bytes((2048LL + 256) * 4096 * 2) + memory::sampler_peak_bytes(spec, batch(2048, 256)));
}

TEST_CASE("the sort-based sampler of older vLLM peaks inside torch.sort",
          "[memory][activation]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  const memory::ProfileBatch b = batch(2048, 256, 1, memory::SamplerKind::kSortTopKTopP);
  // 256 rows >= 128: segmented sort. bf16 logits 2 + fp32 logits 4 + sorted values 4 + int64
  // indices 8 + int64 source indices 8 + CUB alternates 4 + 8 = 38 B per [R, V] element.
  CHECK(memory::sort_bytes_per_element(256) == 4 + 8 + 8 + 4 + 8);
  CHECK(memory::sampler_peak_bytes(spec, b).count() ==
        38LL * 256 * 128256 + memory::kSamplerFixedBytes);
  // One row: CUB's radix sort alone beside the outputs.
  CHECK(memory::sort_bytes_per_element(1) == 4 + 8 + 4 + 8);
  CHECK(memory::sort_bytes_per_element(127) == 4 + 8 + 8 + 8 + 4 + 4 + 8);
}

TEST_CASE("FlashInfer's sampler holds the model-dtype logits and three fp32 buffers",
          "[memory][activation]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  const memory::ProfileBatch b = batch(2048, 256, 1, memory::SamplerKind::kFlashInferTopKTopP);
  const std::int64_t rv = 256LL * 128256;
  CHECK(memory::sampler_peak_bytes(spec, b).count() ==
        rv * 2 + 3 * rv * 4 + memory::kSamplerFixedBytes);
}

TEST_CASE("MoE layers size their peak by the fused-MoE workspace of a token chunk",
          "[memory][activation]") {
  const model::ModelSpec spec = zoo("mistralai/Mixtral-8x7B-v0.1");
  const memory::ProfileBatch b = batch(2048, 256);
  // workspace13 [M, top-2, max(2 * 14336, 4096)] + workspace2 [M, top-2, max(14336, 4096)].
  const std::int64_t workspace = 2048LL * 2 * (2 * 14336 + 14336);
  CHECK(memory::moe_workspace_bytes(spec, b).count() == workspace * 2);
  // router 8 per token + workspace + routed output 4096 per token.
  const std::int64_t moe = 2048LL * 8 + workspace + 2048LL * 4096;
  CHECK(memory::forward_peak_bytes(spec, b).count() == (3 * 2048LL * 4096 + moe) * 2);
  // The workspace stays allocated while the sampler runs.
  CHECK(memory::activation_peak_bytes(spec, b, true) ==
        max(memory::forward_peak_bytes(spec, b),
            Bytes((2048LL + 256) * 4096 * 2) + memory::moe_workspace_bytes(spec, b) +
                memory::sampler_peak_bytes(spec, b)));
  CHECK(memory::moe_workspace_bytes(zoo("meta-llama/Llama-3.1-8B-Instruct"), b) == Bytes(0));
}

TEST_CASE("a receiving pipeline stage holds hidden states and residual of the batch",
          "[memory][activation]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  CHECK(memory::pp_receive_buffer_bytes(spec, batch(8192, 1024)).count() == 2LL * 8192 * 4096 * 2);
}
