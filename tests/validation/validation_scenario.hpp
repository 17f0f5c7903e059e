// A measured training run of tests/validation/ as the scenario it ran: the test writes the
// scenario's TOML once, with `{column}` where the row's field goes, and every validation test
// resolves it the same way (as `train` resolves a scenario file named after the row's case).
#pragma once

#include <fmt/args.h>
#include <fmt/format.h>

#include <map>
#include <string>
#include <string_view>

#include "sim/run/train_run.hpp"
#include "tests/catch.hpp"
#include "tests/validation/validation_table.hpp"

namespace vramsim::testing {

/// `toml` with each `{name}` replaced by the row's field of that column, or by the value of
/// `derived` (values the test computes from the row, e.g. a list re-punctuated; a name may not
/// be both); then resolved into the training setup. A placeholder naming neither fails the test
/// (fmt's "argument not found").
inline training::TrainingSetup training_setup_of_row(
    const ValidationRow& r, std::string_view toml,
    const std::map<std::string, std::string>& derived = {}) {
  fmt::dynamic_format_arg_store<fmt::format_context> args;
  for (const auto& [column, value] : r.field) args.push_back(fmt::arg(column.c_str(), value));
  for (const auto& [name, value] : derived) {
    if (r.field.count(name) != 0) {
      FAIL(fmt::format("{}:{}: '{}' is a column of the row and a derived value", r.file, r.line,
                       name));
    }
    args.push_back(fmt::arg(name.c_str(), value));
  }
  const std::string text = fmt::vformat(toml, args);
  return run::resolve_training(
      run::resolve_train_options(run::load_train_scenario_text(text, r.at("case") + ".toml")));
}

}  // namespace vramsim::testing
