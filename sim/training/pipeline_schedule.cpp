#include "sim/training/pipeline_schedule.hpp"

#include <algorithm>

#include "sim/core/check.hpp"

namespace vramsim::training {

namespace {

std::vector<PipelineStep> one_f_one_b(std::int64_t warmup, std::int64_t total, auto forward_at,
                                      auto backward_at) {
  std::vector<PipelineStep> order;
  order.reserve(static_cast<std::size_t>(2 * total));
  for (std::int64_t k = 0; k < warmup; ++k) order.push_back(forward_at(k));
  for (std::int64_t i = 0; i < total - warmup; ++i) {
    order.push_back(forward_at(warmup + i));
    order.push_back(backward_at(i));
  }
  for (std::int64_t i = total - warmup; i < total; ++i) order.push_back(backward_at(i));
  return order;
}

}  // namespace

std::vector<PipelineStep> pipeline_order(PipelineSchedule schedule, int pp, int stage,
                                         std::int64_t m, int chunks) {
  VRAMSIM_CHECK(pp >= 1 && stage >= 0 && stage < pp && m >= 1 && chunks >= 1,
                "bad pipeline_order({}, {}, {}, {})", pp, stage, m, chunks);
  switch (schedule) {
    case PipelineSchedule::kGpipe: {
      std::vector<PipelineStep> order;
      for (std::int64_t i = 0; i < m; ++i) order.push_back({true, i, 0});
      for (std::int64_t i = 0; i < m; ++i) order.push_back({false, i, 0});
      return order;
    }
    case PipelineSchedule::k1F1B: {
      const std::int64_t warmup = std::min<std::int64_t>(pp - stage - 1, m);
      return one_f_one_b(
          warmup, m,
          [](std::int64_t k) {
            return PipelineStep{true, k, 0};
          },
          [](std::int64_t k) {
            return PipelineStep{false, k, 0};
          });
    }
    case PipelineSchedule::kInterleaved: {
      const std::int64_t v = chunks;
      const std::int64_t total = m * v;
      const std::int64_t warmup =
          std::min<std::int64_t>((pp - stage - 1) * 2 + (v - 1) * pp, total);
      const auto mb = [&](std::int64_t k) { return (k / (pp * v)) * pp + k % pp; };
      return one_f_one_b(
          warmup, total,
          [&](std::int64_t k) {
            return PipelineStep{true, mb(k), static_cast<int>((k / pp) % v)};
          },
          [&](std::int64_t k) {
            return PipelineStep{false, mb(k), static_cast<int>(v - 1 - (k / pp) % v)};
          });
    }
  }
  VRAMSIM_UNREACHABLE("invalid PipelineSchedule");
}

}  // namespace vramsim::training
