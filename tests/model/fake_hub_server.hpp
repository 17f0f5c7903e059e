// A stand-in for the Hugging Face hub on 127.0.0.1, run in a thread of the test process, so no
// test needs the internet. It serves
//   GET /<org>/<name>/resolve/<revision>/<file>       the file, with X-Repo-Commit and ETag
//   GET /api/models/<org>/<name>/revision/<revision>  {"sha": "<commit>"}
// where <revision> is "main" or the repo's commit; a repo with a token answers 401 (X-Error-Code
// GatedRepo) unless the request carries "Authorization: Bearer <token>"; an unknown repo 404
// RepoNotFound, a missing file 404 EntryNotFound; "Range: bytes=a-b" gets 206 and those bytes.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace vramsim::testing {

struct FakeRepo {
  std::string sha;                           // 40 hex digits
  std::map<std::string, std::string> files;  // path in the repo -> contents
  std::string token;                         // "": public; else gated behind this token
  bool send_commit_header = true;            // false: clients must ask the API for the sha
};

class FakeHubServer {
 public:
  /// Listens on 127.0.0.1 on a free port; `repos` is keyed by "org/name".
  explicit FakeHubServer(std::map<std::string, FakeRepo> repos);
  ~FakeHubServer();
  FakeHubServer(const FakeHubServer&) = delete;
  FakeHubServer& operator=(const FakeHubServer&) = delete;

  /// "http://127.0.0.1:<port>".
  std::string endpoint() const;
  /// Every request so far as "<path>" plus " range=<a-b>" when it asked for a range.
  std::vector<std::string> requests() const;

 private:
  void serve();
  void handle(int fd);

  std::map<std::string, FakeRepo> repos_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

}  // namespace vramsim::testing
