// The Hugging Face hub cache as huggingface_hub lays it out, so that vramsim, vLLM and
// transformers share one copy of each downloaded file:
//
//   <cache>/models--ORG--NAME/
//     refs/<revision>              the commit sha the revision ("main") pointed to
//     blobs/<etag>                 file contents, named by the hub's ETag
//     snapshots/<sha>/config.json  -> ../../blobs/<etag> (a relative symlink)
//
// The cache folder is HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub
// (huggingface_hub/constants.py). Settings are read from the environment once, by the caller,
// through hub_settings_from_env(); everything below takes them explicitly.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace vramsim::model {

/// Where models are looked up and fetched from.
struct HubSettings {
  std::filesystem::path cache_dir;  // the hub cache folder (may not exist yet)
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT, no trailing '/'
  std::string token;                // HF_TOKEN; "" for anonymous access
  bool offline = false;             // HF_HUB_OFFLINE=1: never use the network
  /// Connection and whole-transfer limits of one HTTP request, so nothing hangs.
  std::chrono::seconds connect_timeout{10};
  std::chrono::seconds transfer_timeout{60};
};

/// Reads HF_HUB_CACHE, HF_HOME, HOME, HF_ENDPOINT, HF_TOKEN and HF_HUB_OFFLINE through `getenv`
/// (the process environment when called with std::getenv). HF_HUB_OFFLINE is on for "1",
/// "true", "yes" or "on" (any case), as huggingface_hub reads it.
HubSettings hub_settings_from(const std::function<const char*(const char*)>& getenv);
/// hub_settings_from(std::getenv).
HubSettings hub_settings_from_env();

/// "models--ORG--NAME" for the id "ORG/NAME" (huggingface_hub repo_folder_name).
std::string repo_folder_name(std::string_view repo_id);

/// Whether `id` has the shape of a hub repository id: "NAME" or "ORG/NAME", each part of
/// letters, digits, '-', '_' and '.', not starting with '.' or '-'.
bool is_hub_repo_id(std::string_view id);

/// Whether `revision` is a full 40-hex-digit commit sha.
bool is_commit_sha(std::string_view revision);

/// The snapshot folder of `repo_id` at `revision` in `cache_dir` when it holds a config.json:
/// a 40-hex revision names snapshots/<revision> directly, any other one is read from
/// refs/<revision>. nullopt when the cache has no such snapshot.
std::optional<std::filesystem::path> find_cached_snapshot(const std::filesystem::path& cache_dir,
                                                          std::string_view repo_id,
                                                          std::string_view revision);

/// Stores `contents` of `filename` (a path inside the repository) of `repo_id` at commit `sha`
/// in the cache: blobs/<etag> (etag "" : the file is written straight into the snapshot),
/// snapshots/<sha>/<filename> linked to it, and refs/<revision> = sha unless the revision is
/// the sha itself. Every file is written to a temporary name and renamed, so a concurrent
/// reader never sees half a file. Returns the snapshot path of the file. Throws ConfigError on
/// field "model" when the cache cannot be written.
std::filesystem::path store_in_cache(const std::filesystem::path& cache_dir,
                                     std::string_view repo_id, std::string_view revision,
                                     std::string_view sha, std::string_view filename,
                                     std::string_view etag, std::string_view contents);

/// Writes `contents` to `file` through a temporary file in the same folder and a rename.
/// Throws ConfigError on field `field` naming the file when it cannot.
void write_file_atomically(const std::filesystem::path& file, std::string_view contents,
                           const std::string& field);

}  // namespace vramsim::model
