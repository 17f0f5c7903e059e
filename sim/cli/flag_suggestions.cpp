#include "sim/cli/flag_suggestions.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "sim/core/text.hpp"

namespace vramsim::cli {

namespace {

// The dash-separated words of `flag` without its leading dashes.
std::vector<std::string_view> words_of(std::string_view flag) {
  while (!flag.empty() && flag.front() == '-') flag.remove_prefix(1);
  std::vector<std::string_view> out;
  while (!flag.empty()) {
    const std::size_t dash = flag.find('-');
    out.push_back(flag.substr(0, dash));
    if (dash == std::string_view::npos) break;
    flag.remove_prefix(dash + 1);
  }
  return out;
}

// "--gpu-mem-util" abbreviates "--gpu-memory-utilization": as many words, each a prefix.
bool abbreviates(std::string_view typed, std::string_view flag) {
  const std::vector<std::string_view> t = words_of(typed);
  const std::vector<std::string_view> f = words_of(flag);
  if (t.size() != f.size() || t.empty()) return false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].empty() || f[i].substr(0, t[i].size()) != t[i]) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> closest_flags(const CLI::App& cmd, std::string_view typed) {
  if (const std::size_t eq = typed.find('='); eq != std::string_view::npos) {
    typed = typed.substr(0, eq);
  }
  std::vector<std::string> spellings;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const std::string& l : o->get_lnames()) spellings.push_back("--" + l);
    for (const std::string& s : o->get_snames()) spellings.push_back("-" + s);
  }
  const std::size_t limit = std::max<std::size_t>(2, typed.size() / 4);
  std::vector<std::pair<std::size_t, std::string>> near;
  for (const std::string& f : spellings) {
    if (f == typed) continue;
    const std::size_t d = edit_distance(typed, f);
    if (d <= limit) {
      near.emplace_back(d, f);
    } else if (typed.size() > 3 && (f.rfind(typed, 0) == 0 || abbreviates(typed, f))) {
      near.emplace_back(limit + 1, f);  // a prefix or abbreviation, after the near misses
    }
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [d, f] : near) {
    if (out.size() == 3) break;
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

std::string unknown_flag_message(const CLI::App& cmd, std::string_view typed) {
  const std::vector<std::string> near = closest_flags(cmd, typed);
  if (near.empty()) return fmt::format("unknown flag '{}'; see --help for the flags", typed);
  return fmt::format("unknown flag '{}'; did you mean {}?", typed,
                     fmt::join(near, near.size() == 2 ? " or " : ", "));
}

const CLI::App& deepest_parsed(const CLI::App& app) {
  const CLI::App* at = &app;
  for (;;) {
    const std::vector<CLI::App*> subs = at->get_subcommands();  // the parsed ones
    if (subs.empty()) return *at;
    at = subs.front();
  }
}

}  // namespace vramsim::cli
