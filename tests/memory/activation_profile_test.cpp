#include "sim/memory/activation_profile.hpp"

#include "sim/model/model_zoo.hpp"
#include "tests/catch.hpp"

using namespace vramsim;

namespace {
model::ModelSpec zoo(const std::string& id) {
  return model::load_model(id, std::string(VRAMSIM_SOURCE_ROOT) + "/scenarios/models");
}
}  // namespace

TEST_CASE("the forward peak is residual + normed input + the widest block", "[memory][activation]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  const memory::ProfileBatch b{8192, 256, 1, DType::kBf16};
  // MLP block 3 * 14336 + 4096 = 47104 wider than attention (4096 + 2 * 1024) + 4096 + 4096.
  CHECK(memory::forward_peak_bytes(spec, b).count() == 8192LL * (2 * 4096 + 47104) * 2);
  // TP=2 splits the MLP's inner width, not the residual stream.
  const memory::ProfileBatch b2{8192, 256, 2, DType::kBf16};
  CHECK(memory::forward_peak_bytes(spec, b2).count() ==
        8192LL * (2 * 4096 + 2 * 7168 + 7168 + 4096) * 2);
}

TEST_CASE("the sampler's peak is seven fp32 logit buffers", "[memory][activation]") {
  const model::ModelSpec spec = zoo("meta-llama/Llama-3.1-8B-Instruct");
  const memory::ProfileBatch b{2048, 256, 1, DType::kBf16};
  CHECK(memory::sampler_peak_bytes(spec, b).count() == 7LL * 256 * 128256 * 4);
  CHECK(memory::activation_peak_bytes(spec, b, false) == memory::forward_peak_bytes(spec, b));
  CHECK(memory::activation_peak_bytes(spec, b, true).count() ==
        2048LL * 4096 * 2 + 7LL * 256 * 128256 * 4);
}

TEST_CASE("MoE layers size their peak by the routed experts of a token chunk",
          "[memory][activation]") {
  const model::ModelSpec spec = zoo("mistralai/Mixtral-8x7B-v0.1");
  const memory::ProfileBatch b{2048, 256, 1, DType::kBf16};
  // router 8 + top-2 experts * (3 * 14336 + 4096) + down output 4096, per token.
  const std::int64_t moe = 2048LL * 8 + 2048LL * 2 * (3 * 14336 + 4096) + 2048LL * 4096;
  CHECK(memory::forward_peak_bytes(spec, b).count() == (2 * 2048LL * 4096 + moe) * 2);
}
