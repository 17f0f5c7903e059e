// The budget command's answer rendered as a table, JSON and HDF5 (budget_output.cpp); the
// answer itself comes from the run layer (sim/run/budget_run.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "sim/run/budget_run.hpp"

namespace vramsim::io {
class ResultsWriter;
}

namespace vramsim::cli {

using run::Alternative;
using run::answer_budget;
using run::BudgetAnswer;
using run::BudgetRequest;
using run::default_max_num_batched_tokens;
using run::default_max_num_seqs;

nlohmann::ordered_json budget_json(const BudgetAnswer& a);
std::string budget_table(const BudgetAnswer& a);
/// Writes /budget (one row per device) and the run's attributes; crash-safe (temp + rename).
void write_budget_results(const BudgetAnswer& a, const std::filesystem::path& out,
                          const std::string& command_line, const std::string& scenario_text);

/// Writes the /budget table (one row per device) and its attributes into an open file.
void write_budget_table(io::ResultsWriter& w, const BudgetAnswer& a);

}  // namespace vramsim::cli
