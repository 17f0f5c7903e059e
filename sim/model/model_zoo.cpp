#include "sim/model/model_zoo.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"
#include "sim/model/hf_config.hpp"

#ifndef VRAMSIM_SOURCE_ROOT
#error "VRAMSIM_SOURCE_ROOT must be defined by the build (sim/CMakeLists.txt)"
#endif

namespace vramsim::model {

namespace {

constexpr std::string_view kOrgSeparator = "__";

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string id_of_file(const std::filesystem::path& file) {
  std::string stem = file.stem().string();
  if (std::size_t at = stem.find(kOrgSeparator); at != std::string::npos) {
    stem.replace(at, kOrgSeparator.size(), "/");
  }
  return stem;
}


std::string closest_ids(std::string_view wanted, const std::vector<std::string>& ids) {
  const std::string w = lower(wanted);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const std::string& id : ids) {
    const std::string l = lower(id);
    // The name part alone ("llama-3.1-8b") matches ids whose org was left out or misspelt.
    const std::string name = l.substr(l.find('/') + 1);
    std::size_t d = std::min(edit_distance(w, l), edit_distance(w, name));
    if (l.find(w) != std::string::npos) d = 0;
    scored.emplace_back(d, id);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (std::size_t i = 0; i < scored.size() && i < 5; ++i) {
    if (!out.empty()) out += ", ";
    out += scored[i].second;
  }
  return out;
}

}  // namespace

std::filesystem::path default_zoo_dir() {
  return std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "scenarios" / "models";
}

std::vector<std::string> zoo_model_ids(const std::filesystem::path& zoo_dir) {
  std::vector<std::string> ids;
  std::error_code ec;
  if (!std::filesystem::is_directory(zoo_dir, ec)) return ids;
  for (const auto& entry : std::filesystem::directory_iterator(zoo_dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      ids.push_back(id_of_file(entry.path()));
    }
  }
  std::sort(ids.begin(), ids.end(), [](const std::string& a, const std::string& b) {
    const std::string la = lower(a);
    const std::string lb = lower(b);
    return la != lb ? la < lb : a < b;
  });
  return ids;
}

std::optional<std::filesystem::path> find_zoo_model(std::string_view id,
                                                    const std::filesystem::path& zoo_dir) {
  const std::string wanted = lower(id);
  std::error_code ec;
  if (!std::filesystem::is_directory(zoo_dir, ec)) return std::nullopt;
  for (const auto& entry : std::filesystem::directory_iterator(zoo_dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json" &&
        lower(id_of_file(entry.path())) == wanted) {
      return entry.path();
    }
  }
  return std::nullopt;
}

ModelSpec load_model(std::string_view id_or_path, const std::filesystem::path& zoo_dir) {
  const std::filesystem::path as_path{std::string(id_or_path)};
  std::error_code ec;
  if (std::filesystem::is_regular_file(as_path, ec) ||
      std::filesystem::is_regular_file(as_path / "config.json", ec)) {
    return load_hf_config(as_path);
  }
  if (std::optional<std::filesystem::path> file = find_zoo_model(id_or_path, zoo_dir)) {
    return load_hf_config(*file);
  }
  const std::vector<std::string> ids = zoo_model_ids(zoo_dir);
  throw ConfigError(
      "model",
      fmt::format("'{}' is neither a config.json file nor a model of the zoo ({} models in {}); "
                  "closest zoo ids: {}",
                  id_or_path, ids.size(), zoo_dir.string(),
                  ids.empty() ? std::string("(the zoo is empty)") : closest_ids(id_or_path, ids)));
}

}  // namespace vramsim::model
