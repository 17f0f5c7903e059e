// The model zoo: scenarios/models/<org>__<name>.json, one Hugging Face config.json per model,
// addressed by its Hugging Face id ("meta-llama/Llama-3.1-8B-Instruct", case-insensitive); and
// resolving a model argument the way vLLM and transformers do:
//
//   1. a local path: a config.json, or a folder holding one (as save_pretrained writes it);
//   2. the local hub cache (hf_cache.hpp): models--ORG--NAME/refs/<revision> -> snapshots/<sha>;
//   3. the zoo;
//   4. the hub itself (hub_client.hpp), unless HF_HUB_OFFLINE, storing into the cache.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/model/hf_cache.hpp"
#include "sim/model/model_spec.hpp"

namespace vramsim::model {

/// scenarios/models of the source tree this library was built from.
std::filesystem::path default_zoo_dir();

/// The Hugging Face ids of the zoo, sorted case-insensitively. A file "org__name.json" is the
/// id "org/name". Empty when the folder does not exist.
std::vector<std::string> zoo_model_ids(const std::filesystem::path& zoo_dir);

/// The zoo file of `id` (matched case-insensitively), or nullopt when the zoo has no such id.
std::optional<std::filesystem::path> find_zoo_model(std::string_view id,
                                                    const std::filesystem::path& zoo_dir);

/// How a model argument is resolved.
struct ResolveOptions {
  /// --revision / model.revision: a branch, tag or 40-hex commit of the hub repository.
  std::string revision = "main";
  /// Cache folder, endpoint, token, offline; nullopt: hub_settings_from_env().
  std::optional<HubSettings> hub;
};

/// Where a model's config.json was found.
enum class ModelSource { kLocalPath, kHubCache, kZoo, kHub };
std::string_view to_string(ModelSource s);

struct ResolvedModel {
  std::filesystem::path config;  // the config.json to read
  /// The folder holding the checkpoint's other files (safetensors headers): the local folder
  /// or the cache snapshot; nullopt for a zoo model.
  std::optional<std::filesystem::path> folder;
  ModelSource source = ModelSource::kLocalPath;
  std::string repo_id;   // the hub id ("" for a local path)
  std::string revision;  // as asked ("main"); "" for a local path or the zoo
  HubSettings hub;       // the settings it was resolved with
};

/// Resolves `id_or_path` in the order above. Throws ConfigError on field "model" when nothing
/// matches: the message lists the closest zoo ids and every folder and URL it looked in; and
/// from the hub client when the repository is gated (set HF_TOKEN), missing or unreachable.
ResolvedModel resolve_model(std::string_view id_or_path, const std::filesystem::path& zoo_dir,
                            const ResolveOptions& options = {});

/// Reads the config.json of `m`. The model's name is `_name_or_path` when the config has one,
/// else the hub id, never a snapshot's commit sha.
ModelSpec load_resolved(const ResolvedModel& m);

/// load_resolved(resolve_model(id_or_path, zoo_dir, options)).
ModelSpec load_model(std::string_view id_or_path, const std::filesystem::path& zoo_dir,
                     const ResolveOptions& options = {});

}  // namespace vramsim::model
