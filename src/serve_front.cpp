// The service's HTTP front (see ?serve, "The front"): a small, strict HTTP/1.1 server on the
// public address that streams uploads to disk with backpressure and relays every other request
// to httpuv, which listens on a private loopback port and answers only requests that carry the
// front's secret header.
//
// Why: httpuv's I/O thread reads a request body as fast as the socket delivers it and queues
// the chunks for R's main thread, so an upload at loopback speed waits in memory (a 1 GB upload
// grew the web process by about 750 MB). Here a connection's thread reads the socket only as
// fast as it writes the spool file, so the kernel's socket buffers, and then the client, wait.
//
// Threads: one accepts, one per connection (at most max_connections). They never touch R:
// R's decisions (may this caller upload, and how much; what to do with a spooled body) are asked
// over HTTP from httpuv, which R serves on its main thread. Every wait polls the socket and a
// stop pipe, so that stopping wakes every thread at once and joins them.
#include <Rcpp.h>

#ifndef _WIN32
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

#ifdef MSG_NOSIGNAL
constexpr int kNoSignal = MSG_NOSIGNAL;
#else
constexpr int kNoSignal = 0;  // macOS: SO_NOSIGPIPE on each socket instead
#endif

// Close-on-exec (the worker processes must not inherit the front's sockets), optionally
// non-blocking, and no SIGPIPE where send() cannot say so.
void set_flags(int fd, bool nonblock) {
  ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
  if (nonblock) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
#ifdef SO_NOSIGPIPE
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
}

constexpr size_t kMaxHead = 32768;         // a request's line and headers, all together
constexpr size_t kMaxHeaders = 64;         // header lines in one request
constexpr size_t kMaxTarget = 8192;        // the request target
constexpr long long kMaxSmallBody = 65536; // a body relayed to httpuv (anything but an upload)
constexpr size_t kMaxResponseHead = 65536; // httpuv's status line and headers
constexpr size_t kChunk = 256 * 1024;      // one read from a socket
constexpr double kLinger = 2.0;            // seconds to drain a client's unread body before closing

struct Config {
  std::string secret, spool_dir;
  int upstream_port = 0;
  double header_timeout = 30, idle_timeout = 120, upstream_timeout = 3600;
  double min_body_rate = 65536;  // bytes a second: a body's deadline is header_timeout plus its size at this rate
  int max_connections = 64, max_per_address = 16;
};

