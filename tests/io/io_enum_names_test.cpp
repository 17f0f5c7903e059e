// The names of sim/io's enums come from one table each (sim/core/enum_table.hpp).
#include "sim/io/results_types.hpp"
#include "sim/io/sweep_grid.hpp"
#include "tests/catch.hpp"
#include "tests/core/enum_table_checks.hpp"

using namespace vramsim;
using namespace vramsim::io;

TEST_CASE("io enums round-trip through their tables", "[io][enum_table]") {
  testing::check_enum_api(kSweepKinds, [](SweepKind k) { return to_string(k); },
                          sweep_kind_from_string);
  testing::check_enum_table(kColumnTypes);
  for (const auto& r : kColumnTypes.rows) CHECK(to_string(r.value) == r.name);
}
