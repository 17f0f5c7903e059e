// The sweep's results file and journal (the rest of sweep_output.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/io/results_file.hpp"
#include "sim/io/results_reader.hpp"
#include "sim/run/sweep_output.hpp"

namespace vramsim::run {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<io::Column> as_columns(const std::vector<SummaryColumn>& cols) {
  std::vector<io::Column> out;
  for (const SummaryColumn& c : cols) {
    switch (c.type) {
      case io::ColumnType::kInt64: out.push_back(io::Column::int64(c.name, c.units, c.ints)); break;
      case io::ColumnType::kFloat64:
        out.push_back(io::Column::float64(c.name, c.units, c.doubles));
        break;
      case io::ColumnType::kString: out.push_back(io::Column::string(c.name, c.strings)); break;
    }
  }
  return out;
}

/// One row per pipeline stage of a training result: its numbers, at_peak flattened.
void write_devices(io::ResultsWriter& w, const std::string& group,
                   const nlohmann::ordered_json& devices) {
  std::vector<std::string> names;
  std::map<std::string, std::vector<std::int64_t>> ints;
  std::map<std::string, std::vector<double>> doubles;
  const auto add = [&](const std::string& name, const nlohmann::ordered_json& v) {
    if (!v.is_number() && !v.is_boolean()) return;
    if (!ints.count(name) && !doubles.count(name)) names.push_back(name);
    if (v.is_number_float()) {
      doubles[name].push_back(v.get<double>());
    } else {
      ints[name].push_back(v.is_boolean() ? static_cast<std::int64_t>(v.get<bool>())
                                          : v.get<std::int64_t>());
    }
  };
  for (const nlohmann::ordered_json& d : devices) {
    for (const auto& [key, value] : d.items()) {
      if (value.is_object()) {
        for (const auto& [k, v] : value.items()) add(key + "_" + k, v);
      } else {
        add(key, value);
      }
    }
  }
  std::vector<io::Column> cols;
  for (const std::string& n : names) {
    // The units the field is declared with; an undeclared number stays in the JSON only.
    const std::optional<io::Quantity> q = io::quantity_in(train_device_schema(), n);
    if (!q) continue;
    const std::string units(io::units_of(*q));
    if (doubles.count(n)) {
      if (doubles[n].size() != devices.size()) return;  // a ragged shape: keep the JSON only
      cols.push_back(io::Column::float64(n, units, doubles[n]));
    } else {
      if (ints[n].size() != devices.size()) return;
      cols.push_back(io::Column::int64(n, units, ints[n]));
    }
  }
  if (!cols.empty()) w.write_table(group + "/devices", cols);
}

/// The step-time model a record's result names, or "" (module doc: sweep_cost_model).
std::string point_cost_model(const PointRecord& r) {
  if (!r.result.is_object()) return "";
  if (r.result.contains("inputs") && r.result["inputs"].is_object()) {
    const nlohmann::ordered_json& in = r.result["inputs"];
    if (in.contains("cost_model") && in["cost_model"].is_string()) {
      return in["cost_model"].get<std::string>();  // serve_json
    }
  }
  if (r.result.contains("calibration_source") && r.result["calibration_source"].is_string()) {
    return r.result["calibration_source"].get<std::string>();  // train_json
  }
  return "";
}

}  // namespace

std::string sweep_cost_model(const std::vector<PointRecord>& records) {
  std::vector<std::string> models;
  for (const PointRecord& r : records) {
    const std::string m = point_cost_model(r);
    if (!m.empty() && std::find(models.begin(), models.end(), m) == models.end()) {
      models.push_back(m);
    }
  }
  if (models.empty()) return "none (no point was simulated)";
  if (models.size() == 1) return models.front();
  return fmt::format("mixed: {}", fmt::join(models, "; "));
}

