// A registry of one policy family's descriptor rows (STYLE.md 6.3): explicit registration,
// lookup by name, and an unknown name answered with the list of valid ones.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.hpp"

namespace vramsim::serving {

/// `Descriptor` has at least `std::string name` and `std::string description`.
template <class Descriptor>
class PolicyRegistry {
 public:
  /// `family` names the policy kind in messages: "scheduler", "router".
  explicit PolicyRegistry(std::string family) : family_(std::move(family)) {}

  void add(Descriptor d) { rows_.push_back(std::move(d)); }

  /// Throws ConfigError on `field` listing the valid names when `name` is unknown.
  const Descriptor& find(std::string_view name, std::string_view field) const {
    std::vector<std::string> names;
    for (const Descriptor& d : rows_) {
      if (d.name == name) return d;
      names.push_back(d.name);
    }
    throw ConfigError(std::string(field), fmt::format("unknown {} '{}'; valid: {}", family_, name,
                                                      fmt::join(names, ", ")));
  }

  const std::vector<Descriptor>& all() const { return rows_; }

 private:
  std::string family_;
  std::vector<Descriptor> rows_;
};

}  // namespace vramsim::serving
