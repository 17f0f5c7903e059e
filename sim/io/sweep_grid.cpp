#include "sim/io/sweep_grid.hpp"

#include "sim/core/text.hpp"
#include "sim/io/toml_reader.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

namespace vramsim::io {

namespace {

// Points beyond this are surely a mistake in the grid (and would not finish anyway).
constexpr std::size_t kMaxPoints = 1'000'000;

std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

std::string literal(const toml::node& n) {
  std::ostringstream out;
  out << toml::toml_formatter{n};
  return out.str();
}

std::string display(const toml::node& n) {
  if (const auto* s = n.as_string()) return s->get();
  return literal(n);
}

using Leaf = std::pair<std::string, const toml::node*>;

/// The values below `t` with their dotted paths; tables (inline or not) are descended into.
void flatten(const toml::table& t, const std::string& prefix, std::vector<Leaf>& out) {
  for (auto&& [key, child] : t) {
    const std::string path = prefix.empty() ? std::string(key.str()) : join_path(prefix, key.str());
    if (const toml::table* sub = child.as_table()) {
      flatten(*sub, path, out);
    } else {
      out.emplace_back(path, &child);
    }
  }
}

/// flatten() in the order the file writes the values.
std::vector<Leaf> leaves_in_file_order(const toml::table& t) {
  std::vector<Leaf> out;
  flatten(t, "", out);
  std::stable_sort(out.begin(), out.end(), [](const Leaf& a, const Leaf& b) {
    const toml::source_position pa = a.second->source().begin;
    const toml::source_position pb = b.second->source().begin;
    return std::tie(pa.line, pa.column) < std::tie(pb.line, pb.column);
  });
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

class GridChecker {
 public:
  GridChecker(std::string file, SweepKind kind, std::vector<std::string> valid)
      : file_(std::move(file)), kind_(kind), valid_(std::move(valid)) {}

  SourceLocation at(const toml::node& n) const { return {file_, line_of(n)}; }

  /// True when `field` is a scenario field; records a problem naming `where_field` otherwise.
  bool field(const std::string& field, const std::string& where_field, const toml::node& n) {
    if (std::binary_search(valid_.begin(), valid_.end(), field)) return true;
    // The nearest field within three edits; among equals, the longest common prefix.
    std::string near;
    std::pair<std::size_t, std::size_t> best{4, 0};
    for (const std::string& v : valid_) {
      const auto mismatch = std::mismatch(field.begin(), field.end(), v.begin(), v.end());
      const std::pair<std::size_t, std::size_t> score{
          edit_distance(field, v),
          field.size() - static_cast<std::size_t>(mismatch.first - field.begin())};
      if (score < best) {
        best = score;
        near = v;
      }
    }
    report.error(where_field,
                 fmt::format("\"{}\" is not a field of {} scenarios{}; valid fields: {}", field,
                             to_string(kind_),
                             near.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", near),
                             join(valid_)),
                 at(n));
    return false;
  }

  /// A value a point may set: a string, number or boolean.
  std::optional<FieldValue> value(const std::string& field, const std::string& where_field,
                                  const toml::node& n) {
    if (n.is_table() || n.is_array()) {
      report.error(where_field, "expected a string, number or boolean", at(n));
      return std::nullopt;
    }
    return FieldValue{field, literal(n), display(n), at(n)};
  }

  /// Records a field set twice in one table (e.g. "engine.tp" and [engine] tp).
  bool once(std::map<std::string, int>& seen, const std::string& field,
            const std::string& where_field, const toml::node& n) {
    const auto [it, fresh] = seen.emplace(field, line_of(n));
    if (!fresh) {
      report.error(where_field, fmt::format("\"{}\" is set twice (also on line {})", field,
                                            it->second),
                   at(n));
    }
    return fresh;
  }

  ValidationReport report;

 private:
  std::string file_;
  SweepKind kind_;
  std::vector<std::string> valid_;
};

struct Axis {
  std::string field;
  std::vector<FieldValue> values;
};

void read_axes(const toml::table& grid, GridChecker& check, std::vector<Axis>& axes) {
  std::map<std::string, int> seen;
  for (const auto& [field, node] : leaves_in_file_order(grid)) {
    const std::string where = "grid." + field;
    const bool ok = check.field(field, where, *node) && check.once(seen, field, where, *node);
    const toml::array* list = node->as_array();
    if (list == nullptr || list->empty()) {
      check.report.error(where, "an axis takes a non-empty list of values, e.g. [1, 2]",
                         check.at(*node));
      continue;
    }
    Axis axis{field, {}};
    for (const toml::node& element : *list) {
      if (auto v = check.value(field, where, element)) axis.values.push_back(std::move(*v));
    }
    if (ok && axis.values.size() == list->size()) axes.push_back(std::move(axis));
  }
}

void read_points(const toml::array& points, GridChecker& check, SweepGrid& g) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string where = fmt::format("points[{}]", i);
    const toml::table* entry = points.get(i)->as_table();
    if (entry == nullptr) {
      check.report.error(where, "expected a table ([[points]])", check.at(*points.get(i)));
      continue;
    }
    SweepPoint p{{}, check.at(*entry)};
    std::map<std::string, int> seen;
    for (const auto& [field, node] : leaves_in_file_order(*entry)) {
      const std::string at = join_path(where, field);
      if (!check.field(field, at, *node) || !check.once(seen, field, at, *node)) continue;
      if (auto v = check.value(field, at, *node)) p.values.push_back(std::move(*v));
    }
    g.points.push_back(std::move(p));
  }
}

/// The Cartesian product of the axes, first axis slowest, placed before any listed point.
void expand_product(const std::vector<Axis>& axes, SourceLocation where, GridChecker& check,
                    SweepGrid& g) {
  if (axes.empty()) return;
  std::size_t count = 1;
  for (const Axis& a : axes) {
    if (count > kMaxPoints / a.values.size()) {
      check.report.error("grid", fmt::format("the grid has more than {} points", kMaxPoints),
                         where);
      return;
    }
    count *= a.values.size();
  }
  std::vector<SweepPoint> product(count);
  for (std::size_t i = 0; i < count; ++i) {
    product[i].where = where;
    std::size_t rest = i;
    std::vector<FieldValue> values(axes.size());
    for (std::size_t k = axes.size(); k-- > 0;) {
      values[k] = axes[k].values[rest % axes[k].values.size()];
      rest /= axes[k].values.size();
    }
    product[i].values = std::move(values);
  }
  g.points.insert(g.points.begin(), product.begin(), product.end());
}

std::vector<std::string> split_field(const std::string& field) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot = field.find('.'); dot != std::string::npos;
       dot = field.find('.', start)) {
    parts.push_back(field.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(field.substr(start));
  return parts;
}

bool is_path_field(const std::vector<std::string>& path_fields, const std::string& field) {
  return std::find(path_fields.begin(), path_fields.end(), field) != path_fields.end();
}

/// `value` made absolute relative to the folder of `file`, when it is a relative path.
std::string absolute_from(const std::string& value, const std::string& file) {
  const std::filesystem::path p(value);
  if (value.empty() || p.is_absolute()) return value;
  return std::filesystem::absolute(std::filesystem::path(file).parent_path() / p)
      .lexically_normal()
      .string();
}

/// Sets `v` in `root`, creating tables on the way. False when a non-table is in the way.
bool set_field(toml::table& root, const FieldValue& v,
               const std::vector<std::string>& path_fields) {
  toml::table parsed = toml::parse(std::string_view("v = " + v.toml), std::string_view("value"));
  toml::node& node = *parsed.get("v");
  if (is_path_field(path_fields, v.field) && node.is_string()) {
    node.as_string()->get() = absolute_from(node.as_string()->get(), v.where.file);
  }
  const std::vector<std::string> parts = split_field(v.field);
  toml::table* t = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* next = t->get(parts[i]);
    if (next == nullptr) next = &t->insert_or_assign(parts[i], toml::table{}).first->second;
    t = next->as_table();
    if (t == nullptr) return false;
  }
  node.visit([&](auto&& value) { t->insert_or_assign(parts.back(), value); });
  return true;
}

}  // namespace

