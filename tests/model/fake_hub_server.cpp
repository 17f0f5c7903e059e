#include "tests/model/fake_hub_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace vramsim::testing {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

void send_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client hung up (it stops reading once it has its range)
    sent += static_cast<std::size_t>(n);
  }
}

std::string response(int status, const std::string& reason,
                     const std::vector<std::pair<std::string, std::string>>& headers,
                     const std::string& body) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\n", status, reason);
  for (const auto& [k, v] : headers) out += fmt::format("{}: {}\r\n", k, v);
  out += fmt::format("Content-Length: {}\r\nConnection: close\r\n\r\n", body.size());
  return out + body;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = s.find(sep, start);
    out.emplace_back(s.substr(start, at == std::string_view::npos ? s.npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

}  // namespace

FakeHubServer::FakeHubServer(std::map<std::string, FakeRepo> repos) : repos_(std::move(repos)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) throw std::runtime_error("fake hub: socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 16) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("fake hub: cannot listen on 127.0.0.1");
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

FakeHubServer::~FakeHubServer() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
}

std::string FakeHubServer::endpoint() const { return fmt::format("http://127.0.0.1:{}", port_); }

std::vector<std::string> FakeHubServer::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

void FakeHubServer::serve() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    handle(fd);
    ::close(fd);
  }
}

void FakeHubServer::handle(int fd) {
  std::string request;
  char buf[4096];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65536) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 2000) <= 0) return;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    request.append(buf, static_cast<std::size_t>(n));
  }
  const std::vector<std::string> lines = split(request.substr(0, request.find("\r\n\r\n")), '\n');
  const std::vector<std::string> first = split(lines[0], ' ');
  const std::string path = first.size() > 1 ? first[1] : "";
  std::map<std::string, std::string> headers;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    headers[lower(line.substr(0, colon))] = value;
  }
  std::string range;
  if (auto it = headers.find("range"); it != headers.end() && it->second.rfind("bytes=", 0) == 0) {
    range = it->second.substr(6);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(range.empty() ? path : path + " range=" + range);
  }
  const std::vector<std::string> parts = split(path, '/');  // "", org, name, ...
  const bool api = parts.size() == 7 && parts[1] == "api" && parts[2] == "models" &&
                   parts[5] == "revision";
  const bool resolve = parts.size() >= 6 && parts[3] == "resolve";
  if (!api && !resolve) {
    send_all(fd, response(404, "Not Found", {}, "no such route"));
    return;
  }
  const std::string repo_id = api ? parts[3] + "/" + parts[4] : parts[1] + "/" + parts[2];
  const std::string revision = api ? parts[6] : parts[4];
  const auto repo = repos_.find(repo_id);
  if (repo == repos_.end()) {
    send_all(fd, response(404, "Not Found", {{"X-Error-Code", "RepoNotFound"}}, "no repo"));
    return;
  }
  const FakeRepo& r = repo->second;
  if (!r.token.empty() && headers["authorization"] != "Bearer " + r.token) {
    send_all(fd, response(401, "Unauthorized", {{"X-Error-Code", "GatedRepo"}}, "gated"));
    return;
  }
  if (revision != "main" && revision != r.sha) {
    send_all(fd, response(404, "Not Found", {{"X-Error-Code", "RevisionNotFound"}}, "no rev"));
    return;
  }
  if (api) {
    send_all(fd, response(200, "OK", {{"Content-Type", "application/json"}},
                          fmt::format("{{\"id\": \"{}\", \"sha\": \"{}\"}}", repo_id, r.sha)));
    return;
  }
  std::string file = parts[5];
  for (std::size_t i = 6; i < parts.size(); ++i) file += "/" + parts[i];
  const auto f = r.files.find(file);
  if (f == r.files.end()) {
    send_all(fd, response(404, "Not Found", {{"X-Error-Code", "EntryNotFound"}}, "no file"));
    return;
  }
  std::vector<std::pair<std::string, std::string>> out{
      {"ETag", fmt::format("\"{:016x}\"", std::hash<std::string>{}(f->second))}};
  if (r.send_commit_header) out.emplace_back("X-Repo-Commit", r.sha);
  if (range.empty()) {
    send_all(fd, response(200, "OK", out, f->second));
    return;
  }
  const std::size_t dash = range.find('-');
  const std::size_t a = std::stoull(range.substr(0, dash));
  std::size_t b = std::stoull(range.substr(dash + 1));
  if (a >= f->second.size()) {
    send_all(fd, response(416, "Range Not Satisfiable", out, ""));
    return;
  }
  b = std::min(b, f->second.size() - 1);
  out.emplace_back("Content-Range", fmt::format("bytes {}-{}/{}", a, b, f->second.size()));
  send_all(fd, response(206, "Partial Content", out, f->second.substr(a, b - a + 1)));
}

}  // namespace vramsim::testing
