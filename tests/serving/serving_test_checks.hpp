// Catch checks shared by the serving tests. Kept apart from serving_test_support.hpp, which
// builds the tiny worlds and stays free of Catch.
#pragma once

#include <cstddef>
#include <vector>

#include "sim/serving/serving_simulation.hpp"
#include "tests/catch.hpp"

namespace vramsim::serving::testing {

/// Checks that two runs of the same requests with the same seed gave the same rows in the same
/// order: each request's id, replica, arrival, first token and finish (DESIGN.md 6.5: reruns
/// are bit-identical).
inline void check_identical_request_timings(const std::vector<RequestRecord>& first,
                                            const std::vector<RequestRecord>& second) {
  REQUIRE(second.size() == first.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    INFO("row " << i << ", request " << first[i].id);
    CHECK(second[i].id == first[i].id);
    CHECK(second[i].replica == first[i].replica);
    CHECK(second[i].arrival == first[i].arrival);
    CHECK(second[i].first_token == first[i].first_token);
    CHECK(second[i].finish == first[i].finish);
  }
}

}  // namespace vramsim::serving::testing
