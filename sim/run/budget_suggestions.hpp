// The engine settings users change first when a budget does not fit (BudgetAnswer::suggestions):
// more of the device, a smaller profile batch, fewer bytes per KV element or per weight, each
// tried alone on the same GPU and split. answer_budget (budget_run.hpp) fills them in.
#pragma once

#include <vector>

#include "sim/run/budget_run.hpp"

namespace vramsim::run {

/// The changes of the engine settings of `req`, each alone on the same GPU and split, cheapest
/// first, with what each gives; only those valid for the model and device are tried. `a` is
/// the request's answer as answer_budget computed it (model, device, engine, overheads and
/// result set). With the KV cache given in bytes, the one change is a size the devices hold.
std::vector<Suggestion> budget_suggestions(const BudgetRequest& req, const BudgetAnswer& a);

}  // namespace vramsim::run
