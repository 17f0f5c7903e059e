#include "sim/run/sweep_point.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <set>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/run/budget_results.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/serve_results.hpp"
#include "sim/run/serve_run.hpp"
#include "sim/run/train_options.hpp"
#include "sim/run/train_results.hpp"
#include "sim/run/train_run.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::run {

namespace {

/// Every problem on one line each: "file:line: field: message".
std::string describe(const ValidationReport& report) {
  std::string out;
  for (const Problem& p : report.problems()) {
    if (!out.empty()) out += '\n';  // appended, not "\n" + ...: GCC 12 warns on that (-Wrestrict)
    out += format_problem(p);
  }
  return out;
}

void run_serve_point(const io::PointScenario& ps, PointRecord& rec) {
  // The point's scenario resolved as `vramsim serve` would without flags (the run layer).
  ServeAnswer a = prepare_serve(
      resolve_serve_options(load_serve_scenario_text(ps.text, ps.name, ps.base_dir)));
  if (!a.feasible) {
    rec.status = kStatusInfeasible;
    rec.reason = a.budget.result.reason;
    rec.result = nlohmann::ordered_json::object();
    rec.result["budget"] = budget_json(a.budget);
    return;
  }
  simulate_serve(a, nullptr);
  rec.status = kStatusOk;
  rec.result = serve_json(a);
}

/// Why a training plan does not fit: each device that overflows, and by how much.
std::string training_shortfall(const training::TrainingResult& r) {
  std::string out;
  for (const training::DeviceResult& d : r.devices) {
    if (d.fits) continue;
    out += fmt::format("{}stage {} needs {} more than the device's {}", out.empty() ? "" : "; ",
                       d.stage, format_bytes(d.shortfall), format_bytes(d.capacity));
  }
  return out.empty() ? "does not fit" : out;
}

/// The point's scenario resolved as `vramsim train` would without flags (the run layer).
training::TrainingSetup resolve_train_point(const io::PointScenario& ps) {
  const TrainOptions o =
      resolve_train_options(load_train_scenario_text(ps.text, ps.name, ps.base_dir));
  return resolve_training(o);
}

void run_train_point(const io::SweepGrid& grid, std::size_t index, PointRecord& rec) {
  const io::PointScenario ps =
      io::point_scenario(grid, index, fmt::format("{}#point{}", grid.file, index));
  rec.scenario_text = ps.text;
  rec.axis_values = ps.axis_values;
  try {
    const training::TrainingSetup setup = resolve_train_point(ps);
    // The same simulation as `vramsim train` (two steps), without the timeline.
    const training::TrainingResult r =
        training::simulate_training(setup, {.num_steps = 2, .record_timeline = false});
    rec.status = r.fits ? kStatusOk : kStatusInfeasible;
    if (!r.fits) rec.reason = training_shortfall(r);
    rec.result = train_json(setup, r);
  } catch (const ConfigError& e) {
    ValidationReport report = e.report();
    ps.relocate(report);
    throw ConfigError(report);
  }
}

}  // namespace

PointRecord run_point(const io::SweepGrid& grid, std::size_t index) {
  PointRecord rec;
  rec.index = static_cast<std::int64_t>(index);
  try {
    switch (grid.kind) {
      case io::SweepKind::kServe: {
        const io::PointScenario ps =
            io::point_scenario(grid, index, fmt::format("{}#point{}", grid.file, index));
        rec.scenario_text = ps.text;
        rec.axis_values = ps.axis_values;
        try {
          run_serve_point(ps, rec);
        } catch (const ConfigError& e) {
          ValidationReport report = e.report();
          ps.relocate(report);
          throw ConfigError(report);
        }
        break;
      }
      case io::SweepKind::kTrain: run_train_point(grid, index, rec); break;
    }
  } catch (const ConfigError& e) {
    rec.status = kStatusError;
    rec.reason = describe(e.report());
    rec.result = nullptr;
  } catch (const std::exception& e) {
    rec.status = kStatusError;
    rec.reason = e.what();
    rec.result = nullptr;
  }
  return rec;
}

std::string point_scenario_text(const io::SweepGrid& grid, std::size_t index) {
  // The name does not appear in the text.
  return io::point_scenario(grid, index, "point").text;
}

void check_point_scenarios(const io::SweepGrid& grid) {
  // Types and unknown keys are properties of single values: the base alone and the base with
  // each distinct value set cover every point, however large the product.
  io::SweepGrid probe = grid;
  probe.points.clear();
  probe.points.push_back({{}, {grid.file, 0}});
  std::set<std::pair<std::string, std::string>> seen;
  for (const io::SweepPoint& p : grid.points) {
    for (const io::FieldValue& v : p.values) {
      if (seen.emplace(v.field, v.toml).second) probe.points.push_back({{v}, v.where});
    }
  }
  ValidationReport all;
  std::set<std::string> reported;  // one message per distinct problem
  for (std::size_t i = 0; i < probe.points.size(); ++i) {
    try {
      switch (grid.kind) {
        case io::SweepKind::kServe: {
          const io::PointScenario ps =
              io::point_scenario(probe, i, fmt::format("{}#check{}", grid.file, i));
          try {
            (void)load_serve_scenario_text(ps.text, ps.name, ps.base_dir);
          } catch (const ConfigError& e) {
            ValidationReport report = e.report();
            ps.relocate(report);
            throw ConfigError(report);
          }
          break;
        }
        case io::SweepKind::kTrain: {
          const io::PointScenario ps =
              io::point_scenario(probe, i, fmt::format("{}#check{}", grid.file, i));
          try {
            (void)load_train_scenario_text(ps.text, ps.name, ps.base_dir);
          } catch (const ConfigError& e) {
            ValidationReport report = e.report();
            ps.relocate(report);
            throw ConfigError(report);
          }
          break;
        }
      }
    } catch (const ConfigError& e) {
      for (const Problem& p : e.report().problems()) {
        if (reported.insert(format_problem(p)).second) all.error(p.field, p.message, p.where);
      }
    }
  }
  throw_if_errors(all);
}

