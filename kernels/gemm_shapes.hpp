// The matrix shapes vramsim-calibrate measures, taken from the simulator's own model
// description (sim/model/weight_tensors.hpp + shard_shape), so the GEMMs measured are exactly
// the (n, k) the calibrated time model asks for: n = output features and k = input features
// of each matmul weight on one TP rank, m = tokens in the step. Host-only; builds without CUDA.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace vramsim::kernels {

struct GemmShape {
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::string label;  // the first model, TP degree and tensor with this shape
};

/// The models whose shapes the default calibration measures: dense 8B and 70B, two MoE models
/// (their expert shapes), a sliding-window model. All in scenarios/models.
std::vector<std::string> default_calibration_models();

/// Token counts m of the default GEMM grid (x4 steps, 1 to 16384); `quick`: 1, 64, 1024.
std::vector<std::int64_t> default_gemm_tokens(bool quick);

/// The distinct (n, k) of the matmul weights (linear layers, routed experts, lm_head; not
/// embeddings or routers) of `model_ids` at each TP degree of `tps` that the model can use
/// (validate_parallelism), in first-seen order. Throws ConfigError for an unknown model.
std::vector<GemmShape> zoo_gemm_shapes(const std::vector<std::string>& model_ids,
                                       std::span<const int> tps,
                                       const std::filesystem::path& zoo_dir);

}  // namespace vramsim::kernels