enum class Io { ok, eof, timeout, stop, error };

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_token_char(unsigned char c) {
  return std::isalnum(c) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

std::string json_error(int status, const std::string& reason, const std::string& message, bool keep_alive) {
  std::string body = "{\"error\":\"" + message + "\"}";  // messages are fixed strings without quotes
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\n"
         "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n"
         "Content-Length: " + std::to_string(body.size()) + (keep_alive ? "\r\nConnection: keep-alive" : "\r\nConnection: close") +
         "\r\n\r\n" + body;
}

struct Header {
  std::string name, value;
};

struct Request {
  std::string method, target, path;
  bool http11 = true;
  std::vector<Header> headers;  // as the client sent them, less what the front owns
  long long content_length = -1;
  bool has_transfer_encoding = false, expect_continue = false, keep_alive = true;
};

class Front;

// One client connection and its thread's I/O, each wait bounded by a deadline and the stop pipe.
class Connection {
 public:
  Connection(Front& front, int fd, std::string address) : front_(front), fd_(fd), address_(std::move(address)) {}
  ~Connection() { if (fd_ >= 0) ::close(fd_); }
  void run();

 private:
  Io wait(int fd, short events, Clock::time_point deadline);
  Io read_some(int fd, char* buf, size_t n, Clock::time_point deadline, size_t* got);
  Io write_all(int fd, const char* data, size_t n, double idle_timeout);
  Io client_write(const std::string& s) { return write_all(fd_, s.data(), s.size(), idle_timeout()); }
  double idle_timeout() const;

  Io read_head(std::string* head);
  int parse_request(const std::string& head, Request* req, std::string* why);
  bool handle(const Request& req);
  bool relay(const Request& req);
  bool upload(const Request& req);
  Io read_body(long long n, std::string* body);
  Clock::time_point body_deadline(long long n) const;
  void release(const Request& req, const std::string& ticket);
  std::string upstream_request(const Request& req, const std::vector<Header>& extra, const std::string& body) const;
  int upstream_connect();
  Io upstream_send(int up, const std::string& request);
  Io upstream_head(int up, std::string* buf, size_t* head_end, int* status);
  bool relay_response(int up, std::string buf, size_t head_end, int status, bool head_request, bool* keep_alive);
  void refuse(int status, const std::string& reason, const std::string& message);
  void linger();

  Front& front_;
  int fd_;
  std::string address_;
  std::string in_;  // bytes read from the client and not used yet (a pipelined request)
  std::vector<char> buf_ = std::vector<char>(kChunk);
};

class Front {
 public:
  Front(const std::string& host, int port, Config config) : config_(std::move(config)) {
    if (::pipe(stop_pipe_) != 0) Rcpp::stop("the service's front: cannot make a pipe");
    ::fcntl(stop_pipe_[0], F_SETFD, FD_CLOEXEC);
    ::fcntl(stop_pipe_[1], F_SETFD, FD_CLOEXEC);
    try {
      listen_fd_ = listen_on(host, port);
    } catch (...) {
      ::close(stop_pipe_[0]);
      ::close(stop_pipe_[1]);
      throw;
    }
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~Front() { stop(); }

  void stop() {
    if (stopped_.exchange(true)) return;
    stopping_ = true;
    char c = 1;
    while (::write(stop_pipe_[1], &c, 1) < 0 && errno == EINTR) {}
    if (acceptor_.joinable()) acceptor_.join();
    std::list<Worker> workers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      workers.swap(workers_);
    }
    for (auto& w : workers) w.thread.join();
    ::close(listen_fd_);
    ::close(stop_pipe_[0]);
    ::close(stop_pipe_[1]);
  }

  const Config& config() const { return config_; }
  int stop_fd() const { return stop_pipe_[0]; }
  bool stopping() const { return stopping_; }

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
    std::string address;
  };

  static int listen_on(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (rc != 0) Rcpp::stop("cannot listen on %s port %d: %s", host, port, ::gai_strerror(rc));
    std::string why = "no address";
    int fd = -1;
    for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
      fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd < 0) continue;
      set_flags(fd, false);
      int one = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
        why = std::strerror(errno);
        ::close(fd);
        fd = -1;
      }
    }
    ::freeaddrinfo(found);
    if (fd < 0) Rcpp::stop("cannot listen on %s port %d: %s", host, port, why);
    return fd;
  }

  void reap() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (*it->done) {
        it->thread.join();
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // Waits up to ms milliseconds, or until the front stops.
  void pause(int ms) {
    pollfd p = {stop_pipe_[0], POLLIN, 0};
    ::poll(&p, 1, ms);
  }

  // An exception must not leave this thread (it would end R): out of memory, most likely, so
  // a moment's pause and on.
  void accept_loop() {
    while (!stopping_) {
      try {
        accept_one();
      } catch (...) {
        pause(100);
      }
    }
  }

  void accept_one() {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    int n = ::poll(fds, 2, 1000);
    reap();
    if (n <= 0 || (fds[1].revents & POLLIN)) return;
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    int fd = ::accept(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    if (fd < 0) {
      // out of descriptors or memory: the connection stays in the backlog and poll() would
      // wake at once again; wait for connections to end instead of spinning
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) pause(100);
      return;
    }
    try {
      set_flags(fd, true);
      char host[NI_MAXHOST] = "unknown";
      ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST);
      std::string address(host);
      std::lock_guard<std::mutex> lock(mutex_);
      size_t same = 0;
      for (const auto& w : workers_) same += !*w.done && w.address == address;
      bool full = workers_.size() >= static_cast<size_t>(config_.max_connections);
      if (full || same >= static_cast<size_t>(config_.max_per_address)) {
        static const std::string busy = json_error(503, "Service Unavailable", "too many connections; try again later", false);
        static const std::string busy_here =
            json_error(503, "Service Unavailable", "too many connections from this address; try again later", false);
        const std::string& answer = full ? busy : busy_here;
        ::send(fd, answer.data(), answer.size(), kNoSignal);
        ::close(fd);
        return;
      }
      auto done = std::make_shared<std::atomic<bool>>(false);
      // the list's node first: a joinable thread dropped by a failed push_back would end R
      workers_.push_back({std::thread(), done, address});
      try {
        // an exception must not leave a thread (it would end R): the connection just closes
        workers_.back().thread = std::thread([this, fd, address, done] {
          try {
            Connection c(*this, fd, address);
            c.run();
          } catch (...) {
          }
          *done = true;
        });
      } catch (...) {
        workers_.pop_back();
        throw;
      }
    } catch (...) {  // no memory or no thread to be had
      ::close(fd);
      throw;
    }
  }

  Config config_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::atomic<bool> stopping_{false}, stopped_{false};
  std::thread acceptor_;
  std::mutex mutex_;
  std::list<Worker> workers_;
};

