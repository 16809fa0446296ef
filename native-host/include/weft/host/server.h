// weft/host/server.h — serve the core over Unix sockets, TCP, stdio,
// WebSocket and MCP Streamable HTTP (docs/transports.md).
//
// A Server owns an Asio io_context (single thread). Methods registered on it
// are installed on the Peer of every connection; each connection is an
// independent weft::Connection with its own framer, codec and in-flight
// requests. rpc.ping and rpc.discover are built in.
//
//   weft::host::Server server;
//   server.method("add", [](const weft::json& p) -> weft::Result<weft::json> {
//     return weft::json(p[0].get<int>() + p[1].get<int>());
//   });
//   if (auto r = server.listen_unix("/tmp/app.sock"); !r) return 1;
//   return server.run();  // until SIGINT/SIGTERM/SIGHUP (graceful) or stop()
//
// An async handler (weft::MethodHandler) answers through its weft::Reply,
// which also streams chunks to a caller that opened a stream (Reply::write,
// on_writable: docs/streams.md, "Native host"; register_bytes in builtins.h
// is one).
//
// Not thread-safe: call it from the thread that runs it (handlers run there).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "weft/codec.h"
#include "weft/connection.h"
#include "weft/framing.h"
#include "weft/peer.h"

namespace weft::host {

// WebSocket (listen_ws) and Streamable HTTP (listen_http): who may connect,
// and the limits that keep one client from holding the server
// (docs/transports.md, "Security and limits").
struct WebOptions {
  // Browser origins allowed, exactly as sent ("http://127.0.0.1:8080"); "*"
  // allows any. A request carrying an Origin header not listed is refused
  // with 403 (DNS rebinding: MCP transports, "Security Warning"). A request
  // without Origin (curl, native clients) is allowed.
  std::vector<std::string> allow_origins;
  // One WebSocket message or HTTP body, in bytes; larger is refused without
  // being buffered whole (WebSocket close 1009, HTTP 413 from its header).
  // 0 → framing_limits.max_frame.
  std::size_t max_message = 0;
  std::size_t max_header = 8192;      // HTTP request header block (431 over it)
  std::size_t max_connections = 256;  // open TCP connections per listener; beyond → 503
  Millis handshake_timeout = 10000;   // a request (or the upgrade) must arrive within this
  // WebSocket: a ping is sent after idle_timeout/2 of silence; a client that
  // answers nothing for idle_timeout is closed. HTTP: a kept-alive connection
  // with no request for this long is closed.
  Millis idle_timeout = 60000;
  // A write (WebSocket frame, HTTP response, SSE event) not taken by the
  // client within this is a slow client: its connection is closed.
  Millis write_timeout = 30000;
  // Output queued for one WebSocket connection before reading from it pauses.
  std::size_t max_queued_output = 8u << 20;
  // HTTP: the MCP endpoint's path; other paths answer 404.
  std::string http_path = "/mcp";
  // HTTP: sessions (Mcp-Session-Id) on. Off: every POST is served by a fresh
  // peer and GET/DELETE answer 405.
  bool http_sessions = true;
  std::size_t max_sessions = 1024;      // live HTTP sessions; beyond → 503
  Millis session_idle_timeout = 600000; // a session with no request and no stream ends
  // SSE events kept for Last-Event-ID replay (docs/transports.md, "Event ids
  // and resumption"): per stream, and the data of all a session keeps
  // (0: no byte limit). Oldest dropped first; a resumption that would miss a
  // dropped event is refused 400.
  std::size_t sse_replay_events = 1024;
  std::size_t sse_replay_bytes = 1u << 20;
};

// How a Server frames, decodes, limits, stops and logs.
struct ServerOptions {
  // nullopt → the transport's default: lsp on stdio, len32be on sockets.
  std::optional<Framing> framing;
  // The codec, and the limits every connection gets (framing.h, codec.h, peer.h).
  CodecKind codec = CodecKind::Json;
  FramingLimits framing_limits;
  CodecLimits codec_limits;
  PeerLimits peer_limits;
  // How long in-flight requests may still run after SIGINT/SIGTERM/SIGHUP/
  // stop(), or after a client's end of input, before their connection is closed.
  Millis grace_ms = 5000;
  // What stop() and the signals announce in $/weft/drain (docs/protocol.md,
  // "Drain"): when callers should connect again (also the data.retry_after
  // of the -32005 answers meanwhile), and the expected downtime (0: unknown).
  Millis reconnect_after_ms = 1000;
  Millis downtime_ms = 0;
  // Limits per server and per connection (docs/reliability.md; the message
  // size, nesting, batch and in-flight limits are in framing_limits,
  // codec_limits and peer_limits above). 0 turns a timeout off.
  // Connections beyond max_connections are answered one error response
  // (-32003, id null) and closed at once. The timeouts below apply to socket
  // connections; stdio (one trusted client, the parent) has none of them.
  std::size_t max_connections = 1000;
  // Reading from a connection pauses while this many bytes of answers wait to
  // be written (the client reads slowly or not at all).
  std::size_t max_output = 8u << 20;
  // The largest message one connection sends (a response, with the seed's
  // 100 MB default; requests are bounded by framing_limits.max_frame, 10 MB).
  // A larger result is answered -32603 naming its size instead. Byte-stream
  // transports (unix, tcp, stdio); 0: no limit.
  std::size_t max_response = 100u * 1000u * 1000u;
  // A connection whose socket accepts no output byte for this long is closed
  // (a client that never reads its answers).
  Millis write_timeout = 30000;
  // A connection with nothing received, in flight or queued for this long is closed.
  Millis idle_timeout = 0;
  // A partial frame not completed within framing_limits.read_timeout closes its
  // connection (slowloris), rather than only being discarded (docs/framing.md F3).
  bool close_on_frame_timeout = true;
  bool builtins = true;        // rpc.ping, rpc.discover
  // SIGINT/SIGTERM → stop() (drain reason "shutdown"); SIGHUP → drain reason
  // "reload". Either way run() returns 0 once drained: a reload is the
  // supervisor starting the process again (docs/reliability.md).
  bool handle_signals = true;
  std::string title = "weft";  // rpc.discover info.title
  // Log sink (one line, no newline). Default: stderr, "weft: " prefix.
  std::function<void(std::string_view)> log;
  WebOptions web;  // listen_ws, listen_http
  // rpc.handshake on every connection (stdio, Unix, TCP, WebSocket, and
  // each Streamable HTTP session; docs/protocol.md "Handshake"): served when
  // set, with these capabilities and the connection's name as session id
  // when it has none. "metrics" is measured with the steady clock;
  // compression as `compression` says.
  std::optional<Handshake> handshake;
  // Compression algorithms ({"zstd"}; docs/framing.md "Compression"):
  // agreed in that handshake on the length-prefixed framings
  // (ConnectionOptions::compression) and on WebSocket (compressed payloads
  // in binary frames); on Streamable HTTP, zstd request bodies
  // (Content-Encoding) are taken and JSON answers over 1 KiB are
  // zstd-encoded for a request whose Accept-Encoding allows it.
  std::vector<std::string> compression;
};

// A server of registered methods (see the top of this file).
class Server {
 public:
  // A server that listens nowhere yet (see listen_unix and the like).
  explicit Server(ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The io_context run() runs: post work or arm timers on it (async handlers).
  boost::asio::io_context& context();
  // The options it was made with.
  const ServerOptions& options() const;

  // Registration, applied to every connection (existing ones are unaffected).
  void method(std::string name, SyncHandler h, std::optional<ParamSpec> spec = std::nullopt,
              std::string description = {});
  void method(std::string name, MethodHandler h, std::optional<ParamSpec> spec = std::nullopt,
              std::string description = {});
  void notification(std::string name, NotificationHandler h,
                    std::optional<ParamSpec> spec = std::nullopt);
  // Arbitrary per-connection setup, run after the registrations above.
  void on_peer(std::function<void(Peer&)> setup);

  // Start listening (several listeners may be combined). Errors are values:
  // a live server already on `path` → error, a stale socket file → replaced.
  // The socket file gets mode 0600 and is removed when the server stops.
  Result<void> listen_unix(const std::string& path);
  // port 0 picks a free port; see tcp_port().
  Result<void> listen_tcp(const std::string& host, std::uint16_t port);
  std::uint16_t tcp_port() const;
  // WebSocket on HOST:PORT (port 0 picks one; see ws_port()): one JSON-RPC
  // message or batch per frame; JSON in text frames, or MessagePack in binary
  // frames when the client asks for the "weft.msgpack" subprotocol.
  Result<void> listen_ws(const std::string& host, std::uint16_t port);
  std::uint16_t ws_port() const;
  // MCP Streamable HTTP on HOST:PORT at options().web.http_path (port 0 picks
  // one; see http_port()).
  Result<void> listen_http(const std::string& host, std::uint16_t port);
  std::uint16_t http_port() const;
  // Serve one connection over stdin/stdout. stdout then carries only frames:
  // fd 1 is redirected to stderr so stray prints cannot corrupt the stream.
  // When stdin ends (and its requests are answered) the server stops.
  Result<void> serve_stdio();

  // Runs until stopped; returns 0 after a clean stop.
  int run();
  // Graceful stop: stop accepting, send $/weft/drain (reason "shutdown",
  // reconnect_after_ms, downtime_ms) on every open connection, refuse new
  // requests on them with -32005, let in-flight requests finish (at most
  // grace_ms), close connections, remove socket files, return from run().
  void stop();
  // The same with another notice (SIGHUP uses reason "reload"). Only the
  // first stop() or drain() counts.
  void drain(DrainNotice notice);

  // Connections open now, and when the server started (now_ms()).
  std::size_t connections() const;
  Millis started_ms() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Milliseconds on std::chrono::steady_clock: the `now` the core is given.
Millis now_ms();
// Microseconds on the same clock: PeerOptions::clock_us, for per-response
// metrics (docs/protocol.md "Metrics").
std::int64_t now_us();

}  // namespace weft::host
