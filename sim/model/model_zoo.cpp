#include "sim/model/model_zoo.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"
#include "sim/model/hf_config.hpp"
#include "sim/model/hub_client.hpp"

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
  const std::size_t at = stem.find(kOrgSeparator);
  if (at == std::string::npos) return stem;
  // NOTE: built by concatenation; GCC 12's -Wrestrict misfires on std::string::replace here.
  return stem.substr(0, at) + "/" + stem.substr(at + kOrgSeparator.size());
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

std::string_view to_string(ModelSource s) {
  switch (s) {
    case ModelSource::kLocalPath: return "local path";
    case ModelSource::kHubCache: return "hub cache";
    case ModelSource::kZoo: return "zoo";
    case ModelSource::kHub: return "hub";
  }
  VRAMSIM_UNREACHABLE("invalid ModelSource");
}

ResolvedModel resolve_model(std::string_view id_or_path, const std::filesystem::path& zoo_dir,
                            const ResolveOptions& options) {
  ResolvedModel m;
  m.hub = options.hub ? *options.hub : hub_settings_from_env();
  const std::string id(id_or_path);
  const std::filesystem::path as_path{id};
  std::error_code ec;
  std::vector<std::string> looked;
  if (std::filesystem::is_regular_file(as_path, ec)) {
    m.config = as_path;
    m.folder = as_path.has_parent_path() ? as_path.parent_path() : std::filesystem::path(".");
    return m;
  }
  if (std::filesystem::is_regular_file(as_path / "config.json", ec)) {
    m.config = as_path / "config.json";
    m.folder = as_path;
    return m;
  }
  looked.push_back(fmt::format("the path {} (no such file, nor a folder with a config.json)",
                               as_path.string()));
  if (options.revision.empty()) {
    throw ConfigError("model.revision", "must not be empty (a branch, tag or commit; default "
                                        "main)");
  }
  const bool hub_id = is_hub_repo_id(id);
  if (hub_id) {
    if (std::optional<std::filesystem::path> snapshot =
            find_cached_snapshot(m.hub.cache_dir, id, options.revision)) {
      m.config = *snapshot / "config.json";
      m.folder = *snapshot;
      m.source = ModelSource::kHubCache;
      m.repo_id = id;
      m.revision = options.revision;
      return m;
    }
    looked.push_back(fmt::format("the hub cache {} (no snapshot of revision '{}')",
                                 (m.hub.cache_dir / repo_folder_name(id)).string(),
                                 options.revision));
  }
  if (std::optional<std::filesystem::path> file = find_zoo_model(id_or_path, zoo_dir)) {
    m.config = *file;
    m.source = ModelSource::kZoo;
    m.repo_id = id_of_file(*file);
    return m;
  }
  const std::vector<std::string> ids = zoo_model_ids(zoo_dir);
  looked.push_back(fmt::format("the zoo {} ({} models)", zoo_dir.string(), ids.size()));
  const std::string closest =
      ids.empty() ? std::string("(the zoo is empty)") : closest_ids(id_or_path, ids);
  if (hub_id && !m.hub.offline) {
    try {
      HubClient client(m.hub);
      std::optional<std::filesystem::path> config =
          client.download(id, options.revision, "config.json");
      VRAMSIM_CHECK(config.has_value(), "download of config.json returned no file");
      // The side files a checkpoint's quantization may be described in; absent ones skipped.
      for (const char* side : {"quantization_config.json", "hf_quant_config.json"}) {
        client.download(id, options.revision, side);
      }
      m.config = *config;
      m.folder = config->parent_path();
      m.source = ModelSource::kHub;
      m.repo_id = id;
      m.revision = options.revision;
      return m;
    } catch (const ConfigError& e) {
      // The hub's answer first (gated: set HF_TOKEN; not found; unreachable), then what else
      // was tried, so a mistyped zoo id still gets its suggestions.
      std::string hub_says = e.report().problems().empty()
                                 ? std::string(e.what())
                                 : e.report().problems().front().message;
      throw ConfigError("model", fmt::format("{}; closest zoo ids: {}; also looked in: {}",
                                             hub_says, closest, fmt::join(looked, "; ")));
    }
  }
  if (hub_id) {
    looked.push_back("not the hub: HF_HUB_OFFLINE is set");
  } else {
    looked.push_back("not the hub: not a repository id of the form ORG/NAME");
  }
  throw ConfigError(
      "model",
      fmt::format("'{}' is neither a config.json file nor a model of the zoo; closest zoo ids: "
                  "{}; looked in: {}",
                  id_or_path, closest, fmt::join(looked, "; ")));
}

ModelSpec load_resolved(const ResolvedModel& m) {
  ModelSpec spec = load_hf_config(m.config);
  // Without _name_or_path the reader names the model after the config's folder: for a cache
  // snapshot that is the commit sha, which says nothing; the hub id does.
  if (m.source == ModelSource::kHubCache || m.source == ModelSource::kHub) {
    if (spec.name == m.config.parent_path().filename().string()) spec.name = m.repo_id;
  }
  return spec;
}

ModelSpec load_model(std::string_view id_or_path, const std::filesystem::path& zoo_dir,
                     const ResolveOptions& options) {
  return load_resolved(resolve_model(id_or_path, zoo_dir, options));
}

}  // namespace vramsim::model