Clock::time_point after(double seconds) {
  // R checks the settings; this keeps the arithmetic defined whatever comes (NaN as 0, a year at most)
  if (!(seconds > 0)) seconds = 0;
  seconds = std::min(seconds, 3.2e7);
  return Clock::now() + std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

double Connection::idle_timeout() const { return front_.config().idle_timeout; }

Io Connection::wait(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Io::timeout;
    pollfd fds[2] = {{fd, events, 0}, {front_.stop_fd(), POLLIN, 0}};
    int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno != EINTR) return Io::error;
    if (front_.stopping()) return Io::stop;
    if (n > 0 && fds[0].revents) return Io::ok;  // readable, writable, or an error that the next call reports
  }
}

Io Connection::read_some(int fd, char* buf, size_t n, Clock::time_point deadline, size_t* got) {
  for (;;) {
    Io w = wait(fd, POLLIN, deadline);
    if (w != Io::ok) return w;
    ssize_t r = ::recv(fd, buf, n, 0);
    if (r > 0) {
      *got = static_cast<size_t>(r);
      return Io::ok;
    }
    if (r == 0) return Io::eof;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return Io::error;
  }
}

Io Connection::write_all(int fd, const char* data, size_t n, double idle_timeout) {
  while (n > 0) {
    Io w = wait(fd, POLLOUT, after(idle_timeout));
    if (w != Io::ok) return w;
    ssize_t r = ::send(fd, data, n, kNoSignal);
    if (r > 0) {
      data += r;
      n -= static_cast<size_t>(r);
    } else if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return Io::error;
    }
  }
  return Io::ok;
}

// Closing a socket with unread data resets the connection, and the client may lose the answer
// it has been sent: stop writing, then read and discard for a moment (bounded).
void Connection::linger() {
  ::shutdown(fd_, SHUT_WR);
  auto deadline = after(kLinger);
  size_t got = 0;
  while (read_some(fd_, buf_.data(), buf_.size(), deadline, &got) == Io::ok) {}
}

void Connection::refuse(int status, const std::string& reason, const std::string& message) {
  if (client_write(json_error(status, reason, message, false)) == Io::ok) linger();
}

// The request's line and headers, up to the empty line: bounded in size and in time. The time
// runs from the first byte awaited, so a client cannot keep a connection by sending slowly.
Io Connection::read_head(std::string* head) {
  auto deadline = after(front_.config().header_timeout);
  for (;;) {
    while (in_.size() >= 2 && in_.compare(0, 2, "\r\n") == 0) in_.erase(0, 2);  // stray CRLFs between requests
    size_t end = in_.find("\r\n\r\n");
    if (end != std::string::npos) {
      *head = in_.substr(0, end + 2);
      in_.erase(0, end + 4);
      return Io::ok;
    }
    if (in_.size() > kMaxHead) return Io::error;
    size_t got = 0;
    Io r = read_some(fd_, buf_.data(), std::min(buf_.size(), kMaxHead + 4 - in_.size()), deadline, &got);
    if (r != Io::ok) return r;
    in_.append(buf_.data(), got);
  }
}

