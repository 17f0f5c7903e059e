// The budget command's answer rendered as a table for people (budget_output.cpp); the answer
// comes from the run layer (sim/run/budget_run.hpp), its JSON and HDF5 records too
// (sim/run/budget_results.hpp).
#pragma once

#include <string>

#include "sim/run/budget_results.hpp"
#include "sim/run/budget_run.hpp"

namespace vramsim::cli {

using run::Alternative;
using run::answer_budget;
using run::BudgetAnswer;
using run::BudgetRequest;
using run::default_max_num_batched_tokens;
using run::default_max_num_seqs;

std::string budget_table(const BudgetAnswer& a);

}  // namespace vramsim::cli