void write_sweep_file(const std::filesystem::path& out, const io::SweepGrid& grid,
                      const std::vector<PointRecord>& records, const std::string& command_line) {
  io::ResultsWriter w(out);
  nlohmann::ordered_json inputs;
  inputs["command"] = std::string(to_string(grid.kind));
  inputs["grid"] = grid.file;
  inputs["base_scenario"] = grid.base_file;
  inputs["axes"] = grid.axes;
  inputs["num_points"] = grid.points.size();
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line,
                        .scenario_text = grid.text,
                        .seed = 0,
                        .inputs = inputs.dump(),
                        .calibration_source = sweep_cost_model(records),
                        .created_by = "vramsim sweep"});
  w.set_string_attribute("/sweep", "command", to_string(grid.kind));
  w.set_string_attribute("/sweep", "grid_file", grid.file);
  w.set_string_attribute("/sweep", "base_scenario", grid.base_file);
  w.set_string_attribute("/sweep", "description", grid.description);
  w.set_int_attribute("/sweep", "num_points", static_cast<std::int64_t>(grid.points.size()));
  const std::vector<SummaryColumn> summary = summary_columns(grid, records);
  w.write_table("/sweep/summary", as_columns(summary));
  w.create_group("/sweep/points");
  for (const PointRecord& r : records) {
    const std::string group = fmt::format("/sweep/points/{}", r.index);
    w.create_group(group);
    w.set_string_attribute(group, "status", r.status);
    w.set_string_attribute(group, "reason", r.reason);
    const std::vector<std::string> scenario{r.scenario_text};
    const std::vector<std::string> result{r.result.is_null() ? "" : r.result.dump()};
    w.write_column(group, io::Column::string("scenario_text", scenario));
    w.write_column(group, io::Column::string("result_json", result));
    const std::vector<SummaryColumn> row = summary_columns(grid, {r});
    w.write_table(group + "/summary", as_columns(row));
    if (r.result.is_object() && r.result.contains("devices") && r.result["devices"].is_array() &&
        !r.result["devices"].empty()) {
      write_devices(w, group, r.result["devices"]);
    }
  }
  w.finish();
}

std::filesystem::path journal_path(const std::filesystem::path& out) {
  return std::filesystem::path(out.string() + ".journal");
}

Journal::Journal(std::filesystem::path path, bool keep) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (keep ? 0 : O_TRUNC),
               0644);
  if (fd_ < 0) {
    throw ConfigError("--out", fmt::format("cannot write the sweep journal {}", path_.string()));
  }
  last_sync_s_ = now_s();
}

Journal::~Journal() {
  if (fd_ >= 0) {
    ::fsync(fd_);
    ::close(fd_);
  }
}

void Journal::append(const PointRecord& r) {
  if (fd_ < 0) return;
  const std::string line = record_to_json(r) + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n <= 0) return;  // a full disk loses durability, not the sweep
    done += static_cast<std::size_t>(n);
  }
  if (now_s() - last_sync_s_ >= 0.25) {
    ::fsync(fd_);
    last_sync_s_ = now_s();
  }
}

void Journal::remove() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

std::vector<PointRecord> previous_records(
    const std::filesystem::path& out, const std::function<void(const std::string&)>& warn) {
  std::map<std::int64_t, PointRecord> by_index;
  std::error_code ec;
  if (std::filesystem::is_regular_file(out, ec)) {
    try {
      const io::ResultsReader in(out);
      if (in.has_object("/sweep/points")) {
        for (const std::string& name : in.list_groups("/sweep/points")) {
          const std::string g = "/sweep/points/" + name;
          PointRecord r;
          r.index = std::stoll(name);
          r.status = in.read_string_attribute(g, "status");
          r.reason = in.read_string_attribute(g, "reason");
          r.scenario_text = in.read_string_column(g + "/scenario_text").at(0);
          const std::string result = in.read_string_column(g + "/result_json").at(0);
          r.result = result.empty() ? nlohmann::ordered_json()
                                    : nlohmann::ordered_json::parse(result);
          by_index[r.index] = std::move(r);
        }
      }
    } catch (const std::exception& e) {
      if (warn) warn(fmt::format("ignoring {}: {}", out.string(), e.what()));
    }
  }
  const std::filesystem::path jpath = journal_path(out);
  std::ifstream journal(jpath);
  // A journal line is a point's record written once, when it finished: a second line for the
  // same index that says something else means the journal was edited or mixed up, and neither
  // is trusted (the point runs again).
  std::map<std::int64_t, std::pair<std::int64_t, std::string>> journaled;  // index: line, text
  std::set<std::int64_t> conflicting;
  std::int64_t line_no = 0;
  for (std::string line; std::getline(journal, line);) {
    ++line_no;
    std::string why;
    std::optional<PointRecord> r = record_from_json(line, &why);
    if (!r) {
      // A last line without its newline is a write the crash cut short: not worth a warning.
      const bool torn = journal.eof();
      if (warn && !torn && !line.empty()) {
        warn(fmt::format("{}:{}: ignoring a record that is not one (the point runs again): {}",
                         jpath.string(), line_no, why));
      }
      continue;
    }
    const std::string canonical = record_to_json(*r);
    const auto [it, inserted] = journaled.try_emplace(r->index, line_no, canonical);
    if (!inserted) {
      if (it->second.second != canonical && conflicting.insert(r->index).second && warn) {
        warn(fmt::format("{}:{}: point {} was already journaled at line {} with another "
                         "record; neither is kept (the point runs again)",
                         jpath.string(), line_no, r->index, it->second.first));
      }
      continue;
    }
    by_index[r->index] = std::move(*r);
  }
  for (const std::int64_t index : conflicting) by_index.erase(index);
  std::vector<PointRecord> records;
  for (auto& [index, r] : by_index) records.push_back(std::move(r));
  return records;
}

}  // namespace vramsim::run
