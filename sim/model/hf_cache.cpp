#include "sim/model/hf_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace vramsim::model {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_name_part(std::string_view part) {
  if (part.empty() || part.size() > 96 || part.front() == '.' || part.front() == '-') return false;
  if (part.find("..") != std::string_view::npos) return false;
  return std::all_of(part.begin(), part.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.';
  });
}

std::string read_small_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
    text.pop_back();
  }
  return text;
}

}  // namespace

HubSettings hub_settings_from(const std::function<const char*(const char*)>& getenv) {
  auto get = [&](const char* name) -> std::string {
    const char* v = getenv(name);
    return v == nullptr ? std::string() : std::string(v);
  };
  HubSettings s;
  if (std::string cache = get("HF_HUB_CACHE"); !cache.empty()) {
    s.cache_dir = cache;
  } else if (std::string home = get("HF_HOME"); !home.empty()) {
    s.cache_dir = std::filesystem::path(home) / "hub";
  } else {
    // NOTE: huggingface_hub also honours XDG_CACHE_HOME ($XDG_CACHE_HOME/huggingface).
    std::string xdg = get("XDG_CACHE_HOME");
    if (xdg.empty()) {
      std::string user_home = get("HOME");
      xdg = (std::filesystem::path(user_home.empty() ? "/" : user_home) / ".cache").string();
    }
    s.cache_dir = std::filesystem::path(xdg) / "huggingface" / "hub";
  }
  if (std::string endpoint = get("HF_ENDPOINT"); !endpoint.empty()) {
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    s.endpoint = endpoint;
  }
  s.token = get("HF_TOKEN");
  const std::string offline = lower(get("HF_HUB_OFFLINE"));
  s.offline = offline == "1" || offline == "true" || offline == "yes" || offline == "on";
  return s;
}

HubSettings hub_settings_from_env() {
  return hub_settings_from([](const char* name) { return std::getenv(name); });
}

std::string repo_folder_name(std::string_view repo_id) {
  std::string out = "models--";
  for (char c : repo_id) {
    if (c == '/') {
      out += "--";
    } else {
      out += c;
    }
  }
  return out;
}

bool is_hub_repo_id(std::string_view id) {
  const std::size_t slash = id.find('/');
  if (slash == std::string_view::npos) return is_name_part(id);
  return is_name_part(id.substr(0, slash)) && is_name_part(id.substr(slash + 1));
}

bool is_commit_sha(std::string_view revision) {
  return revision.size() == 40 && std::all_of(revision.begin(), revision.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::optional<std::filesystem::path> find_cached_snapshot(const std::filesystem::path& cache_dir,
                                                          std::string_view repo_id,
                                                          std::string_view revision) {
  if (!is_hub_repo_id(repo_id) || revision.empty()) return std::nullopt;
  const std::filesystem::path repo = cache_dir / repo_folder_name(repo_id);
  std::error_code ec;
  std::string sha;
  if (is_commit_sha(revision)) {
    sha = std::string(revision);
  } else {
    const std::filesystem::path ref = repo / "refs" / std::string(revision);
    if (!std::filesystem::is_regular_file(ref, ec)) return std::nullopt;
    sha = read_small_file(ref);
    if (!is_commit_sha(sha)) return std::nullopt;
  }
  const std::filesystem::path snapshot = repo / "snapshots" / sha;
  if (!std::filesystem::is_regular_file(snapshot / "config.json", ec)) return std::nullopt;
  return snapshot;
}

void write_file_atomically(const std::filesystem::path& file, std::string_view contents,
                           const std::string& field) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) {
    throw ConfigError(field, fmt::format("cannot create the folder {}: {}",
                                         file.parent_path().string(), ec.message()));
  }
  const std::filesystem::path tmp =
      file.string() + fmt::format(".incomplete.{}", static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      throw ConfigError(field, fmt::format("cannot write {}", tmp.string()));
    }
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw ConfigError(field, fmt::format("cannot rename {} to {}: {}", tmp.string(),
                                         file.string(), ec.message()));
  }
}

std::filesystem::path store_in_cache(const std::filesystem::path& cache_dir,
                                     std::string_view repo_id, std::string_view revision,
                                     std::string_view sha, std::string_view filename,
                                     std::string_view etag, std::string_view contents) {
  const std::filesystem::path repo = cache_dir / repo_folder_name(repo_id);
  const std::filesystem::path in_snapshot = repo / "snapshots" / std::string(sha) /
                                            std::filesystem::path(std::string(filename));
  const bool etag_is_name = !etag.empty() && etag.find('/') == std::string_view::npos &&
                            etag.find("..") == std::string_view::npos;
  std::error_code ec;
  if (etag_is_name) {
    const std::filesystem::path blob = repo / "blobs" / std::string(etag);
    write_file_atomically(blob, contents, "model");
    std::filesystem::create_directories(in_snapshot.parent_path(), ec);
    // The link is relative, as huggingface_hub makes it, so the cache can be moved.
    const std::filesystem::path target = blob.lexically_relative(in_snapshot.parent_path());
    const std::filesystem::path tmp_link =
        in_snapshot.string() + fmt::format(".incomplete.{}", static_cast<long>(::getpid()));
    std::filesystem::remove(tmp_link, ec);
    std::filesystem::create_symlink(target, tmp_link, ec);
    if (!ec) std::filesystem::rename(tmp_link, in_snapshot, ec);
    if (ec) {
      // A file system without symlinks: huggingface_hub then copies the blob.
      std::filesystem::remove(tmp_link, ec);
      write_file_atomically(in_snapshot, contents, "model");
    }
  } else {
    write_file_atomically(in_snapshot, contents, "model");
  }
  if (revision != sha) {
    write_file_atomically(repo / "refs" / std::string(revision), sha, "model");
  }
  return in_snapshot;
}

}  // namespace vramsim::model