// Returns 0, or the status to refuse the request with (and why).
int Connection::parse_request(const std::string& head, Request* req, std::string* why) {
  size_t eol = head.find("\r\n");
  std::string line = head.substr(0, eol);
  size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
  if (sp1 == std::string::npos || sp2 == sp1) return *why = "malformed request line", 400;
  req->method = line.substr(0, sp1);
  req->target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string version = line.substr(sp2 + 1);
  if (req->method.empty() || req->method.size() > 16) return *why = "malformed request line", 400;
  for (unsigned char c : req->method) if (c < 'A' || c > 'Z') return *why = "malformed request line", 400;
  if (req->target.empty() || req->target[0] != '/') return *why = "malformed request target", 400;
  if (req->target.size() > kMaxTarget) return *why = "the request target is too long", 414;
  for (unsigned char c : req->target) if (c <= 0x20 || c >= 0x7f) return *why = "malformed request target", 400;
  if (version == "HTTP/1.1") req->http11 = true;
  else if (version == "HTTP/1.0") req->http11 = false;
  else return *why = "only HTTP/1.1 and HTTP/1.0 are served", 505;
  req->path = req->target.substr(0, req->target.find('?'));
  bool close = false, keep = false;
  size_t pos = eol + 2;
  while (pos < head.size()) {
    size_t e = head.find("\r\n", pos);
    std::string h = head.substr(pos, e - pos);
    pos = e + 2;
    if (req->headers.size() >= kMaxHeaders) return *why = "too many headers", 431;
    size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0) return *why = "malformed header", 400;
    std::string name = h.substr(0, colon);
    for (unsigned char c : name) if (!is_token_char(c)) return *why = "malformed header", 400;
    size_t b = h.find_first_not_of(" \t", colon + 1), t = h.find_last_not_of(" \t");
    std::string value = b == std::string::npos ? "" : h.substr(b, t - b + 1);
    for (unsigned char c : value) if ((c < 0x20 && c != '\t') || c == 0x7f) return *why = "malformed header", 400;
    std::string key = lower(name);
    // httpuv maps '_' and '-' to the same R name: a name with '_' could pass for another header
    if (key.find('_') != std::string::npos) continue;
    if (key.compare(0, 13, "x-fsgpu-front") == 0) continue;  // the front's own headers: never from a client
    if (key == "content-length") {
      if (req->content_length >= 0 || value.empty() || value.size() > 15 ||
          value.find_first_not_of("0123456789") != std::string::npos)
        return *why = "bad Content-Length", 400;
      req->content_length = std::stoll(value);
      continue;
    }
    if (key == "transfer-encoding") {
      req->has_transfer_encoding = true;
      continue;
    }
    if (key == "expect") {
      if (lower(value) != "100-continue") return *why = "unsupported Expect", 417;
      req->expect_continue = true;
      continue;
    }
    if (key == "connection") {
      std::string v = lower(value);
      close = close || v.find("close") != std::string::npos;
      keep = keep || v.find("keep-alive") != std::string::npos;
      continue;
    }
    if (key == "keep-alive" || key == "upgrade" || key == "te" || key == "proxy-connection" || key == "trailer") continue;
    req->headers.push_back({name, value});
  }
  req->keep_alive = req->http11 ? !close : keep && !close;
  return 0;
}

void Connection::run() {
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  for (;;) {
    std::string head;
    Io r = read_head(&head);
    if (r == Io::error && in_.size() > kMaxHead) return refuse(431, "Request Header Fields Too Large", "the request's headers are too large");
    if (r == Io::timeout && !in_.empty()) return refuse(408, "Request Timeout", "the request's headers did not arrive in time");
    if (r != Io::ok) return;
    Request req;
    std::string why;
    int status = parse_request(head, &req, &why);
    if (status) return refuse(status, status == 400 ? "Bad Request" : status == 414 ? "URI Too Long" : status == 431 ? "Request Header Fields Too Large" : status == 417 ? "Expectation Failed" : "HTTP Version Not Supported", why);
    if (!handle(req)) return;
  }
}

// Answers one request; true when the connection stays open for the next.
bool Connection::handle(const Request& req) {
  if (req.has_transfer_encoding) {
    refuse(411, "Length Required", "send the request with a Content-Length (uploads are not taken in chunked encoding)");
    return false;
  }
  if (req.method == "POST" && req.path == "/api/jobs") return upload(req);
  return relay(req);
}

// A body's deadline: header_timeout plus its size at min_body_rate, from when it is awaited, so
// that a client sending a byte now and then (each read within idle_timeout) cannot keep its
// connection for ever.
Clock::time_point Connection::body_deadline(long long n) const {
  const Config& c = front_.config();
  return after(c.header_timeout + static_cast<double>(n) / std::max(1.0, c.min_body_rate));
}

