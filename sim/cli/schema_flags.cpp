#include "sim/cli/schema_flags.hpp"

#include <fmt/format.h>

#include <limits>

#include "sim/core/text.hpp"

namespace vramsim::cli {

namespace {

/// An integer flag's text: base 10 within int64, or with vLLM's human-readable suffixes
/// (parse_human_readable_int: "32k" = 32000, "32K" = 32768). CLI11's own conversion clamps an
/// out-of-range value to the int64 limit and reads "010" as octal; both would be a silent wrong
/// answer.
std::string integer_problem(const std::string& text) {
  std::string problem;
  if (parse_human_readable_int(text, &problem)) return "";
  return problem;
}

}  // namespace

bool SchemaFlags::given(std::string_view flag) const {
  const auto it = values.find(flag);
  return it != values.end() && it->second.option != nullptr && it->second.option->count() > 0;
}

run::GivenValues SchemaFlags::given_values() const {
  run::GivenValues flags;
  for (const auto& [flag, v] : values) {
    if (!given(flag)) continue;
    run::GivenValue& g = flags[v.path];
    switch (v.kind) {
      case run::ValueKind::kString:
      case run::ValueKind::kBytes:
      case run::ValueKind::kDuration: g.value = v.text; break;
      case run::ValueKind::kInt: g.value = v.integer; break;
      case run::ValueKind::kDouble: g.value = v.number; break;
      case run::ValueKind::kBool: g.value = v.boolean; break;
    }
    g.origin.kind = run::OriginKind::kFlag;
    g.origin.flag = flag;
  }
  return flags;
}

void SchemaFlags::add(CLI::App& cmd, std::string_view path, std::string_view flag,
                      std::string_view alias, run::ValueKind kind, const std::string& help,
                      std::string_view group) {
  Value& v = values[std::string(flag)];
  v.path = std::string(path);
  v.kind = kind;
  std::string names(flag);
  if (!alias.empty()) names += "," + std::string(alias);
  switch (kind) {
    case run::ValueKind::kString:
    case run::ValueKind::kBytes:
    case run::ValueKind::kDuration: v.option = cmd.add_option(names, v.text, help); break;
    case run::ValueKind::kInt:
      v.option = cmd.add_option(names, v.text, help)
                     ->type_name("INT")
                     ->check(CLI::Validator(integer_problem, "", "base-10 int64"));
      v.option->each([&v](const std::string& text) {
        if (auto n = run::raw_from_text(text, run::ValueKind::kInt)) {
          v.integer = std::get<std::int64_t>(*n);
        }
      });
      break;
    case run::ValueKind::kDouble: v.option = cmd.add_option(names, v.number, help); break;
    case run::ValueKind::kBool:
      // "--x,!--no-x": the negation overrides a scenario's true.
      names += ",!--no-" + std::string(flag.substr(2));
      v.option = cmd.add_flag(names, v.boolean, help);
      break;
  }
  // A repeated flag: the last one wins, as in vLLM's argparse (each value is still checked).
  if (kind != run::ValueKind::kBool) {
    v.option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  if (!group.empty()) v.option->group(std::string(group));
}

}  // namespace vramsim::cli
