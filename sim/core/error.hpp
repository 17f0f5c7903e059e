// User-input errors: every problem found while loading a file or the command line is collected
// into a ValidationReport ({field path, message, file:line}); the CLI prints them all and exits
// with code 2. Simulated outcomes that look like failures ("does not fit") are results, not
// errors, and never pass through here.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace vramsim {

/// Exit codes of the command line (DESIGN.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInfeasible = 3;

/// Where a value came from. line == 0 means the file has no line for it (e.g. a flag).
struct SourceLocation {
  std::string file;
  int line = 0;
};

struct Problem {
  std::string field;    // "serving.block_size", "--tp", "num_attention_heads"
  std::string message;  // what is wrong and what was expected
  SourceLocation where;
};

class ValidationReport {
 public:
  void error(std::string field, std::string message, SourceLocation where = {}) {
    problems_.push_back({std::move(field), std::move(message), std::move(where)});
  }
  bool ok() const { return problems_.empty(); }
  const std::vector<Problem>& problems() const { return problems_; }
  void merge(const ValidationReport& other) {
    problems_.insert(problems_.end(), other.problems_.begin(), other.problems_.end());
  }
  /// One line per problem: "file:line: field: message".
  std::string format() const;

 private:
  std::vector<Problem> problems_;
};

/// Thrown by loaders when input is invalid; holds every problem found. Caught in cli/main.cpp.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(ValidationReport report);
  ConfigError(std::string field, std::string message, SourceLocation where = {});
  const ValidationReport& report() const { return report_; }

 private:
  ValidationReport report_;
};

/// Throws ConfigError if the report holds any problem.
void throw_if_errors(const ValidationReport& report);

std::string format_problem(const Problem& p);

}  // namespace vramsim