Io Connection::read_body(long long n, std::string* body) {
  auto deadline = body_deadline(n);
  size_t take = std::min(in_.size(), static_cast<size_t>(n));
  body->assign(in_, 0, take);
  in_.erase(0, take);
  while (static_cast<long long>(body->size()) < n) {
    size_t got = 0;
    Io r = read_some(fd_, buf_.data(), std::min(buf_.size(), static_cast<size_t>(n) - body->size()),
                     std::min(deadline, after(idle_timeout())), &got);
    if (r != Io::ok) return r;
    body->append(buf_.data(), got);
  }
  return Io::ok;
}

std::string Connection::upstream_request(const Request& req, const std::vector<Header>& extra, const std::string& body) const {
  std::string s = req.method + " " + req.target + " HTTP/1.1\r\n";
  for (const auto& h : req.headers) s += h.name + ": " + h.value + "\r\n";
  s += "X-Fsgpu-Front-Secret: " + front_.config().secret + "\r\nX-Fsgpu-Front-Client: " + address_ + "\r\n";
  for (const auto& h : extra) s += h.name + ": " + h.value + "\r\n";
  s += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  return s + body;
}

int Connection::upstream_connect() {
  int up = ::socket(AF_INET, SOCK_STREAM, 0);
  if (up < 0) return -1;
  set_flags(up, false);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(front_.config().upstream_port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(up, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(up);
    return -1;
  }
  set_flags(up, true);
  return up;
}

Io Connection::upstream_send(int up, const std::string& request) {
  return write_all(up, request.data(), request.size(), front_.config().upstream_timeout);
}

// httpuv's status line and headers, and whatever of the body came with them, into buf.
Io Connection::upstream_head(int up, std::string* buf, size_t* head_end, int* status) {
  auto deadline = after(front_.config().upstream_timeout);
  for (;;) {
    size_t end = buf->find("\r\n\r\n");
    if (end != std::string::npos) {
      *head_end = end + 4;
      if (buf->compare(0, 9, "HTTP/1.1 ") != 0 && buf->compare(0, 9, "HTTP/1.0 ") != 0) return Io::error;
      *status = std::atoi(buf->c_str() + 9);
      return *status >= 100 && *status < 600 ? Io::ok : Io::error;
    }
    if (buf->size() > kMaxResponseHead) return Io::error;
    size_t got = 0;
    Io r = read_some(up, buf_.data(), buf_.size(), deadline, &got);
    if (r != Io::ok) return r;
    buf->append(buf_.data(), got);
  }
}

// Relays httpuv's answer to the client, with the front's Connection header; true when all of it
// was sent. *keep_alive (in: the client wants it) says whether the connection can take another
// request: only where the answer's end is known.
bool Connection::relay_response(int up, std::string buf, size_t head_end, int status, bool head_request, bool* keep_alive) {
  std::string head = buf.substr(0, head_end - 2);
  buf.erase(0, head_end);
  long long length = -1;
  std::string out;
  size_t pos = 0;
  bool first = true;
  while (pos < head.size()) {
    size_t e = head.find("\r\n", pos);
    std::string h = head.substr(pos, e - pos);
    pos = e + 2;
    if (!first) {
      std::string key = lower(h.substr(0, h.find(':')));
      if (key == "connection" || key == "keep-alive") continue;
      if (key == "content-length") length = std::atoll(h.c_str() + h.find(':') + 1);
    }
    first = false;
    out += h + "\r\n";
  }
  bool no_body = head_request || status == 204 || status == 304 || status < 200;
  if (!no_body && length < 0) *keep_alive = false;  // its end is where httpuv closes
  out += *keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  if (client_write(out) != Io::ok) return false;
  if (no_body) return true;
  long long left = length < 0 ? -1 : length;
  auto send_part = [&](const char* p, size_t n) {
    if (left >= 0) n = static_cast<size_t>(std::min<long long>(left, static_cast<long long>(n)));
    if (left >= 0) left -= static_cast<long long>(n);
    return write_all(fd_, p, n, idle_timeout());
  };
  if (!buf.empty() && send_part(buf.data(), buf.size()) != Io::ok) return false;
  while (left != 0) {
    size_t got = 0;
    Io r = read_some(up, buf_.data(), buf_.size(), after(front_.config().upstream_timeout), &got);
    if (r == Io::eof && left < 0) break;
    if (r != Io::ok) return false;
    if (send_part(buf_.data(), got) != Io::ok) return false;
  }
  return true;
}

// Any request but an upload: its body (64 kB at most) read here, then httpuv's answer relayed.
bool Connection::relay(const Request& req) {
  long long n = std::max(0LL, req.content_length);
  if (n > kMaxSmallBody) {
    refuse(413, "Payload Too Large", "the request is too large");
    return false;
  }
  if (req.expect_continue && n > 0 && client_write("HTTP/1.1 100 Continue\r\n\r\n") != Io::ok) return false;
  std::string body;
  Io r = read_body(n, &body);
  if (r == Io::timeout) refuse(408, "Request Timeout", "the request's body did not arrive in time");
  if (r != Io::ok) return false;
  int up = upstream_connect();
  if (up < 0) {
    refuse(502, "Bad Gateway", "the service is not answering");
    return false;
  }
  std::string buf;
  size_t head_end = 0;
  int status = 0;
  bool keep = false;
  if (upstream_send(up, upstream_request(req, {}, body)) == Io::ok && upstream_head(up, &buf, &head_end, &status) == Io::ok) {
    keep = req.keep_alive;
    if (!relay_response(up, std::move(buf), head_end, status, req.method == "HEAD", &keep)) keep = false;
  } else if (!front_.stopping()) {
    refuse(502, "Bad Gateway", "the service is not answering");
  }
  ::close(up);
  return keep;
}

// The value of a header in an answer's head ("" when absent); key in lower case.
std::string response_header(const std::string& head, const std::string& key) {
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos + 2 < head.size()) {
    size_t start = pos + 2;
    pos = head.find("\r\n", start);
    std::string h = head.substr(start, pos == std::string::npos ? std::string::npos : pos - start);
    size_t colon = h.find(':');
    if (colon == std::string::npos || lower(h.substr(0, colon)) != key) continue;
    size_t b = h.find_first_not_of(" \t", colon + 1), t = h.find_last_not_of(" \t");
    return b == std::string::npos ? "" : h.substr(b, t - b + 1);
  }
  return "";
}

