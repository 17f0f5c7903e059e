// The names of sim/serving's enums come from one table each (sim/core/enum_table.hpp).
#include "sim/serving/scheduler.hpp"
#include "sim/serving/traces/trace_factory.hpp"
#include "tests/catch.hpp"
#include "tests/core/enum_table_checks.hpp"

using namespace vramsim;
using namespace vramsim::serving;

TEST_CASE("serving enums round-trip through their tables", "[serving][enum_table]") {
  testing::check_enum_api(kPreemptionModes, [](PreemptionMode m) { return to_string(m); },
                          preemption_mode_from_string);
  testing::check_enum_api(kTraceKinds, [](TraceKind k) { return to_string(k); },
                          trace_kind_from_string);
  testing::check_enum_api(kTraceFormats, [](TraceFormat f) { return to_string(f); },
                          trace_format_from_string);
  testing::check_enum_api(kMalformedRowPolicies,
                          [](MalformedRowPolicy p) { return to_string(p); },
                          malformed_row_policy_from_string);
  testing::check_enum_api(kArrivalProcesses, [](ArrivalProcess p) { return to_string(p); },
                          arrival_process_from_string);
  testing::check_enum_api(kPrefixGroupChoices, [](PrefixGroupChoice c) { return to_string(c); },
                          prefix_group_choice_from_string);
}

TEST_CASE("the trace format help lists every format with its description, auto last",
          "[serving][enum_table]") {
  CHECK(trace_format_help() ==
        "azure (CSV, header TIMESTAMP,ContextTokens,GeneratedTokens), "
        "mooncake (JSON lines: timestamp, input_length, output_length, hash_ids), "
        "csv (CSV, header arrival_s,prompt_tokens,output_tokens), "
        "auto (detect from the file's first line)");
}
