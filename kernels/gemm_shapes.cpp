#include "kernels/gemm_shapes.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/model/model_zoo.hpp"
#include "sim/model/parallelism.hpp"
#include "sim/model/weight_bytes.hpp"
#include "sim/model/weight_tensors.hpp"

namespace vramsim::kernels {

std::vector<std::string> default_calibration_models() {
  return {"meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B", "mistralai/Mixtral-8x7B-v0.1",
          "Qwen/Qwen3-30B-A3B", "google/gemma-2-9b-it"};
}

std::vector<std::int64_t> default_gemm_tokens(bool quick) {
  if (quick) return {1, 64, 1024};
  return {1, 4, 16, 64, 256, 1024, 4096, 16384};
}

std::vector<GemmShape> zoo_gemm_shapes(const std::vector<std::string>& model_ids,
                                       std::span<const int> tps,
                                       const std::filesystem::path& zoo_dir) {
  std::vector<GemmShape> out;
  for (const std::string& id : model_ids) {
    const model::ModelSpec spec = model::load_model(id, zoo_dir);
    for (int tp : tps) {
      if (!model::validate_parallelism(spec, {tp, 1}).ok()) continue;
      for (const model::WeightTensor& t : model::weight_tensors(spec)) {
        const bool wanted = t.matmul && (t.kind == model::TensorKind::kLinear ||
                                         t.kind == model::TensorKind::kExpertLinear ||
                                         t.kind == model::TensorKind::kLmHead);
        if (!wanted) continue;
        const model::ShardShape s = model::shard_shape(spec, t, tp);
        const bool seen = std::any_of(out.begin(), out.end(), [&](const GemmShape& g) {
          return g.n == s.out_features && g.k == s.in_features;
        });
        if (!seen) {
          out.push_back({s.out_features, s.in_features, fmt::format("{} tp{} {}", id, tp, t.name)});
        }
      }
    }
  }
  return out;
}

}  // namespace vramsim::kernels
