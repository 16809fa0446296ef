// util.h — small helpers shared by the host sources.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "weft/framing.h"

namespace weft::host::detail {

// Writes "weft: <line>\n" to stderr in one write(2).
void log_stderr(std::string_view line);
std::function<void(std::string_view)> default_log();

// Reads an integer from the environment (tests shorten timeouts with it).
bool env_millis(const char* name, Millis& out);

// "HOST:PORT", "[v6]:PORT". False on a malformed value or port > 65535.
bool parse_host_port(std::string_view s, std::string& host, std::uint16_t& port);

// Ignore SIGPIPE once per process: a vanished peer becomes EPIPE, not death.
void ignore_sigpipe();

}  // namespace weft::host::detail
