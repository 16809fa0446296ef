// util.cpp — see util.h.
#include "util.h"

#include <limits.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>

#include "weft/host/builtins.h"
#include "weft/host/client.h"
#include "weft/host/server.h"

#ifndef WEFT_HOST_VERSION
#define WEFT_HOST_VERSION "0.0.0"
#endif

namespace weft::host {

Millis now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

std::int64_t now_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

const char* host_version() { return WEFT_HOST_VERSION; }

std::string default_socket_path() {
  if (const char* s = std::getenv("WEFT_SOCKET"); s && *s) return s;
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) return std::string(x) + "/weft.sock";
  const char* user = std::getenv("USER");
  std::string u = (user && *user) ? user : std::to_string(::getuid());
  return "/tmp/weft-" + u + ".sock";
}

namespace detail {

// The log must never stop the server: a stderr pipe that nobody drains would
// block write(2), and with it the one thread that serves every connection and
// runs the shutdown grace timer. So a line is written only when stderr has
// room (a line of at most PIPE_BUF bytes is written whole, POSIX write(2)),
// otherwise it is dropped and counted; the next line written says how many.
void log_stderr(std::string_view line) {
  static std::size_t dropped = 0;
  pollfd p{2, POLLOUT, 0};
  int rc;
  do {
    rc = ::poll(&p, 1, 0);
  } while (rc < 0 && errno == EINTR);
  if (rc <= 0 || !(p.revents & POLLOUT)) {
    ++dropped;
    return;
  }
  std::string s = "weft: ";
  if (dropped) {
    s += '(';
    s += std::to_string(dropped);
    s += " log lines dropped: stderr was full) ";
  }
  s.append(line.data(), std::min(line.size(), std::size_t(PIPE_BUF) - 1 - s.size()));
  s += '\n';
  ssize_t n;
  do {
    n = ::write(2, s.data(), s.size());
  } while (n < 0 && errno == EINTR);
  if (n > 0) dropped = 0;
}

std::function<void(std::string_view)> default_log() { return &log_stderr; }

bool env_millis(const char* name, Millis& out) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v, &end, 10);
  if (errno != 0 || *end != '\0' || x < 0) return false;
  out = static_cast<Millis>(x);
  return true;
}

void ignore_sigpipe() {
  static const bool done = [] {
    std::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)done;
}

}  // namespace detail
}  // namespace weft::host
