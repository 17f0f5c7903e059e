// The CLI11 binding of the training option schema: one walk over its rows.
#include <fmt/format.h>

#include "sim/cli/train_config.hpp"
#include "sim/run/train_run.hpp"

namespace vramsim::cli {

bool TrainFlags::given(std::string_view flag) const {
  const auto it = values.find(flag);
  return it != values.end() && it->second.option != nullptr && it->second.option->count() > 0;
}

std::int64_t TrainFlags::integer(std::string_view flag) const {
  return given(flag) ? values.find(flag)->second.integer : 0;
}

run::GivenValues TrainFlags::given_values() const {
  run::GivenValues flags;
  for (const run::TrainOptionRow& row : run::train_option_rows()) {
    if (!given(row.flag)) continue;
    const Value& v = values.find(row.flag)->second;
    run::GivenValue& given_value = flags[std::string(row.path)];
    switch (row.kind) {
      case run::ValueKind::kString:
      case run::ValueKind::kBytes: given_value.value = v.text; break;
      case run::ValueKind::kInt: given_value.value = v.integer; break;
      case run::ValueKind::kBool: given_value.value = v.boolean; break;
    }
    given_value.origin.kind = run::OriginKind::kFlag;
    given_value.origin.flag = row.flag;
  }
  return flags;
}

void add_train_flags(CLI::App& cmd, TrainFlags& f) {
  cmd.add_option("scenario", f.scenario, "Training scenario file (TOML); flags override it")
      ->check(CLI::ExistingFile);
  for (const run::TrainOptionRow& row : run::train_option_rows()) {
    TrainFlags::Value& v = f.values[std::string(row.flag)];
    const std::string name(row.flag);
    const std::string help = run::help_text(row);
    switch (row.kind) {
      case run::ValueKind::kString:
      case run::ValueKind::kBytes: v.option = cmd.add_option(name, v.text, help); break;
      case run::ValueKind::kInt: v.option = cmd.add_option(name, v.integer, help); break;
      case run::ValueKind::kBool: v.option = cmd.add_flag(name, v.boolean, help); break;
    }
  }
  cmd.add_option("--out", f.out, "Write an HDF5 results file (see analysis/SCHEMA.md)");
  add_format_option(cmd, f.format);
}

ValidationReport named_by_flags(const ValidationReport& report) {
  ValidationReport out;
  for (const Problem& p : report.problems()) {
    const run::TrainOptionRow* row = run::find_train_option(p.field);
    const bool unlocated = p.where.file.empty() && row != nullptr && row->path == p.field;
    out.error(unlocated ? std::string(row->flag) : p.field, p.message, p.where);
  }
  return out;
}

TrainInputs resolve_train(const TrainFlags& f) {
  try {
    run::TrainScenario sc;
    if (!f.scenario.empty()) sc = run::load_train_scenario(f.scenario);
    run::TrainOptions o = run::resolve_train_options(sc, f.given_values());
    training::TrainingSetup s = run::resolve_training(o);
    return {std::move(o), std::move(s)};
  } catch (const ConfigError& e) {
    throw ConfigError(named_by_flags(e.report()));
  }
}

}  // namespace vramsim::cli
