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

#include "weft/host/server.h"

extern char** environ;

namespace weft::host::detail {

Result<Child> spawn_shell(const std::string& command, bool capture_stderr) {
  int in[2], out[2], err[2] = {-1, -1};
  if (::pipe2(in, O_CLOEXEC) != 0)
    return Error(code::kServerError, std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(in[0]);
    ::close(in[1]);
    return Error(code::kServerError, std::string("pipe: ") + std::strerror(e));
  }
  if (capture_stderr && ::pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    return Error(code::kServerError, std::string("pipe: ") + std::strerror(e));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);   // dup2 clears FD_CLOEXEC
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  if (capture_stderr) posix_spawn_file_actions_adddup2(&fa, err[1], 2);
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
  if (capture_stderr) ::close(err[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    if (capture_stderr) ::close(err[0]);
    return Error(code::kServerError, std::string("spawn /bin/sh: ") + std::strerror(rc));
  }
  return Child{pid, in[1], out[0], err[0]};
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

std::string describe_wait_status(int st) {
  if (WIFEXITED(st)) return "exited with status " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st))
    return "killed by signal " + std::to_string(WTERMSIG(st)) + " (" + ::strsignal(WTERMSIG(st)) + ")";
  return "stopped";
}

// ---- ChildWatch -------------------------------------------------------------

namespace {
constexpr Millis kTick = 20;         // exit polling while settling or stopping
constexpr Millis kTermToKill = 1000;
}  // namespace

ChildWatch::ChildWatch(boost::asio::io_context& io, Child child, Millis grace,
                       std::function<void(std::string_view)> passthrough, std::size_t tail_bytes)
    : io_(io), child_(child), grace_(grace), passthrough_(std::move(passthrough)),
      tail_bytes_(tail_bytes), timer_(io) {
  if (child_.err_from_child >= 0) err_.emplace(io_, child_.err_from_child);
  else stderr_done_ = true;
}

ChildWatch::~ChildWatch() {
  boost::system::error_code ec;
  if (err_) err_->close(ec);
  if (!status_ && child_.pid > 0) reap_child(child_.pid, grace_);
}

void ChildWatch::start() { read_stderr(); }

void ChildWatch::read_stderr() {
  if (!err_ || stderr_done_) return;
  err_->async_read_some(boost::asio::buffer(buf_), [w = weak_from_this()](const boost::system::error_code& ec,
                                                                           std::size_t n) {
    auto self = w.lock();
    if (!self) return;
    if (n > 0) {
      std::string_view chunk(self->buf_, n);
      if (self->passthrough_) self->passthrough_(chunk);
      self->tail_.append(chunk);
      if (self->tail_.size() > 2 * self->tail_bytes_) self->tail_.erase(0, self->tail_.size() - self->tail_bytes_);
    }
    if (ec) {
      self->stderr_done_ = true;
      self->check_settled();
      return;
    }
    self->read_stderr();
  });
}

bool ChildWatch::poll_exit() {
  if (status_) return true;
  if (child_.pid <= 0) return true;
  int st = 0;
  pid_t r = ::waitpid(child_.pid, &st, WNOHANG);
  if (r == child_.pid) {
    status_ = st;
    return true;
  }
  if (r < 0 && errno == ECHILD) {
    status_ = -1;  // reaped elsewhere
    return true;
  }
  return false;
}

void ChildWatch::tick() {
  const Millis now = now_ms();
  poll_exit();
  if (!status_ && stop_at_) {
    // The escalation after stop(): grace, SIGTERM, one second, SIGKILL.
    if (signals_sent_ == 0 && now >= *stop_at_ + grace_) {
      ::kill(child_.pid, SIGTERM);
      signals_sent_ = 1;
    } else if (signals_sent_ == 1 && now >= *stop_at_ + grace_ + kTermToKill) {
      ::kill(child_.pid, SIGKILL);
      signals_sent_ = 2;
    }
  }
  check_settled();
  const bool waiting = settled_ != nullptr || (stop_at_ && !status_);
  if (!waiting) return;
  timer_.expires_after(std::chrono::milliseconds(kTick));
  // While stopping, the pending wait owns the watch: a child is never left
  // unreaped because its link was released first.
  if (stop_at_ && !status_) {
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->tick();
    });
  } else {
    timer_.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
      if (auto self = w.lock(); self && !ec) self->tick();
    });
  }
}

void ChildWatch::check_settled() {
  if (!settled_) return;
  poll_exit();
  const bool done = (stderr_done_ && status_) || (settle_by_ && now_ms() >= *settle_by_);
  if (!done) return;
  auto f = std::move(settled_);
  settled_ = nullptr;
  f();
}

void ChildWatch::settle(Millis wait_ms, std::function<void()> then) {
  settled_ = std::move(then);
  settle_by_ = now_ms() + wait_ms;
  tick();
}

void ChildWatch::stop() {
  if (stop_at_) return;
  stop_at_ = now_ms();
  tick();
}

std::string ChildWatch::stderr_tail() const {
  std::string t = tail_.size() > tail_bytes_ ? tail_.substr(tail_.size() - tail_bytes_) : tail_;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  return t;
}

std::string ChildWatch::context() const {
  std::string s;
  if (status_ && *status_ != -1) s += "; child " + describe_wait_status(*status_);
  std::string tail = stderr_tail();
  if (!tail.empty()) s += "; its stderr ended with: " + tail;
  return s;
}

}  // namespace weft::host::detail
