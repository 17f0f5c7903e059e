#include "sim/io/toml_reader.hpp"

#include "sim/core/text.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>
#include <utility>

namespace vramsim::io {

namespace {

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

/// "an integer (80)", "a string (\"80 GB\")", "a table": what the file holds, for messages.
std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return fmt::format("a string (\"{}\")", n.as_string()->get());
    case toml::node_type::integer:
      return fmt::format("an integer ({})", n.as_integer()->get());
    case toml::node_type::floating_point:
      return fmt::format("a float ({})", n.as_floating_point()->get());
    case toml::node_type::boolean:
      return fmt::format("a boolean ({})", n.as_boolean()->get());
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: return "nothing";
  }
  return "an unknown value";
}

std::optional<std::string> as_string(const toml::node& n) {
  if (const auto* v = n.as_string()) return v->get();
  return std::nullopt;
}
std::optional<std::int64_t> as_int64(const toml::node& n) {
  if (const auto* v = n.as_integer()) return v->get();
  return std::nullopt;
}
std::optional<double> as_double(const toml::node& n) {
  if (const auto* v = n.as_floating_point()) return v->get();
  if (const auto* v = n.as_integer()) return static_cast<double>(v->get());
  return std::nullopt;
}
std::optional<bool> as_bool(const toml::node& n) {
  if (const auto* v = n.as_boolean()) return v->get();
  return std::nullopt;
}

/// Position of the separator before the last component of "a.b[2].c" (npos for a top-level key).
std::size_t last_separator(std::string_view path) { return path.find_last_of(".["); }

std::string_view parent_of(std::string_view path) {
  const std::size_t pos = last_separator(path);
  return pos == std::string_view::npos ? std::string_view() : path.substr(0, pos);
}

std::string_view last_key(std::string_view path) {
  const std::size_t pos = last_separator(path);
  if (pos == std::string_view::npos) return path;
  return path[pos] == '.' ? path.substr(pos + 1) : path.substr(pos);
}


}  // namespace

struct TomlReader::Impl {
  std::string source_name;
  toml::table root;
  ValidationReport report;
  std::set<std::string, std::less<>> read;   // consumed subtrees
  std::set<std::string, std::less<>> known;  // every path a loader asked for
  bool unread_reported = false;

  const toml::node* find(std::string_view path) const {
    if (path.empty()) return &root;
    return root.at_path(path).node();
  }

  SourceLocation location(std::string_view path) const {
    // The root table has no line of its own: a missing top-level key is reported at the file.
    for (std::string_view p = path; !p.empty(); p = parent_of(p)) {
      const toml::node* n = find(p);
      if (n != nullptr && line_of(*n) > 0) return {source_name, line_of(*n)};
    }
    return {source_name, 0};
  }

  void problem(std::string_view path, std::string message) {
    report.error(std::string(path), std::move(message), location(path));
  }

  void touch(std::string_view path) {
    read.emplace(path);
    known.emplace(path);
  }

  bool is_read(const std::string& path) const {
    if (read.count(path) != 0) return true;
    for (std::size_t pos = path.find_first_of(".["); pos != std::string::npos;
         pos = path.find_first_of(".[", pos + 1)) {
      if (read.count(std::string_view(path).substr(0, pos)) != 0) return true;
    }
    return read.count(std::string_view()) != 0;
  }

  /// Collects the values below `n` that no accessor consumed.
  void collect_unread(const toml::node& n, const std::string& path,
                      std::vector<std::pair<std::string, const toml::node*>>& out) const {
    if (!path.empty() && is_read(path)) return;
    if (const toml::table* t = n.as_table()) {
      for (auto&& [key, child] : *t) collect_unread(child, join_path(path, key.str()), out);
      return;
    }
    const toml::array* a = n.as_array();
    if (a != nullptr && !a->empty() && a->is_array_of_tables()) {
      for (std::size_t i = 0; i < a->size(); ++i) {
        collect_unread(*a->get(i), fmt::format("{}[{}]", path, i), out);
      }
      return;
    }
    out.emplace_back(path, &n);
  }

  /// The known path closest to `path` (within two edits), for "did you mean".
  std::optional<std::string> suggestion(const std::string& path) const {
    std::optional<std::string> best;
    std::size_t best_distance = 3;
    for (const std::string& candidate : known) {
      std::size_t d = edit_distance(path, candidate);
      // A right key in the wrong table ("total" at the top instead of in [memory]).
      if (last_key(candidate) == last_key(path)) d = std::min<std::size_t>(d, 2);
      if (d < best_distance && d < path.size()) {
        best_distance = d;
        best = candidate;
      }
    }
    return best;
  }

  template <typename T, typename Extract>
  std::optional<T> scalar(std::string_view path, bool required, std::string_view expected,
                          Extract extract) {
    touch(path);
    const toml::node* n = find(path);
    if (n == nullptr) {
      if (required) problem(path, fmt::format("missing required field (expected {})", expected));
      return std::nullopt;
    }
    std::optional<T> value = extract(*n);
    if (!value) problem(path, fmt::format("expected {}, got {}", expected, describe(*n)));
    return value;
  }

