// The search space of `vramsim plan serve` (plan_serve_run.hpp): the lists of the request,
// checked, and the layouts they make (aggregated replicas, the xPyD splits of each replica
// count, and with --search-mixed-pools the splits whose prefill and decode pools take different
// GPUs or TPs), then the configuration at each index of the space. plan_serve_space() and the
// PlanServeSpace sizes, declared in plan_serve_run.hpp, are defined in plan_serve_space.cpp.
#pragma once

#include <cstddef>
#include <string>

#include "sim/run/plan_serve_run.hpp"

namespace vramsim::run {

/// A GPU id as the search compares it: lower case (--search-gpu and --gpu-price ignore case).
std::string plan_serve_gpu_id(std::string id);

/// Row `index` of `sp` (< sp.size()): its settings filled, not evaluated (the order of
/// PlanServeRow::index; from product_size() on, the mixed layouts).
PlanServeRow plan_serve_row(const PlanServeSpace& sp, std::size_t index);

}  // namespace vramsim::run
