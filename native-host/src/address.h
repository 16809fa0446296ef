// address.h — the one address string that chooses a client transport.
//
//   unix:/run/app.sock        Unix socket (len32be by default)
//   tcp:127.0.0.1:7000        TCP; IPv6 as tcp:[::1]:7000 (len32be by default)
//   exec:weft serve --stdio   run the rest with /bin/sh -c, talk over its
//                             stdin/stdout (lsp by default, transport.h)
//   ws://127.0.0.1:7001/rpc   WebSocket: one message (or batch) per text frame
//                             (binary frames with MessagePack)
//   http://127.0.0.1:7002/mcp MCP Streamable HTTP: one POST per message
//
// TLS (wss://, https://) is not supported: the error says so.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "weft/error.h"

namespace weft::host::detail {

struct Address {
  enum class Kind { Unix, Tcp, Exec, WebSocket, Http };
  Kind kind = Kind::Unix;
  std::string path;         // Unix: socket path; WebSocket/Http: request target ("/" at least)
  std::string host;         // Tcp, WebSocket, Http (without IPv6 brackets)
  std::uint16_t port = 0;   // Tcp, WebSocket, Http (80 when a URL omits it)
  std::string command;      // Exec
  std::string text;         // the address as given, for messages
};

// Errors are -32602 with a message naming what is wrong and the accepted forms.
Result<Address> parse_address(std::string_view text);

// "host:port" or "[v6]:port" → host and port (port 0..65535).
bool split_host_port(std::string_view s, std::string& host, std::uint16_t& port);

}  // namespace weft::host::detail