  template <typename T, typename Extract>
  std::optional<std::vector<T>> array(std::string_view path, bool required,
                                      std::string_view expected_element, Extract extract) {
    touch(path);
    const toml::node* n = find(path);
    if (n == nullptr) {
      if (required) {
        problem(path, fmt::format("missing required field (expected an array of {})",
                                  expected_element));
      }
      return std::nullopt;
    }
    const toml::array* a = n->as_array();
    if (a == nullptr) {
      problem(path, fmt::format("expected an array of {}, got {}", expected_element, describe(*n)));
      return std::nullopt;
    }
    std::vector<T> out;
    bool ok = true;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& element = *a->get(i);
      if (std::optional<T> v = extract(element)) {
        out.push_back(std::move(*v));
      } else {
        ok = false;
        report.error(fmt::format("{}[{}]", path, i),
                     fmt::format("expected {}, got {}", expected_element, describe(element)),
                     {source_name, line_of(element) > 0 ? line_of(element) : line_of(*n)});
      }
    }
    if (!ok) return std::nullopt;
    return out;
  }

  template <typename T>
  std::optional<T> quantity(std::string_view path, bool required, std::string_view what,
                            std::string_view example, T (*parse)(std::string_view)) {
    touch(path);
    const toml::node* n = find(path);
    if (n == nullptr) {
      if (required) {
        problem(path, fmt::format("missing required field (expected a {} such as \"{}\")", what,
                                  example));
      }
      return std::nullopt;
    }
    if (n->is_integer() || n->is_floating_point()) {
      const std::string number = n->is_integer()
                                     ? fmt::format("{}", n->as_integer()->get())
                                     : fmt::format("{}", n->as_floating_point()->get());
      problem(path, fmt::format("the bare number {} has no unit; write the {} as a string with "
                                "its unit, e.g. \"{}\"",
                                number, what, example));
      return std::nullopt;
    }
    const toml::value<std::string>* text = n->as_string();
    if (text == nullptr) {
      problem(path, fmt::format("expected a {} such as \"{}\", got {}", what, example,
                                describe(*n)));
      return std::nullopt;
    }
    try {
      return parse(text->get());
    } catch (const UnitError& e) {
      problem(path, e.what());
      return std::nullopt;
    }
  }
};

TomlReader::TomlReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TomlReader::TomlReader(TomlReader&&) noexcept = default;
TomlReader& TomlReader::operator=(TomlReader&&) noexcept = default;
TomlReader::~TomlReader() = default;

TomlReader TomlReader::from_string(std::string_view text, std::string source_name) {
  auto impl = std::make_unique<Impl>();
  impl->source_name = std::move(source_name);
  try {
    impl->root = toml::parse(text, std::string_view(impl->source_name));
  } catch (const toml::parse_error& e) {
    const toml::source_position begin = e.source().begin;
    throw ConfigError("",
                      fmt::format("TOML syntax error at column {}: {}", begin.column,
                                  e.description()),
                      SourceLocation{impl->source_name, static_cast<int>(begin.line)});
  }
  return TomlReader(std::move(impl));
}

TomlReader TomlReader::from_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    throw ConfigError("", "no such file", SourceLocation{name, 0});
  }
  if (!std::filesystem::is_regular_file(file, ec)) {
    throw ConfigError("", "not a regular file", SourceLocation{name, 0});
  }
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    throw ConfigError("", "the file could not be read", SourceLocation{name, 0});
  }
  return from_string(text.str(), name);
}

const std::string& TomlReader::source_name() const { return impl_->source_name; }

std::optional<std::string> TomlReader::required_string(std::string_view path) {
  return impl_->scalar<std::string>(path, true, "a string", as_string);
}
std::optional<std::string> TomlReader::optional_string(std::string_view path) {
  return impl_->scalar<std::string>(path, false, "a string", as_string);
}
std::optional<std::int64_t> TomlReader::required_int64(std::string_view path) {
  return impl_->scalar<std::int64_t>(path, true, "an integer", as_int64);
}
std::optional<std::int64_t> TomlReader::optional_int64(std::string_view path) {
  return impl_->scalar<std::int64_t>(path, false, "an integer", as_int64);
}
std::optional<double> TomlReader::required_double(std::string_view path) {
  return impl_->scalar<double>(path, true, "a number", as_double);
}
std::optional<double> TomlReader::optional_double(std::string_view path) {
  return impl_->scalar<double>(path, false, "a number", as_double);
}
std::optional<bool> TomlReader::required_bool(std::string_view path) {
  return impl_->scalar<bool>(path, true, "true or false", as_bool);
}
std::optional<bool> TomlReader::optional_bool(std::string_view path) {
  return impl_->scalar<bool>(path, false, "true or false", as_bool);
}

