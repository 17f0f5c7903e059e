// The names of sim/training's enums come from one table each (sim/core/enum_table.hpp).
#include "sim/training/op_graph.hpp"
#include "sim/training/training_plan.hpp"
#include "tests/catch.hpp"
#include "tests/core/enum_table_checks.hpp"

using namespace vramsim;
using namespace vramsim::training;

TEST_CASE("training plan enums round-trip through their tables", "[training][enum_table]") {
  testing::check_enum_api(kStrategies, [](Strategy s) { return to_string(s); },
                          strategy_from_string, strategy_names());
  testing::check_enum_api(kPrecisions, [](Precision p) { return to_string(p); },
                          precision_from_string, precision_names());
  testing::check_enum_api(kOptimizers, [](Optimizer o) { return to_string(o); },
                          optimizer_from_string, optimizer_names());
  testing::check_enum_api(kPipelineSchedules, [](PipelineSchedule s) { return to_string(s); },
                          pipeline_schedule_from_string, pipeline_schedule_names());
  // The lists users see, unchanged.
  CHECK(strategy_names() ==
        "ddp, zero1, zero2, zero3, fsdp-full, fsdp-grad-op, hsdp, fsdp-no-shard");
  CHECK(precision_names() == "bf16-mixed, fp16-mixed, bf16, fp32, bf16-amp");
  CHECK(optimizer_names() == "adamw, adam, sgd, adam8bit");
  CHECK(pipeline_schedule_names() == "gpipe, 1f1b, interleaved");
}

TEST_CASE("checkpointing names come from the table, every:K keeps its parser",
          "[training][enum_table]") {
  testing::check_enum_table(kCheckpointKinds);
  CHECK(checkpointing_names() == "none, full, selective, selective-op, every:K");
  for (const auto& r : kCheckpointKinds.rows) {
    if (r.value == CheckpointKind::kEveryK) continue;
    const auto c = checkpointing_from_string(r.name);
    REQUIRE(c);
    CHECK(c->kind == r.value);
    CHECK(to_string(*c) == r.name);
  }
  CHECK(checkpointing_from_string("every:K") == std::nullopt);
  CHECK(checkpointing_from_string("every:0") == std::nullopt);
  CHECK(checkpointing_from_string("every:3x") == std::nullopt);
  const auto every3 = checkpointing_from_string("every:3");
  REQUIRE(every3);
  CHECK(*every3 == Checkpointing{CheckpointKind::kEveryK, 3});
  CHECK(to_string(*every3) == "every:3");
}

TEST_CASE("op graph enums round-trip through their tables", "[training][enum_table]") {
  testing::check_enum_table(kStreams);
  testing::check_enum_table(kMemoryCategories);
  testing::check_enum_table(kOpKinds);
  for (const auto& r : kStreams.rows) CHECK(to_string(r.value) == r.name);
  for (const auto& r : kMemoryCategories.rows) CHECK(to_string(r.value) == r.name);
  for (const auto& r : kOpKinds.rows) CHECK(to_string(r.value) == r.name);
  CHECK(static_cast<int>(kStreams.rows.size()) == kNumStreams);
  CHECK(static_cast<int>(kMemoryCategories.rows.size()) == kNumMemoryCategories);
}
