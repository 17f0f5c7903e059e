// Shared helpers for the compare serve tests (tests/run/compare_serve_*_test.cpp).
#pragma once

#include <string>

#include "sim/run/compare_serve_run.hpp"
#include "tests/catch.hpp"

namespace vramsim::testing {

/// The option of `a` named `name` ("1 GPU", "2 replicas", "1 GPU + KV tier", ...); fails the
/// test (and returns the first option, never read) when there is none.
inline const run::ServeCandidate& option(const run::CompareServeAnswer& a,
                                         const std::string& name) {
  for (const run::ServeCandidate& o : a.options) {
    if (o.name == name) return o;
  }
  FAIL("no option " << name);
  return a.options.front();
}

}  // namespace vramsim::testing
