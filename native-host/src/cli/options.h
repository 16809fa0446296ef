// options.h — parsing the `weft` command line (no I/O; unit-tested).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/codec.h"
#include "weft/error.h"
#include "weft/framing.h"

namespace weft::cli {

enum class Command { None, Serve, Call, Notify };
enum class Transport { Default, Stdio, Unix, Tcp, Exec, Address };

struct Options {
  Command command = Command::None;
  bool help = false;     // print usage of `command` (or the overview) and exit 0
  bool version = false;
  Transport transport = Transport::Default;
  std::string unix_path;
  std::string host;
  std::uint16_t port = 0;
  std::string exec;
  std::string address;   // call/notify --connect ADDR (unix:, tcp:, exec:, ws://, http://)
  bool session = false;  // call --session: one request per stdin line, one answer per line
  bool stream = false;   // call --stream: chunks as JSON lines, then the result
  std::optional<Framing> framing;
  CodecKind codec = CodecKind::Json;
  bool demo = false;
  // serve: --handshake serves rpc.handshake; --metrics and --compress zstd
  // add those capabilities (and imply --handshake). call: offer them.
  bool handshake = false;
  bool metrics = false;
  std::vector<std::string> compress;
  // serve --ws / --http (with or without one of the transports above) and
  // their web options (ServerOptions::web).
  struct Listen {
    std::string host;
    std::uint16_t port = 0;
  };
  std::optional<Listen> ws, http;
  std::string http_path;                   // --http-path (empty: the default)
  bool http_sessions = true;               // --http-stateless clears it
  std::vector<std::string> allow_origins;  // --allow-origin (repeatable)
  std::optional<std::size_t> max_message;  // --max-message BYTES
  std::optional<std::size_t> max_connections;
  std::optional<Millis> idle_timeout_ms;
  // --http sessions: how many live at once, how long one may sit idle, and
  // the SSE data each keeps for Last-Event-ID replay (WebOptions).
  std::optional<std::size_t> max_sessions;
  std::optional<Millis> session_idle_timeout_ms;
  std::optional<std::size_t> sse_replay_bytes;
  std::optional<std::size_t> max_depth;  // --max-depth: CodecLimits::max_depth (unset: the core's default)
  // More weft serve limits (docs/reliability.md); unset: ServerOptions'
  // defaults. --max-message, --max-connections and --idle-timeout above apply
  // to the socket listeners too.
  struct ServeLimits {
    std::optional<std::size_t> max_in_flight;    // --max-in-flight N: PeerLimits::max_in_flight
    std::optional<std::size_t> max_batch;        // --max-batch N: PeerLimits::max_batch
    std::optional<std::size_t> max_output;       // --max-output BYTES
    std::optional<std::size_t> max_response;     // --max-response BYTES: ServerOptions::max_response
    std::optional<Millis> frame_timeout;         // --frame-timeout MS: FramingLimits::read_timeout
    std::optional<Millis> write_timeout;         // --write-timeout MS
    std::optional<Millis> grace;                 // --grace MS
    std::optional<Millis> reconnect_after;       // --reconnect-after MS: $/weft/drain reconnect_after
    std::optional<Millis> downtime;              // --downtime MS: $/weft/drain downtime
  } limits;
  std::optional<Millis> timeout_ms;
  int retries = 3;
  bool verbose = false;
  std::string method;
  std::optional<json> params;
};

struct Parsed {
  Options options;
  std::string error;  // non-empty: one-line usage error, exit 2
};

// args excludes argv[0].
Parsed parse(const std::vector<std::string>& args);

std::string usage(Command c);

}  // namespace weft::cli
