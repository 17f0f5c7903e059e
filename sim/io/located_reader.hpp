// Reading scenario-style TOML files into Located<T> fields (a value with its field path and
// file:line), shared by the serving and training scenario loaders.
#pragma once

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "sim/io/scenario_loader.hpp"
#include "sim/io/toml_reader.hpp"

namespace vramsim::io {

/// Sets `out` to the value at `path` (read with `get`, which records type problems in `r`),
/// with its field and location; leaves it unset when the key is absent.
template <class T, class Getter>
void read_into(TomlReader& r, std::string_view path, std::optional<Located<T>>& out, Getter get) {
  if (auto v = get(r, path)) out = Located<T>{*v, std::string(path), r.location(path)};
}

/// The whole file, stored verbatim in results files (empty if it cannot be read: the TOML
/// reader has already reported that).
inline std::string read_file_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace vramsim::io
