// weft/host/client.h — one-shot client calls over a Unix socket, TCP, or a
// child process's stdin/stdout (the way editors talk to LSP servers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "weft/codec.h"
#include "weft/error.h"
#include "weft/framing.h"

namespace weft::host {

struct Endpoint {
  enum class Kind { Unix, Tcp, Exec };
  Kind kind = Kind::Unix;
  std::string path;          // Unix
  std::string host;          // Tcp
  std::uint16_t port = 0;    // Tcp
  std::string command;       // Exec: run with /bin/sh -c
};

struct ClientOptions {
  Endpoint endpoint;
  std::optional<Framing> framing;  // nullopt → lsp for Exec, len32be for sockets
  CodecKind codec = CodecKind::Json;
  CodecLimits codec_limits;        // max_depth: nesting accepted in the reply (codec.h)
  std::optional<Millis> timeout;   // per request (and per connect attempt)
  // Connection refused / socket missing: retry up to `retries` times after
  // backoff_ms·2^k (k = 0, 1, …) plus up to 25 % random jitter.
  int retries = 3;
  Millis backoff_ms = 100;
  bool verbose = false;            // log retries to stderr
};

struct Outcome {
  enum class Status { Ok, RemoteError, ConnectFailed, Timeout };
  Status status = Status::Ok;
  json result;          // Ok
  Error error;          // RemoteError: the response's error; otherwise why it failed
  int attempts = 0;     // connection attempts made
  // CLI exit codes: 0 ok, 1 error response, 3 connection failure, 4 timeout.
  int exit_code() const;
};

// Connects, sends one request, waits for its response.
Outcome call(const ClientOptions& options, const std::string& method,
             const std::optional<json>& params);
// Connects, sends one notification; Ok once it is written.
Outcome notify(const ClientOptions& options, const std::string& method,
               const std::optional<json>& params);

// The default socket path: $WEFT_SOCKET, else $XDG_RUNTIME_DIR/weft.sock,
// else /tmp/weft-$USER.sock.
std::string default_socket_path();

}  // namespace weft::host
