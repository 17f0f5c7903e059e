// Whether a budget answer's notes (run::BudgetAnswer::notes) say something, for the run tests
// that check which accounting rule an answer says it applied.
#pragma once

#include <string>
#include <string_view>

#include "sim/run/budget_run.hpp"

namespace vramsim::testing {

/// Whether one of `a`'s notes contains `text`.
inline bool has_note(const run::BudgetAnswer& a, std::string_view text) {
  for (const std::string& n : a.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace vramsim::testing