// Tells R that the upload it let come (its ticket) ended without a body to hand over, so that
// the bytes it holds for it count no more; R also lets a ticket lapse should this never arrive.
void Connection::release(const Request& req, const std::string& ticket) {
  if (ticket.empty() || front_.stopping()) return;
  int up = upstream_connect();
  if (up < 0) return;
  std::string buf;
  size_t head_end = 0;
  int status = 0;
  if (upstream_send(up, upstream_request(req, {{"X-Fsgpu-Front-Release", ticket}}, "")) == Io::ok)
    upstream_head(up, &buf, &head_end, &status);
  ::close(up);
}

// 128 random bits from the system, as 32 hex digits; "" when none can be had.
std::string random_name() {
  unsigned char bytes[16];
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t r = ::read(fd, bytes + got, sizeof bytes - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  if (got < sizeof bytes) return "";
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned char b : bytes) {
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

// POST /api/jobs: R says whether this caller may send this many bytes; then the body goes to a
// spool file at the speed of the disk; then R takes the spooled body by its name. The
// connection closes after an upload (nothing of a later request is read along with a body).
bool Connection::upload(const Request& req) {
  if (req.content_length < 0) {
    refuse(411, "Length Required", "send the request with a Content-Length (uploads are not taken in chunked encoding)");
    return false;
  }
  int up = upstream_connect();
  std::string buf;
  size_t head_end = 0;
  int status = 0;
  if (up < 0 ||
      upstream_send(up, upstream_request(req, {{"X-Fsgpu-Front-Ask", std::to_string(req.content_length)}}, "")) != Io::ok ||
      upstream_head(up, &buf, &head_end, &status) != Io::ok) {
    if (up >= 0) ::close(up);
    if (!front_.stopping()) refuse(502, "Bad Gateway", "the service is not answering");
    return false;
  }
  if (status != 204) {  // R's refusal (401, 403, 413, 429, 400, ...): relayed; the body stays unread
    bool keep = false;
    bool sent = relay_response(up, std::move(buf), head_end, status, false, &keep);
    ::close(up);
    if (sent) linger();
    return false;
  }
  ::close(up);
  // R's ticket for this upload (hexadecimal): handed back with the body, or released without it
  std::string ticket = response_header(buf.substr(0, head_end), "x-fsgpu-front-ticket");
  if (ticket.size() > 64 || ticket.find_first_not_of("0123456789abcdef") != std::string::npos) ticket.clear();
  if (req.expect_continue && client_write("HTTP/1.1 100 Continue\r\n\r\n") != Io::ok) {
    release(req, ticket);
    return false;
  }
  std::string name = random_name();
  std::string path = front_.config().spool_dir + "/" + name + ".body";
  int file = name.empty() ? -1 : ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (file < 0) {
    release(req, ticket);
    refuse(500, "Internal Server Error", "cannot store the upload");
    return false;
  }
  // the body: never more than Content-Length bytes, each piece on disk before the next is read
  long long left = req.content_length;
  Io r = Io::ok;
  bool disk_ok = true;
  auto put = [&](const char* p, size_t n) {
    while (n > 0 && disk_ok) {
      ssize_t w = ::write(file, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) disk_ok = false;
      else { p += w; n -= static_cast<size_t>(w); }
    }
  };
  size_t take = std::min(in_.size(), static_cast<size_t>(left));
  put(in_.data(), take);
  in_.clear();  // anything past the body is dropped: the connection closes after an upload
  left -= static_cast<long long>(take);
  auto deadline = body_deadline(req.content_length);
  while (left > 0 && disk_ok) {
    size_t got = 0;
    r = read_some(fd_, buf_.data(), static_cast<size_t>(std::min<long long>(left, static_cast<long long>(buf_.size()))),
                  std::min(deadline, after(idle_timeout())), &got);
    if (r != Io::ok) break;
    put(buf_.data(), got);
    left -= static_cast<long long>(got);
  }
  bool complete = ::close(file) == 0 && disk_ok && left == 0;
  if (!complete) {
    ::unlink(path.c_str());
    release(req, ticket);
    if (!disk_ok) refuse(500, "Internal Server Error", "cannot store the upload (is the server's disk full?)");
    else if (r == Io::timeout) refuse(408, "Request Timeout", "the upload stalled or came too slowly");
    return false;  // a client gone mid-upload, or the service stopping
  }
  up = upstream_connect();
  buf.clear();
  bool answered = up >= 0 && upstream_send(up, upstream_request(req, {{"X-Fsgpu-Front-Spool", name}, {"X-Fsgpu-Front-Ticket", ticket}}, "")) == Io::ok &&
                  upstream_head(up, &buf, &head_end, &status) == Io::ok;
  bool keep = false;
  bool sent = answered && relay_response(up, std::move(buf), head_end, status, false, &keep);
  if (up >= 0) ::close(up);
  ::unlink(path.c_str());  // R deletes it too; this covers an R that never answered
  if (!answered && !front_.stopping()) refuse(502, "Bad Gateway", "the service is not answering");
  if (sent) linger();
  return false;
}

}  // namespace
#endif  // _WIN32

// [[Rcpp::export]]
SEXP fsgpu_front_start(std::string host, int port, int upstream_port, std::string secret, std::string spool_dir,
                 double header_timeout, double idle_timeout, int max_connections, double min_body_rate,
                 int max_per_address) {
#ifdef _WIN32
  Rcpp::stop("serve() needs a POSIX system (Linux, macOS): its front uses POSIX sockets");
#else
  if (secret.size() < 32 || secret.find_first_not_of("0123456789abcdef") != std::string::npos)
    Rcpp::stop("the front's secret must be hexadecimal, 32 characters at least");
  Config config;
  config.secret = secret;
  config.spool_dir = spool_dir;
  config.upstream_port = upstream_port;
  config.header_timeout = header_timeout;
  config.idle_timeout = idle_timeout;
  config.max_connections = std::max(1, max_connections);
  config.min_body_rate = min_body_rate;
  config.max_per_address = std::max(1, max_per_address);
  Rcpp::XPtr<Front> front(new Front(host, port, config), true);
  front.attr("class") = "fsgpu_front";
  return front;
#endif
}

// [[Rcpp::export]]
void fsgpu_front_stop(SEXP front) {
#ifndef _WIN32
  Rcpp::XPtr<Front> xp(front);
  if (xp.get() != nullptr) xp->stop();
#endif
}
