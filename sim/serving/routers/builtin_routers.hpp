// The built-in routers, one file each.
#pragma once

#include <memory>

#include "sim/serving/router.hpp"

namespace vramsim::serving {

std::unique_ptr<Router> make_round_robin_router();
std::unique_ptr<Router> make_least_outstanding_router();
std::unique_ptr<Router> make_prefix_aware_router();

}  // namespace vramsim::serving
