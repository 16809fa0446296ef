// child.cpp — see child.h.
#include "child.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace weft::host::detail {

Result<Child> spawn_shell(const std::string& command) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0)
    return Error(code::kServerError, std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(in[0]);
    ::close(in[1]);
    return Error(code::kServerError, std::string("pipe: ") + std::strerror(e));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);   // dup2 clears FD_CLOEXEC
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &def);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, "/bin/sh", &fa, &attr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    return Error(code::kServerError, std::string("spawn /bin/sh: ") + std::strerror(rc));
  }
  return Child{pid, in[1], out[0]};
}

int reap_child(pid_t pid, Millis grace) {
  if (pid <= 0) return -1;
  int status = 0;
  auto wait_for = [&](Millis ms) {
    for (Millis waited = 0;; waited += 10) {
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) return true;
      if (r < 0 && errno != EINTR) return true;  // not our child any more
      if (waited >= ms) return false;
      timespec ts{0, 10 * 1000 * 1000};
      ::nanosleep(&ts, nullptr);
    }
  };
  if (wait_for(grace)) return status;
  ::kill(pid, SIGTERM);
  if (wait_for(1000)) return status;
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace weft::host::detail