std::optional<std::vector<std::string>> TomlReader::required_string_array(std::string_view path) {
  return impl_->array<std::string>(path, true, "strings", as_string);
}
std::optional<std::vector<std::string>> TomlReader::optional_string_array(std::string_view path) {
  return impl_->array<std::string>(path, false, "strings", as_string);
}
std::optional<std::vector<std::int64_t>> TomlReader::required_int64_array(std::string_view path) {
  return impl_->array<std::int64_t>(path, true, "integers", as_int64);
}
std::optional<std::vector<std::int64_t>> TomlReader::optional_int64_array(std::string_view path) {
  return impl_->array<std::int64_t>(path, false, "integers", as_int64);
}
std::optional<std::vector<double>> TomlReader::required_double_array(std::string_view path) {
  return impl_->array<double>(path, true, "numbers", as_double);
}
std::optional<std::vector<double>> TomlReader::optional_double_array(std::string_view path) {
  return impl_->array<double>(path, false, "numbers", as_double);
}

std::optional<Bytes> TomlReader::required_bytes(std::string_view path) {
  return impl_->quantity<Bytes>(path, true, "size", "80GiB", parse_bytes);
}
std::optional<Bytes> TomlReader::optional_bytes(std::string_view path) {
  return impl_->quantity<Bytes>(path, false, "size", "80GiB", parse_bytes);
}
std::optional<Bandwidth> TomlReader::required_bandwidth(std::string_view path) {
  return impl_->quantity<Bandwidth>(path, true, "bandwidth", "450GB/s", parse_bandwidth);
}
std::optional<Bandwidth> TomlReader::optional_bandwidth(std::string_view path) {
  return impl_->quantity<Bandwidth>(path, false, "bandwidth", "450GB/s", parse_bandwidth);
}
std::optional<FlopRate> TomlReader::required_flop_rate(std::string_view path) {
  return impl_->quantity<FlopRate>(path, true, "FLOP rate", "989TFLOPS", parse_flop_rate);
}
std::optional<FlopRate> TomlReader::optional_flop_rate(std::string_view path) {
  return impl_->quantity<FlopRate>(path, false, "FLOP rate", "989TFLOPS", parse_flop_rate);
}
std::optional<Duration> TomlReader::required_duration(std::string_view path) {
  return impl_->quantity<Duration>(path, true, "duration", "5us", parse_duration);
}
std::optional<Duration> TomlReader::optional_duration(std::string_view path) {
  return impl_->quantity<Duration>(path, false, "duration", "5us", parse_duration);
}

bool TomlReader::has(std::string_view path) const { return impl_->find(path) != nullptr; }

bool TomlReader::required_table(std::string_view path) {
  impl_->known.emplace(path);
  const toml::node* n = impl_->find(path);
  if (n == nullptr) {
    impl_->problem(path, "missing required table");
    return false;
  }
  if (!n->is_table()) {
    impl_->problem(path, fmt::format("expected a table, got {}", describe(*n)));
    return false;
  }
  return true;
}

bool TomlReader::optional_table(std::string_view path) {
  impl_->known.emplace(path);
  const toml::node* n = impl_->find(path);
  if (n == nullptr) return false;
  if (!n->is_table()) {
    impl_->problem(path, fmt::format("expected a table, got {}", describe(*n)));
    return false;
  }
  return true;
}

std::vector<std::string> TomlReader::table_keys(std::string_view path) const {
  std::vector<std::string> keys;
  const toml::node* n = impl_->find(path);
  if (n == nullptr || !n->is_table()) return keys;
  for (auto&& [key, child] : *n->as_table()) keys.emplace_back(key.str());
  return keys;
}

std::size_t TomlReader::array_size(std::string_view path) {
  impl_->known.emplace(path);
  const toml::node* n = impl_->find(path);
  if (n == nullptr) return 0;
  if (const toml::array* a = n->as_array()) return a->size();
  impl_->problem(path, fmt::format("expected an array, got {}", describe(*n)));
  return 0;
}

void TomlReader::mark_read(std::string_view path) { impl_->touch(path); }

std::vector<std::string> TomlReader::known_paths() const {
  return {impl_->known.begin(), impl_->known.end()};
}

SourceLocation TomlReader::location(std::string_view path) const {
  return impl_->location(path);
}

void TomlReader::error(std::string_view path, std::string message) {
  impl_->problem(path, std::move(message));
}

void TomlReader::report_unread_keys() {
  if (impl_->unread_reported) return;
  impl_->unread_reported = true;
  std::vector<std::pair<std::string, const toml::node*>> unread;
  impl_->collect_unread(impl_->root, "", unread);
  for (const auto& [path, node] : unread) {
    std::string message = "unknown key";
    if (std::optional<std::string> near = impl_->suggestion(path)) {
      message += fmt::format("; did you mean \"{}\"?", *near);
    }
    impl_->report.error(path, std::move(message), {impl_->source_name, line_of(*node)});
  }
}

const ValidationReport& TomlReader::report() const { return impl_->report; }

void TomlReader::finish() {
  report_unread_keys();
  throw_if_errors(impl_->report);
}

std::string join_path(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  if (!key.empty() && key.front() == '[') return fmt::format("{}{}", parent, key);
  return fmt::format("{}.{}", parent, key);
}

std::string read_file_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace vramsim::io