std::string record_to_json(const PointRecord& r) {
  nlohmann::ordered_json j;
  j["index"] = r.index;
  j["status"] = r.status;
  j["reason"] = r.reason;
  j["axis_values"] = r.axis_values;
  j["scenario_text"] = r.scenario_text;
  j["result"] = r.result;
  return j.dump();
}

std::optional<PointRecord> record_from_json(std::string_view line, std::string* why) {
  const auto refuse = [why](std::string message) -> std::optional<PointRecord> {
    if (why != nullptr) *why = std::move(message);
    return std::nullopt;
  };
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(line);
  } catch (const nlohmann::json::exception&) {
    return refuse("not a JSON object (a line torn by a crash?)");
  }
  if (!j.is_object()) return refuse("not a JSON object");
  for (const char* key : {"index", "status", "reason", "axis_values", "scenario_text", "result"}) {
    if (!j.contains(key)) return refuse(fmt::format("has no \"{}\"", key));
  }
  const nlohmann::ordered_json& index = j["index"];
  // NOTE: is_number_integer is false for 1.5 and true; get<std::int64_t> would accept both.
  if (!index.is_number_integer() ||
      (index.is_number_unsigned() &&
       index.get<std::uint64_t>() >
           static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
    return refuse(fmt::format("\"index\" must be a non-negative integer, got {}", index.dump()));
  }
  PointRecord r;
  r.index = index.get<std::int64_t>();
  if (r.index < 0) {
    return refuse(fmt::format("\"index\" must be a non-negative integer, got {}", r.index));
  }
  const nlohmann::ordered_json& status = j["status"];
  const std::string status_text = status.is_string() ? status.get<std::string>() : std::string();
  if (status_text != kStatusOk && status_text != kStatusInfeasible &&
      status_text != kStatusError) {
    return refuse(fmt::format("\"status\" must be \"{}\", \"{}\" or \"{}\", got {}", kStatusOk,
                              kStatusInfeasible, kStatusError, status.dump()));
  }
  r.status = status_text;
  for (const char* key : {"reason", "scenario_text"}) {
    if (!j[key].is_string()) {
      return refuse(fmt::format("\"{}\" must be a string, got {}", key, j[key].dump()));
    }
  }
  r.reason = j["reason"].get<std::string>();
  r.scenario_text = j["scenario_text"].get<std::string>();
  const nlohmann::ordered_json& axes = j["axis_values"];
  if (!axes.is_array()) {
    return refuse(fmt::format("\"axis_values\" must be an array of strings, got {}", axes.dump()));
  }
  for (const nlohmann::ordered_json& v : axes) {
    if (!v.is_string()) {
      return refuse(fmt::format("\"axis_values\" must hold strings, got {}", v.dump()));
    }
    r.axis_values.push_back(v.get<std::string>());
  }
  r.result = j["result"];
  if (r.status == kStatusError ? !r.result.is_null() : !r.result.is_object()) {
    return refuse(fmt::format("\"result\" of a point with status \"{}\" must be {}, got {}",
                              r.status, r.status == kStatusError ? "null" : "an object",
                              r.result.is_object() ? "an object" : r.result.dump()));
  }
  return r;
}

std::string inputs_fingerprint(const nlohmann::ordered_json& resolved_inputs,
                               std::string_view extra) {
  std::string text;
  for (const auto& [path, entry] : resolved_inputs.items()) {
    text += path + "=" + (entry.contains("value") ? entry["value"].dump() : "null") + "\n";
  }
  text += extra;
  // FNV-1a, 64 bits (Fowler, Noll, Vo).
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : text) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

bool has_shape(const nlohmann::ordered_json& j, const ResultShape& shape) {
  if (!j.is_object()) return false;
  const auto all = [&j](const std::vector<const char*>& keys, auto&& is) {
    return std::all_of(keys.begin(), keys.end(),
                       [&](const char* k) { return j.contains(k) && is(j[k]); });
  };
  return all(shape.integers, [](const auto& v) { return v.is_number_integer(); }) &&
         all(shape.numbers, [](const auto& v) { return v.is_number(); }) &&
         all(shape.strings, [](const auto& v) { return v.is_string(); }) &&
         all(shape.booleans, [](const auto& v) { return v.is_boolean(); });
}

}  // namespace vramsim::run

