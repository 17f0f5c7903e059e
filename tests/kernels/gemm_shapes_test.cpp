#include "kernels/gemm_shapes.hpp"

#include <algorithm>
#include <array>
#include <filesystem>

#include "sim/hardware/calibration_profile.hpp"
#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::kernels;

namespace {
const std::filesystem::path kZoo = std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "scenarios/models";
}

TEST_CASE("Llama-3.1-8B's GEMM shapes at TP 1 and 2 come from the model description",
          "[kernels][shapes]") {
  const std::array<int, 2> tps = {1, 2};
  const auto shapes = zoo_gemm_shapes({"meta-llama/Llama-3.1-8B"}, tps, kZoo);
  std::vector<std::pair<std::int64_t, std::int64_t>> nk;
  for (const GemmShape& s : shapes) nk.emplace_back(s.n, s.k);
  // TP 1: q/o, k/v, gate/up, down, lm_head; TP 2: q, k/v, o, gate/up, down, lm_head.
  CHECK(nk == std::vector<std::pair<std::int64_t, std::int64_t>>{
                  {4096, 4096}, {1024, 4096}, {14336, 4096}, {4096, 14336}, {128256, 4096},
                  {2048, 4096}, {512, 4096}, {4096, 2048}, {7168, 4096}, {4096, 7168},
                  {64128, 4096}});
  CHECK(shapes.front().label == "meta-llama/Llama-3.1-8B tp1 q_proj");
}

TEST_CASE("the fixture profile's GEMMs are exactly the shapes the harness would measure",
          "[kernels][shapes]") {
  const std::array<int, 2> tps = {1, 2};
  const auto shapes = zoo_gemm_shapes({"meta-llama/Llama-3.1-8B"}, tps, kZoo);
  const auto profile = calibration::load_calibration_profile(
      std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "tests/hardware/data/h100_fixture_profile.json");
  for (const auto& g : profile.gemms) {
    CHECK(std::any_of(shapes.begin(), shapes.end(),
                      [&](const GemmShape& s) { return s.n == g.n && s.k == g.k; }));
  }
}

TEST_CASE("the default grid covers MoE expert shapes and skips TP degrees a model cannot use",
          "[kernels][shapes]") {
  const std::array<int, 4> tps = {1, 2, 4, 8};
  const auto shapes = zoo_gemm_shapes(default_calibration_models(), tps, kZoo);
  // Mixtral-8x7B's experts: w1/w3 14336 x 4096 at TP 1 (shared with Llama-3.1-8B's MLP).
  CHECK(std::any_of(shapes.begin(), shapes.end(), [](const GemmShape& s) {
    return s.label.find("Qwen3-30B-A3B") != std::string::npos;
  }));
  CHECK(default_gemm_tokens(false).front() == 1);
  CHECK(default_gemm_tokens(false).back() == 16384);
  CHECK(default_gemm_tokens(true).size() == 3);
}
