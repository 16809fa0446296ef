// util.cpp — see util.h.
#include "util.h"

#include <unistd.h>

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

const char* host_version() { return WEFT_HOST_VERSION; }

std::string default_socket_path() {
  if (const char* s = std::getenv("WEFT_SOCKET"); s && *s) return s;
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) return std::string(x) + "/weft.sock";
  const char* user = std::getenv("USER");
  std::string u = (user && *user) ? user : std::to_string(::getuid());
  return "/tmp/weft-" + u + ".sock";
}

namespace detail {

void log_stderr(std::string_view line) {
  std::string s;
  s.reserve(line.size() + 7);
  s += "weft: ";
  s += line;
  s += '\n';
  const char* p = s.data();
  std::size_t left = s.size();
  while (left > 0) {
    ssize_t n = ::write(2, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
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