std::string_view to_string(SweepKind kind) { return name_of(kSweepKinds, kind); }
std::optional<SweepKind> sweep_kind_from_string(std::string_view text) {
  return parse_name(kSweepKinds, text);
}

std::vector<std::string> sweep_fields(SweepKind kind, const ScenarioFields& serving,
                                      const ScenarioFields& training) {
  std::vector<std::string> fields;
  switch (kind) {
    case SweepKind::kServe: fields = serving.fields; break;
    case SweepKind::kTrain: fields = training.fields; break;
  }
  // A point's description would be the grid's; it is no field to vary.
  std::erase(fields, std::string("description"));
  std::sort(fields.begin(), fields.end());
  return fields;
}

SweepGrid load_sweep_grid(const std::filesystem::path& file, const ScenarioFields& serving,
                          const ScenarioFields& training) {
  TomlReader r = TomlReader::from_file(file);
  SweepGrid g;
  g.file = file.string();
  g.text = slurp(file);
  g.description = r.optional_string("description").value_or("");
  const std::optional<std::string> command = r.required_string("command");
  const std::optional<std::string> scenario = r.optional_string("scenario");
  r.optional_table("base");
  r.optional_table("grid");
  r.array_size("points");
  for (const char* section : {"base", "grid", "points"}) r.mark_read(section);
  if (const std::optional<SweepKind> kind = command ? sweep_kind_from_string(*command)
                                                      : std::nullopt) {
    g.kind = *kind;
  } else if (command) {
    r.error("command", fmt::format("unknown command '{}'; valid: {}", *command,
                                   names_list<kSweepKinds>()));
  }
  if (scenario) {
    const std::string path = absolute_from(*scenario, g.file);
    if (!std::filesystem::is_regular_file(path)) {
      r.error("scenario", fmt::format("no such scenario file: {}", path));
    } else {
      g.base_file = std::filesystem::path(*scenario).is_absolute()
                        ? *scenario
                        : (file.parent_path() / *scenario).lexically_normal().string();
      g.base_text = slurp(path);
      try {
        (void)toml::parse(std::string_view(g.base_text), std::string_view(g.base_file));
      } catch (const toml::parse_error& e) {
        throw ConfigError("", fmt::format("TOML syntax error at column {}: {}",
                                          e.source().begin.column, e.description()),
                          SourceLocation{g.base_file, static_cast<int>(e.source().begin.line)});
      }
    }
  }
  r.finish();  // the command is known from here on

  const toml::table root = toml::parse(std::string_view(g.text), std::string_view(g.file));
  switch (g.kind) {
    case SweepKind::kServe: g.path_fields = serving.path_fields; break;
    case SweepKind::kTrain: g.path_fields = training.path_fields; break;
  }
  GridChecker check(g.file, g.kind, sweep_fields(g.kind, serving, training));
  if (const toml::table* base = root.get_as<toml::table>("base")) {
    std::map<std::string, int> seen;
    for (const auto& [field, node] : leaves_in_file_order(*base)) {
      const std::string where = "base." + field;
      if (!check.field(field, where, *node) || !check.once(seen, field, where, *node)) continue;
      if (auto v = check.value(field, where, *node)) g.base_values.push_back(std::move(*v));
    }
  }
  std::vector<Axis> axes;
  SourceLocation grid_at{g.file, 0};
  if (const toml::table* grid = root.get_as<toml::table>("grid")) {
    grid_at = check.at(*grid);
    read_axes(*grid, check, axes);
  }
  if (const toml::array* points = root.get_as<toml::array>("points")) {
    read_points(*points, check, g);
  }
  expand_product(axes, grid_at, check, g);
  if (check.report.ok() && g.points.empty()) {
    check.report.error("grid", "no points: give [grid] axes (lists of values) or [[points]]",
                       {g.file, 0});
  }
  throw_if_errors(check.report);
  for (const Axis& a : axes) g.axes.push_back(a.field);
  for (const SweepPoint& p : g.points) {
    for (const FieldValue& v : p.values) {
      if (std::find(g.axes.begin(), g.axes.end(), v.field) == g.axes.end()) {
        g.axes.push_back(v.field);
      }
    }
  }
  return g;
}

