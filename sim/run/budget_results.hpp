// The budget answer as records, callable without the command line: the JSON object of
// `vramsim budget --format json` (DESIGN.md's field names) and the /budget table of the results
// files (analysis/SCHEMA.md, "vramsim budget"). The terminal table is sim/cli/budget_output.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "sim/memory/budget.hpp"
#include "sim/run/budget_run.hpp"

namespace vramsim::io {
class ResultsWriter;
}

namespace vramsim::run {

/// The device whose KV cache is the smallest (fewest blocks, the first of equals): the answer's
/// headline row. `r` must hold at least one device.
const memory::DeviceBudget& headline_device(const memory::BudgetResult& r);

/// Which sheet decided whether the non-torch memory holds NCCL's NVLS buffers (BudgetAnswer::
/// nvls): "node sheet <id>" (hardware.topology) or "device sheet <id>". budget and serve report
/// it alike.
std::string nvls_source(const BudgetAnswer& a);

/// The engine's settings, the headline device's row flat (DESIGN.md: num_params, weights_bytes,
/// ..., fits), then every device under "devices" and the alternatives tried when it does not
/// fit ("fits_with_larger_tp", "fits_on_other_gpus").
nlohmann::ordered_json budget_json(const BudgetAnswer& a);

/// The speculative-decoding settings as budget and serve report them: method, model,
/// num_speculative_tokens, acceptance_rates, expected_tokens_per_step.
nlohmann::ordered_json speculative_json(const serving::SpeculativeConfig& c);

/// Writes /budget (one row per device) and the run's attributes (the file-level `inputs` is
/// budget_json without "devices", and `settings`, the resolved settings with their origins, when
/// given); crash-safe (temp + rename).
void write_budget_results(const BudgetAnswer& a, const std::filesystem::path& out,
                          const std::string& command_line, const std::string& scenario_text,
                          const nlohmann::ordered_json& settings = nullptr);

/// Writes the /budget table (one row per device) and its attributes into an open file.
void write_budget_table(io::ResultsWriter& w, const BudgetAnswer& a);

}  // namespace vramsim::run
