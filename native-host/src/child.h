// child.h — spawning a command with pipes on its stdin/stdout (LSP-style).
#pragma once

#include <sys/types.h>

#include <string>

#include "weft/error.h"
#include "weft/framing.h"

namespace weft::host::detail {

struct Child {
  pid_t pid = -1;
  int to_child = -1;    // write end: the child's stdin
  int from_child = -1;  // read end: the child's stdout
};

// Runs `/bin/sh -c command`; its stderr is inherited. SIGPIPE is restored to
// its default in the child.
Result<Child> spawn_shell(const std::string& command);

// Waits up to `grace` ms for the child to exit, then SIGTERM, then SIGKILL.
// Returns its wait status (or -1).
int reap_child(pid_t pid, Millis grace);

}  // namespace weft::host::detail