SourceLocation PointScenario::origin(const SourceLocation& at) const {
  if (at.file != name) return at;
  if (at.line >= 1 && static_cast<std::size_t>(at.line) <= line_origins.size()) {
    return line_origins[static_cast<std::size_t>(at.line) - 1];
  }
  return point_location;
}

void PointScenario::relocate(ValidationReport& report) const {
  ValidationReport moved;
  for (const Problem& p : report.problems()) moved.error(p.field, p.message, origin(p.where));
  report = moved;
}

PointScenario point_scenario(const SweepGrid& grid, std::size_t index, std::string name) {
  const SweepPoint& point = grid.points.at(index);
  PointScenario ps;
  ps.name = std::move(name);
  ps.point_location = point.where;
  ps.base_dir = std::filesystem::absolute(
                    std::filesystem::path(grid.base_file.empty() ? grid.file : grid.base_file))
                    .parent_path();
  toml::table merged;
  std::map<std::string, SourceLocation> origins;  // field or table path -> where it is written
  if (!grid.base_file.empty()) {
    merged = toml::parse(std::string_view(grid.base_text), std::string_view(grid.base_file));
    for (const auto& [field, node] : leaves_in_file_order(merged)) {
      origins[field] = {grid.base_file, line_of(*node)};
    }
    for (auto&& [key, child] : merged) {
      if (child.is_table()) origins[std::string(key.str())] = {grid.base_file, line_of(child)};
    }
    for (const std::string& field : grid.path_fields) {  // relative to the base file, as loaded
      if (auto* text = merged.at_path(field).as_string()) {
        text->get() = absolute_from(text->get(), grid.base_file);
      }
    }
  }
  ValidationReport report;
  const auto apply = [&](const FieldValue& v) {
    if (set_field(merged, v, grid.path_fields)) {
      origins[v.field] = v.where;
    } else {
      report.error(v.field, "cannot be set: the base scenario has a value where a table is needed",
                   v.where);
    }
  };
  for (const FieldValue& v : grid.base_values) apply(v);
  for (const FieldValue& v : point.values) apply(v);
  throw_if_errors(report);

  ps.text = literal(merged) + "\n";
  const toml::table reread = toml::parse(std::string_view(ps.text), std::string_view(ps.name));
  ps.line_origins.assign(static_cast<std::size_t>(std::count(ps.text.begin(), ps.text.end(), '\n')),
                         point.where);
  const auto map_line = [&](const toml::node& n, const std::string& path) {
    const int line = line_of(n);
    const auto it = origins.find(path);
    if (line >= 1 && static_cast<std::size_t>(line) <= ps.line_origins.size() &&
        it != origins.end()) {
      ps.line_origins[static_cast<std::size_t>(line) - 1] = it->second;
    }
  };
  for (const auto& [field, node] : leaves_in_file_order(reread)) map_line(*node, field);
  for (auto&& [key, child] : reread) {
    if (child.is_table()) map_line(child, std::string(key.str()));
  }
  for (const std::string& axis : grid.axes) {
    const auto set = std::find_if(point.values.begin(), point.values.end(),
                                  [&](const FieldValue& v) { return v.field == axis; });
    const toml::node* n = merged.at_path(axis).node();
    ps.axis_values.push_back(set != point.values.end() ? set->display
                             : n == nullptr            ? ""
                                                       : display(*n));
  }
  return ps;
}

}  // namespace vramsim::io
