// child.h — spawning a command with pipes on its stdin/stdout (LSP-style),
// watching its stderr and its exit, so that a child that crashes, hangs or
// writes garbage becomes a clear error instead of a hang.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "weft/error.h"
#include "weft/framing.h"

namespace weft::host::detail {

struct Child {
  pid_t pid = -1;
  int to_child = -1;    // write end: the child's stdin
  int from_child = -1;  // read end: the child's stdout
  int err_from_child = -1;  // read end of the child's stderr (capture_stderr), else -1
};

// Runs `/bin/sh -c command`. Its stderr is inherited, or piped to us with
// `capture_stderr`. SIGPIPE is restored to its default in the child.
Result<Child> spawn_shell(const std::string& command, bool capture_stderr = false);

// Waits up to `grace` ms for the child to exit, then SIGTERM, then SIGKILL.
// Returns its wait status (or -1). Blocks: for one-shot use and destructors.
int reap_child(pid_t pid, Millis grace);

// "exited with status 3", "killed by signal 9 (Killed)".
std::string describe_wait_status(int status);

// A running child on an io_context: passes its stderr through to `passthrough`
// (raw bytes) while keeping the last `tail_bytes` of it, notices its exit and
// ends it without blocking: after stop(), `grace` ms to exit on its own (its
// stdin is closed by then), then SIGTERM, one second, SIGKILL.
class ChildWatch : public std::enable_shared_from_this<ChildWatch> {
 public:
  ChildWatch(boost::asio::io_context& io, Child child, Millis grace,
             std::function<void(std::string_view)> passthrough, std::size_t tail_bytes = 2048);
  ~ChildWatch();  // a child still running is reaped (blocking, bounded by the grace)

  void start();
  // Calls `then` once the child's stderr has ended and it has exited, or after
  // `wait_ms`, whichever is first (a crashed child: both happen at once).
  void settle(Millis wait_ms, std::function<void()> then);
  // Ends the child (see above); idempotent.
  void stop();

  pid_t pid() const { return child_.pid; }
  std::optional<int> exit_status() const { return status_; }
  // The end of its stderr, trimmed, at most tail_bytes.
  std::string stderr_tail() const;
  // "; child exited with status 1; its stderr ended with: …" (empty if nothing to say).
  std::string context() const;

 private:
  void read_stderr();
  bool poll_exit();
  void tick();
  void check_settled();

  boost::asio::io_context& io_;
  Child child_;
  Millis grace_;
  std::function<void(std::string_view)> passthrough_;
  std::size_t tail_bytes_;
  std::optional<boost::asio::posix::stream_descriptor> err_;
  boost::asio::steady_timer timer_;
  char buf_[4096];
  std::string tail_;
  bool stderr_done_ = false;
  std::optional<int> status_;
  std::function<void()> settled_;
  std::optional<Millis> settle_by_;
  std::optional<Millis> stop_at_;  // when stop() was called
  int signals_sent_ = 0;
};

}  // namespace weft::host::detail
