// The names of sim/comm's enums come from one table each (sim/core/enum_table.hpp).
#include "sim/comm/collective.hpp"
#include "tests/catch.hpp"
#include "tests/core/enum_table_checks.hpp"

using namespace vramsim;
using namespace vramsim::comm;

TEST_CASE("Collective round-trips through its table", "[comm][enum_table]") {
  testing::check_enum_api(kCollectives, [](Collective c) { return to_string(c); },
                          collective_from_string);
}
