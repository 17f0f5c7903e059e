// The CLI's flag help, listings and errors take their valid names from the enum tables.
#include <string>

#include "sim/cli/commands.hpp"
#include "sim/model/weight_format.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/traces/trace_factory.hpp"
#include "sim/training/training_plan.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using namespace vramsim;
using vramsim::testing::run;

namespace {

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

template <class Table>
void check_every_name(const std::string& text, const Table& t) {
  for (const auto& r : t.rows) {
    INFO("name '" << std::string(r.name) << "'");
    CHECK(contains(text, r.name));
  }
}

}  // namespace

TEST_CASE("train --help lists the training tables' names", "[cli][enum_table]") {
  const auto r = run("train --help");
  REQUIRE(r.exit_code == 0);
  check_every_name(r.out, training::kStrategies);
  check_every_name(r.out, training::kPrecisions);
  check_every_name(r.out, training::kOptimizers);
  check_every_name(r.out, training::kPipelineSchedules);
  check_every_name(r.out, training::kCheckpointKinds);
  CHECK(contains(r.out, training::strategy_names()));
  check_every_name(r.out, cli::kOutputFormats);
}

TEST_CASE("serve --help lists the serving tables' names", "[cli][enum_table]") {
  const auto r = run("serve --help");
  REQUIRE(r.exit_code == 0);
  check_every_name(r.out, serving::kPreemptionModes);
  check_every_name(r.out, serving::kTraceFormats);
  check_every_name(r.out, serving::kArrivalProcesses);
  check_every_name(r.out, serving::kMalformedRowPolicies);
  check_every_name(r.out, model::kQuantMethods);
}

TEST_CASE("list policies shows every preemption mode with its description",
          "[cli][enum_table]") {
  const auto r = run("list policies");
  REQUIRE(r.exit_code == 0);
  for (const auto& row : serving::kPreemptionModes.rows) {
    CHECK(contains(r.out, row.name));
    CHECK(contains(r.out, row.description));
  }
}

TEST_CASE("an unknown strategy is answered with exactly the table's names", "[cli][enum_table]") {
  const auto r = run("train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --strategy zero4");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "unknown value 'zero4'; valid: " + join_names(training::kStrategies)));
}

TEST_CASE("an unknown preemption mode is answered with the table's names", "[cli][enum_table]") {
  const auto r = run("serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm --preemption drop");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "--preemption: unknown value 'drop'; valid: " +
                              join_names(serving::kPreemptionModes)));
}
