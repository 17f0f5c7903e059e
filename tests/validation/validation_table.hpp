// The measured runs of tests/validation/, read the same way by every validation test: a CSV
// whose header must be exactly the columns the test expects (so a reordered or renamed column
// fails instead of shifting values), rows of as many plain fields (these files hold no quoted
// fields), and a used_for_fitting column of yes or no on every row, since the project keeps the
// runs constants were fitted to apart from those it validates on. A mismatch fails the test
// naming the file and line.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/catch.hpp"

namespace vramsim::testing {

inline const std::filesystem::path kValidationDir =
    std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "tests" / "validation";

/// One measured run: its fields by column name and the line it is on.
struct ValidationRow {
  std::string file;
  int line = 0;
  std::map<std::string, std::string> field;

  const std::string& at(const std::string& column) const { return field.at(column); }
  bool used_for_fitting() const { return field.at("used_for_fitting") == "yes"; }
  double number(const std::string& column) const {
    const std::string& text = at(column);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') {
      FAIL(fmt::format("{}:{}: {}: expected a number, got '{}'", file, line, column, text));
    }
    return v;
  }
  std::int64_t integer(const std::string& column) const {
    const std::string& text = at(column);
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') {
      FAIL(fmt::format("{}:{}: {}: expected an integer, got '{}'", file, line, column, text));
    }
    return v;
  }
};

inline std::vector<std::string> split_validation_line(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  std::string cell;
  while (std::getline(s, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

/// The rows of `name` (a file of tests/validation/); its header must equal `columns`, which must
/// include used_for_fitting.
inline std::vector<ValidationRow> read_validation_table(const std::string& name,
                                                        const std::vector<std::string>& columns) {
  const std::filesystem::path path = kValidationDir / name;
  std::ifstream in(path);
  if (!in) FAIL(fmt::format("{}: cannot open", path.string()));
  std::string line;
  if (!std::getline(in, line)) FAIL(fmt::format("{}: empty, expected a header", name));
  REQUIRE(split_validation_line(line) == columns);
  std::vector<ValidationRow> rows;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_validation_line(line);
    if (cells.size() != columns.size()) {
      FAIL(fmt::format("{}:{}: {} fields, the header has {}", name, number, cells.size(),
                       columns.size()));
    }
    ValidationRow row;
    row.file = name;
    row.line = number;
    for (std::size_t i = 0; i < cells.size(); ++i) row.field[columns[i]] = cells[i];
    const std::string& fit = row.at("used_for_fitting");
    if (fit != "yes" && fit != "no") {
      FAIL(fmt::format("{}:{}: used_for_fitting: expected yes or no, got '{}'", name, number,
                       fit));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace vramsim::testing
