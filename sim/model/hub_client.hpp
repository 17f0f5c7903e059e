// Fetching files of a model repository from the Hugging Face hub (or a mirror at HF_ENDPOINT)
// over HTTPS with libcurl, into the hub cache (hf_cache.hpp) so vLLM and transformers reuse it.
//
//   GET {endpoint}/{org}/{name}/resolve/{revision}/{file}   the file; X-Repo-Commit: its commit
//   GET {endpoint}/api/models/{org}/{name}/revision/{rev}   {"sha": ...} when that header is absent
//
// Only what vramsim reads is fetched: config.json and friends whole, and of a safetensors shard
// only its header, through HTTP range requests. A gated or private repository (401/403) and a
// missing one (404) are ConfigErrors on field "model" that say what to do.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "sim/model/hf_cache.hpp"

namespace vramsim::model {

/// One HTTP answer: status, body and headers (names lower-case; across redirects a header of
/// an earlier answer stays unless a later one repeats it).
struct HttpResponse {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
};

/// Bytes [first, last] of a file, both inclusive (HTTP's "Range: bytes=first-last").
struct ByteRange {
  std::int64_t first = 0;
  std::int64_t last = 0;
};

class HubClient {
 public:
  /// Throws ConfigError on field "model" when settings.offline is set: the caller must not
  /// construct a client then.
  explicit HubClient(HubSettings settings);

  const HubSettings& settings() const { return settings_; }

  /// The commit `revision` of `repo_id` resolves to (a 40-hex revision is returned as is).
  /// Throws ConfigError (gated, not found, unreachable) as download() does.
  std::string resolve_commit(std::string_view repo_id, std::string_view revision);

  /// Downloads `filename` of `repo_id` at `revision` into the cache and returns its path in
  /// snapshots/<sha>/; nullopt when the repository exists but has no such file (404 on the
  /// file while the revision resolves). Throws ConfigError on field "model" when the repository
  /// is gated (401/403: set HF_TOKEN), not found, or the hub cannot be reached.
  std::optional<std::filesystem::path> download(std::string_view repo_id,
                                                std::string_view revision,
                                                std::string_view filename);

  /// Bytes `range` of `filename`, without storing them: the server's 206 answer, or the same
  /// bytes cut from a 200 answer of a server that ignores Range (reading stops once they
  /// arrived). Shorter than asked only when the file is; nullopt when the repository has no
  /// such file (404 EntryNotFound, or a bare 404). Throws ConfigError as download().
  std::optional<std::string> fetch_range(std::string_view repo_id, std::string_view revision,
                          std::string_view filename, ByteRange range);

 private:
  std::string file_url(std::string_view repo_id, std::string_view revision,
                       std::string_view filename) const;
  HttpResponse get(const std::string& url, std::optional<ByteRange> range) const;
  /// Throws the ConfigError for a 401/403/404/other failure of `url`.
  [[noreturn]] void fail(std::string_view repo_id, const std::string& url,
                         const HttpResponse& r) const;

  HubSettings settings_;
};

}  // namespace vramsim::model
