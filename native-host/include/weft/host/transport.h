// weft/host/transport.h — the byte transports of the native host, and the
// framing each uses unless told otherwise (ServerOptions::framing,
// ClientOptions::framing). Decided here, once, for the server, the client
// and the CLI.
#pragma once

#include "weft/framing.h"

namespace weft::host {

// The byte transports: stdin/stdout, a child's pipes, a Unix socket, TCP.
enum class Transport { Stdio, Exec, Unix, Tcp };

// Streams shared with editors and language tooling (stdio, a child's pipes)
// speak the LSP base protocol, the framing those peers expect; sockets use
// the 4-byte big-endian length prefix, the cheapest to decode (framing.md).
constexpr Framing default_framing(Transport t) {
  return t == Transport::Stdio || t == Transport::Exec ? Framing::Lsp : Framing::Len32Be;
}

}  // namespace weft::host
