#include "sim/model/hub_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"

namespace vramsim::model {

namespace {

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  HttpResponse* response = nullptr;
  /// Stop reading once this many body bytes arrived (a Range a server ignored); 0: no limit.
  std::size_t max_body = 0;
  bool truncated = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  t->response->body.append(data, n);
  if (t->max_body != 0 && t->response->body.size() >= t->max_body) {
    t->truncated = true;
    return 0;  // enough: curl aborts the transfer with CURLE_WRITE_ERROR
  }
  return n;
}

std::string trim(std::string s) {
  auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), space));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), space).base(), s.end());
  return s;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  const std::string line(data, n);
  const std::size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    t->response->headers[trim(name)] = trim(line.substr(colon + 1));
  }
  return n;
}

std::string escape(CURL* curl, std::string_view s) {
  std::unique_ptr<char, decltype(&curl_free)> e(
      curl_easy_escape(curl, s.data(), static_cast<int>(s.size())), &curl_free);
  return e ? std::string(e.get()) : std::string(s);
}

std::string header(const HttpResponse& r, const std::string& name) {
  const auto it = r.headers.find(name);
  return it == r.headers.end() ? std::string() : it->second;
}

// "W/\"abc\"" -> "abc": the blob name huggingface_hub derives from an ETag.
std::string blob_name(std::string etag) {
  if (etag.rfind("W/", 0) == 0) etag.erase(0, 2);
  etag.erase(std::remove(etag.begin(), etag.end(), '"'), etag.end());
  return etag;
}

}  // namespace

HubClient::HubClient(HubSettings settings) : settings_(std::move(settings)) {
  if (settings_.offline) {
    throw ConfigError("model", "HF_HUB_OFFLINE is set: the hub may not be contacted");
  }
  init_curl_once();
}

std::string HubClient::file_url(std::string_view repo_id, std::string_view revision,
                                std::string_view filename) const {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  // A revision such as "refs/pr/1" is one path segment; the repo id and file keep their '/'.
  return fmt::format("{}/{}/resolve/{}/{}", settings_.endpoint, repo_id,
                     escape(curl.get(), revision), filename);
}

HttpResponse HubClient::get(const std::string& url, std::optional<ByteRange> range) const {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) throw ConfigError("model", "libcurl could not start a transfer");
  HttpResponse response;
  Transfer t{&response, 0, false};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, static_cast<long>(settings_.connect_timeout.count()));
  curl_easy_setopt(c, CURLOPT_TIMEOUT, static_cast<long>(settings_.transfer_timeout.count()));
  curl_easy_setopt(c, CURLOPT_USERAGENT, "vramsim (libcurl)");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  std::string range_text;
  if (range) {
    range_text = fmt::format("{}-{}", range->first, range->last);
    curl_easy_setopt(c, CURLOPT_RANGE, range_text.c_str());
    t.max_body = static_cast<std::size_t>(range->last + 1);
  }
  // NOTE: a custom Authorization header is not sent on to another host after a redirect (curl
  // >= 7.58), so the token does not leak to the hub's CDN.
  curl_slist* headers = nullptr;
  std::string auth;
  if (!settings_.token.empty()) {
    auth = "Authorization: Bearer " + settings_.token;
    headers = curl_slist_append(headers, auth.c_str());
  }
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(headers,
                                                                          &curl_slist_free_all);
  if (headers != nullptr) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  const CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && t.truncated)) {
    throw ConfigError(
        "model",
        fmt::format("cannot fetch {}: {} (connect limit {} s, transfer limit {} s); set "
                    "HF_HUB_OFFLINE=1 to use only the local cache, or HF_ENDPOINT for a mirror",
                    url, curl_easy_strerror(rc), settings_.connect_timeout.count(),
                    settings_.transfer_timeout.count()));
  }
  return response;
}

void HubClient::fail(std::string_view repo_id, const std::string& url,
                     const HttpResponse& r) const {
  if (r.status == 401 || r.status == 403) {
    throw ConfigError(
        "model",
        fmt::format("'{}' is gated or private on {} (HTTP {} for {}): accept its licence on the "
                    "model page and set HF_TOKEN to an access token that may read it ({})",
                    repo_id, settings_.endpoint, r.status, url,
                    settings_.token.empty() ? "HF_TOKEN is not set"
                                            : "the HF_TOKEN given was refused"));
  }
  if (r.status == 404) {
    const std::string code = header(r, "x-error-code");
    throw ConfigError(
        "model", fmt::format("'{}' was not found on {} (HTTP 404{} for {}); check the id and the "
                             "revision",
                             repo_id, settings_.endpoint, code.empty() ? "" : ", " + code, url));
  }
  throw ConfigError("model", fmt::format("{} answered HTTP {} for {}", settings_.endpoint,
                                         r.status, url));
}

std::string HubClient::resolve_commit(std::string_view repo_id, std::string_view revision) {
  if (is_commit_sha(revision)) return std::string(revision);
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  const std::string url = fmt::format("{}/api/models/{}/revision/{}", settings_.endpoint, repo_id,
                                      escape(curl.get(), revision));
  const HttpResponse r = get(url, std::nullopt);
  if (r.status != 200) fail(repo_id, url, r);
  const nlohmann::json j = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("sha") || !j["sha"].is_string() ||
      !is_commit_sha(j["sha"].get<std::string>())) {
    throw ConfigError("model", fmt::format("{}: expected a JSON object with a 40-hex \"sha\"",
                                           url));
  }
  return j["sha"].get<std::string>();
}

std::optional<std::filesystem::path> HubClient::download(std::string_view repo_id,
                                                         std::string_view revision,
                                                         std::string_view filename) {
  const std::string url = file_url(repo_id, revision, filename);
  const HttpResponse r = get(url, std::nullopt);
  if (r.status == 404 && filename != "config.json") {
    // The hub says which is missing; a mirror that does not is asked whether the repo exists.
    const std::string code = header(r, "x-error-code");
    if (code == "EntryNotFound") return std::nullopt;
    if (code.empty()) {
      resolve_commit(repo_id, revision);  // throws when the repo or revision is unknown
      return std::nullopt;
    }
  }
  if (r.status != 200) fail(repo_id, url, r);
  std::string sha = header(r, "x-repo-commit");
  if (!is_commit_sha(sha)) sha = resolve_commit(repo_id, revision);
  std::string etag = header(r, "x-linked-etag");
  if (etag.empty()) etag = header(r, "etag");
  return store_in_cache(settings_.cache_dir, repo_id, revision, sha, filename, blob_name(etag),
                        r.body);
}

std::optional<std::string> HubClient::fetch_range(std::string_view repo_id, std::string_view revision,
                                   std::string_view filename, ByteRange range) {
  const std::string url = file_url(repo_id, revision, filename);
  HttpResponse r = get(url, range);
  if (r.status == 206) return std::move(r.body);
  if (r.status == 404) {
    const std::string code = header(r, "x-error-code");
    if (code.empty() || code == "EntryNotFound") return std::nullopt;
  }
  if (r.status != 200) fail(repo_id, url, r);
  // A server that ignores Range sent the file from its start.
  const auto first = static_cast<std::size_t>(range.first);
  if (r.body.size() <= first) return std::string();
  return r.body.substr(first, static_cast<std::size_t>(range.last - range.first + 1));
}

}  // namespace vramsim::model
