// util.h — small helpers shared by the host sources.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "weft/framing.h"

namespace weft::host::detail {

// Writes "weft: <line>\n" to stderr in one write(2), never blocking: when
// stderr has no room the line is dropped (and counted in the next one).
void log_stderr(std::string_view line);
std::function<void(std::string_view)> default_log();

// Reads an integer from the environment (tests shorten timeouts with it).
bool env_millis(const char* name, Millis& out);

// Ignore SIGPIPE once per process: a vanished peer becomes EPIPE, not death.
void ignore_sigpipe();

}  // namespace weft::host::detail
