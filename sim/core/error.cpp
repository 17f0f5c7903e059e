#include "sim/core/error.hpp"

namespace vramsim {

std::string format_problem(const Problem& p) {
  std::string out;
  if (!p.where.file.empty()) {
    out += p.where.file;
    if (p.where.line > 0) out += fmt::format(":{}", p.where.line);
    out += ": ";
  }
  if (!p.field.empty()) out += p.field + ": ";
  out += p.message;
  return out;
}

std::string ValidationReport::format() const {
  std::string out;
  for (const Problem& p : problems_) {
    out += format_problem(p);
    out += '\n';
  }
  return out;
}

namespace {
std::string first_line(const ValidationReport& r) {
  return r.problems().empty() ? std::string("invalid input") : format_problem(r.problems().front());
}
ValidationReport single(std::string field, std::string message, SourceLocation where) {
  ValidationReport r;
  r.error(std::move(field), std::move(message), std::move(where));
  return r;
}
}  // namespace

ConfigError::ConfigError(ValidationReport report)
    : std::runtime_error(first_line(report)), report_(std::move(report)) {}

ConfigError::ConfigError(std::string field, std::string message, SourceLocation where)
    : ConfigError(single(std::move(field), std::move(message), std::move(where))) {}

void throw_if_errors(const ValidationReport& report) {
  if (!report.ok()) throw ConfigError(report);
}

}  // namespace vramsim
