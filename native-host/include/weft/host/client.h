// weft/host/client.h — the native client: one persistent, multiplexed
// connection (Client), a blocking wrapper (BlockingClient) and the one-shot
// call()/notify() the CLI has always used.
//
// One address string chooses the transport:
//   unix:/run/app.sock   tcp:127.0.0.1:7000   exec:weft serve --stdio
//   ws://127.0.0.1:7001/rpc  (one message per text frame)
//   http://127.0.0.1:7002/mcp  (MCP Streamable HTTP: POST, JSON or SSE answers)
//
// A Client keeps one connection and many calls in flight on it; the core's
// weft::Peer matches answers to calls by id, serves the methods the client
// registers (requests from the server) and sends $/cancelRequest. Async use
// on the caller's Boost.Asio io_context:
//
//   weft::host::Client c(io, {.address = "unix:/tmp/app.sock"});
//   c.call("add", weft::json{{"a", 1}, {"b", 2}}, {}, [](weft::host::Outcome o) {
//     if (o.ok()) std::cout << o.result << "\n";
//   });
//
// Rules (docs/protocol.md, "The native client"):
// - Calls made before the connection is up wait for it (connecting is lazy).
// - When the connection closes, every call on it fails once with -32002
//   (Status::ConnectFailed), the message naming the address and the reason
//   (for exec: the child's exit status and the tail of its stderr) — unless the
//   call opted into retry (CallPolicy::retry, for idempotent calls): then it is
//   sent again on the next connection, at most `max_attempts` times in all.
// - A call the link cannot deliver (over max_request, never sent; over
//   http://, a POST answered with an HTTP error status or whose event stream
//   ends before the answer) fails with -32002 too (Status::ConnectFailed):
//   no JSON-RPC answer came.
// - Reconnecting: attempt k waits base·2^k + rand(base·2^k / 4) ms (100 ms,
//   200 + rand(50), 400 + rand(100), …), at most `connect_attempts` attempts;
//   then the waiting calls fail with -32002 and the next call starts again.
// - A timeout covers the whole call (waiting for the connection, retries); on
//   expiry the call fails with -32001 (Status::Timeout) and the server is sent
//   $/cancelRequest so that it can stop the work.
// - cancel(): the call settles at once with -32800 (Status::Cancelled) and the
//   server is sent $/cancelRequest.
// - Drain (docs/protocol.md, "Drain"): when the server sends $/weft/drain,
//   ClientConfig::on_drain is told; nothing new is sent on that connection;
//   the calls on it get their answers, once; then the client closes it, waits
//   the notice's reconnect_after (plus up to 10% jitter) and connects again.
//   Calls and notifications made meanwhile wait for the new connection (at
//   most peer_limits.max_pending calls; beyond, -32003) and are sent there,
//   once. A call with retry that the draining server answered -32005 (sent
//   before the notice arrived, so never run) waits the same way, instead of
//   also being scheduled by the retry backoff; one without retry fails with
//   that -32005. With `reconnect` false, calls made meanwhile fail at once
//   with -32005 (data: retry_after, reason), the core's rule.
// - Bytes the client cannot decode (bad frame, wrong codec, a child writing
//   garbage on stdout) close the connection: the stream can no longer be
//   trusted to match answers to calls.
// - Every completion runs exactly once, on the io_context's thread; destroying
//   the Client completes its pending calls with -32002.
//
// Not thread-safe: use a Client from the thread that runs its io_context.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/async_result.hpp>
#include <boost/asio/io_context.hpp>

#include "weft/codec.h"
#include "weft/error.h"
#include "weft/framing.h"
#include "weft/peer.h"

namespace weft::host {

// What a call came to: a result, an error answer, or a local failure.
struct Outcome {
  // Which of those, and the status of this outcome.
  enum class Status { Ok, RemoteError, ConnectFailed, Timeout, Cancelled };
  Status status = Status::Ok;
  json result;          // Ok
  Error error;          // RemoteError: the server's error; otherwise why the call failed
                        // (-32002 ConnectFailed, -32001 Timeout, -32800 Cancelled)
  int attempts = 0;     // connection attempts (one-shot call/notify) or sends (Client)
  // The answer's metrics, when a handshake agreed on "metrics"
  // (ClientConfig::handshake; docs/protocol.md "Metrics").
  std::optional<ResponseMetrics> metrics{};
  // True when a result came back.
  bool ok() const { return status == Status::Ok; }
  // CLI exit codes: 0 ok, 1 error response (or cancelled), 3 connection failure, 4 timeout.
  int exit_code() const;
};

// How a Client connects, frames, limits, retries and logs.
struct ClientConfig {
  std::string address;             // see above; a bad address fails each call with -32602
  std::optional<Framing> framing;  // byte transports; nullopt → transport.h's default
  CodecKind codec = CodecKind::Json;  // ws: MessagePack travels in binary frames
  // Frame size, header size and read timeout of byte transports (framing.h).
  // max_frame bounds what the server sends, a response: 100 MB by default
  // (the server's own default for requests is 10 MB).
  FramingLimits framing_limits{100u * 1000u * 1000u};
  // The largest request this client sends, in bytes (0: no limit): a larger
  // one is not sent; its call fails at once with -32002 naming the size.
  // Byte transports (unix, tcp, exec).
  std::size_t max_request = 10u * 1000u * 1000u;
  CodecLimits codec_limits;        // max_depth accepted in what the server sends
  PeerLimits peer_limits;          // max_pending: calls in flight on one connection
  std::optional<Millis> default_timeout;  // for calls without their own; nullopt = none
  // Connecting: attempts per (re)connection, first one included (≥ 1).
  int connect_attempts = 5;
  Millis backoff_ms = 100;         // base of the backoff schedule above
  // After an established connection drops, connect again at once (with the
  // backoff above) even when no call is waiting, so that the server's
  // notifications and requests keep arriving. false: reconnect on the next call.
  bool reconnect = true;
  // exec: how long the child may take to exit after its stdin is closed,
  // before SIGTERM (then SIGKILL one second later).
  Millis child_grace_ms = 2000;
  // One line per event (connect failures, retries, undecodable input).
  // Default: stderr with a "weft: " prefix. An exec child's stderr is passed
  // through to our stderr unchanged (and its tail kept for error messages).
  std::function<void(std::string_view)> log;
  bool verbose = false;            // also log each reconnect / retry
  // The server announced a drain ($/weft/drain: reason, downtime,
  // reconnect_after); the client acts on it as described above. Optional.
  std::function<void(const DrainNotice&)> on_drain;
  // rpc.handshake (docs/protocol.md "Handshake"), on every transport:
  // offered on each connection before any call is sent, calls waiting for
  // the answer (http: once per Mcp-Session-Id, on the link's first POST). A server that does not serve it (-32601) is used
  // as it is; any other failure closes the connection (-32002, naming it).
  // Its compression members are set from `compression`.
  std::optional<Handshake> handshake;
  // Compression ({"zstd"}; docs/framing.md "Compression"): offered in that
  // handshake on the len32 framings (ConnectionOptions::compression) and on
  // WebSocket, where compressed payloads travel in binary frames; on
  // Streamable HTTP asked for with `Accept-Encoding: zstd` instead, and
  // zstd-encoded answers inflated.
  std::vector<std::string> compression;
};

// Options of one Client call: its timeout, and whether it may be retried.
struct CallPolicy {
  std::optional<Millis> timeout;   // whole call; nullopt → ClientConfig::default_timeout
  // Idempotent calls only: send again after the connection dropped, or after
  // a retryable error answer (-32001, -32003, -32004, -32005: weft::retryable),
  // waiting weft::retry_delay (100 ms, 200 + rand(50), …, or the error's
  // data.retry_after when longer); at most `max_attempts` sends, and never
  // more than weft::kMaxAttempts (5) after retryable answers.
  bool retry = false;
  int max_attempts = 5;
};

using CallId = std::uint64_t;  // a Client's handle for one call (not the wire id)
// Receives a call's Outcome, once.
using Completion = std::function<void(Outcome)>;

// Options of one streamed call (Client::stream, docs/streams.md "Native
// host"). Credit is the backpressure: the server sends at most `credit`
// chunks beyond those the consumer has taken, so at most that many are ever
// in flight or waiting, whatever the consumer's speed.
struct StreamPolicy {
  // The high-water mark: chunks the server may send before more are
  // granted (clamped by the server to its max_stream_credit, 1,024).
  std::uint32_t credit = 16;
  // Silence, not length: fails with -32001 when no chunk arrives and no
  // credit is granted for this long (the server is sent $/cancelRequest).
  // nullopt → ClientConfig::default_timeout.
  std::optional<Millis> timeout;
  // true: a chunk counts as consumed once on_chunk returns, and consumed
  // chunks are granted back (in steps of credit/4), except while the stream
  // is paused. false: nothing is granted until Client::grant.
  bool auto_grant = true;
};
// Receives each chunk of a streamed call, in order (seq from 0), on the
// io_context's thread; the Completion then gets the final answer.
using ChunkReceiver = std::function<void(Chunk&&)>;

// A persistent client: one connection (re)opened as needed, many calls in
// flight on it, run on the caller's io_context (see the top of this file).
class Client {
 public:
  // Where the connection is.
  enum class State { Idle, Connecting, Open, Closed };

  // A client on `io`; it connects at the first call (or connect()).
  Client(boost::asio::io_context& io, ClientConfig config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Methods the server may call on us (registered on every connection's Peer).
  void method(std::string name, MethodHandler h, std::optional<ParamSpec> spec = std::nullopt);
  void method(std::string name, SyncHandler h, std::optional<ParamSpec> spec = std::nullopt);
  void notification(std::string name, NotificationHandler h);

  // Starts connecting now instead of at the first call.
  void connect();
  CallId call(std::string method, std::optional<json> params, CallPolicy policy, Completion done);
  // Queued until connected; fails (-32002) only once the client is closed,
  // or (-32602) for params that are neither an array nor an object.
  Result<void> notify(std::string method, std::optional<json> params);
  // A streamed call (docs/streams.md): $/weft/open with policy.credit, then
  // the request; chunks arrive at on_chunk, the final answer at done. A
  // stream is never sent again (policy.retry does not apply): a connection
  // that drops fails it with -32002. Errors as call(); a chunk that breaks
  // the stream's rules (out of order, beyond the credit, larger than
  // peer_limits.max_stream_chunk) fails it with -32600.
  CallId stream(std::string method, std::optional<json> params, StreamPolicy policy,
                ChunkReceiver on_chunk, Completion done);
  // Lets the server send n more chunks of stream `id` (needed with
  // auto_grant false; adds to it otherwise). False if `id` is not a stream
  // on the wire.
  bool grant(CallId id, std::uint32_t n);
  // auto_grant streams: pause stops granting (the server stops once its
  // credit is spent); resume grants what was consumed meanwhile. False if
  // `id` is not a pending stream.
  bool pause(CallId id);
  bool resume(CallId id);
  // Settles the call with -32800 now; false when it has already settled.
  // For a stream: no chunk is delivered after it; the server is sent
  // $/cancelRequest and drops what it had queued.
  bool cancel(CallId id);

  // Writes what is queued, then closes; pending calls fail with -32002.
  // During a drain, what waits for the next connection (calls and
  // notifications made meanwhile) is what is queued: the connection that
  // drains closes now, the next one opens after reconnect_after, is written
  // to and closes. `done` runs once the (last) connection is closed.
  void shutdown(std::function<void()> done = {});
  // Closes now; pending calls fail with -32002. The client can be used again
  // (the next call connects) unless `for_good`.
  void close(bool for_good = true);

  // Where the connection is now.
  State state() const;
  std::size_t pending() const;   // calls not settled yet
  std::uint64_t connections() const;  // connections established so far
  // Why the last connection ended or the last attempt to connect failed.
  const std::optional<Error>& last_error() const;
  // Notifications that were never sent, each logged (no answer would tell):
  // the transport took them but could not send them (over `max_request`, a
  // NaN in params; http: refused with an HTTP error status), their
  // connection closed before they reached its socket, or they were still
  // waiting for a connection when it could not be made or the client closed.
  std::size_t unsent_notifications() const;
  // Notifications waiting for a connection (made while connecting, or while
  // a drained connection closes and the next one opens): sent once it opens.
  std::size_t queued_notifications() const;
  // Connection events, e.g. for logs: true when one opens, false when it closes.
  std::function<void(bool open, const std::string& why)> on_connection;

  // The io_context it runs on.
  boost::asio::io_context& context();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Client::call with any Asio completion token: a handler, use_future,
// use_awaitable (C++20 coroutines), … The signature is void(Outcome).
//   Outcome o = co_await weft::host::async_call(client, "sum", weft::json{1, 2}, {},
//                                               boost::asio::use_awaitable);
template <class CompletionToken>
auto async_call(Client& client, std::string method, std::optional<json> params, CallPolicy policy,
                CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(Outcome)>(
      [&client](auto handler, std::string m, std::optional<json> p, CallPolicy pol) {
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        client.call(std::move(m), std::move(p), pol, [h](Outcome o) { (*h)(std::move(o)); });
      },
      token, std::move(method), std::move(params), policy);
}

class BlockingClient;

// A streamed call pulled chunk by chunk (BlockingClient::stream): next()
// runs the loop until a chunk is there. Credit is granted as chunks are
// taken, so a caller that stops calling next() stops the server after
// StreamPolicy::credit chunks. Destroying it unfinished cancels the call.
class BlockingStream {
 public:
  // Moving hands the call over; the moved-from stream is inert.
  BlockingStream(BlockingStream&&) noexcept;
  // Cancels this stream's call if unfinished, then takes over `o`'s.
  BlockingStream& operator=(BlockingStream&& o) noexcept;
  // Cancels the call if it has not ended. Must not outlive its BlockingClient.
  ~BlockingStream();
  // The next chunk, or nullopt once the call has ended (then outcome()
  // says how: the final result, or why it failed).
  std::optional<Chunk> next();
  // Valid once next() returned nullopt.
  const Outcome& outcome() const;
  // Cancels the call: chunks not yet taken are dropped, next() returns
  // nullopt and outcome() is Cancelled (-32800).
  void cancel();

 private:
  friend class BlockingClient;
  struct State;
  BlockingStream(BlockingClient* owner, std::shared_ptr<State> st) : owner_(owner), st_(std::move(st)) {}
  BlockingClient* owner_ = nullptr;
  std::shared_ptr<State> st_;
};

// The same client for code without an event loop of its own (the CLI): owns
// an io_context and runs it inside each blocking call.
class BlockingClient {
 public:
  // A client with its own io_context, run by the calls below.
  explicit BlockingClient(ClientConfig config);
  ~BlockingClient();
  // The Client inside, and the io_context it runs on.
  Client& client() { return *client_; }
  boost::asio::io_context& context() { return io_; }

  // Makes the call and runs the loop until its Outcome is in.
  Outcome call(const std::string& method, const std::optional<json>& params, CallPolicy policy = {});
  // Ok once the notification is written (the connection is closed then):
  // at once on an open connection; else once one opens (during a drain, the
  // next one). Failures are classed as Client::call classes them:
  // - ConnectFailed (-32002) when it was not written, whatever the reason
  //   (no connection, one that closed first, one the server refused, the
  //   client already closed);
  // - ConnectFailed (-32602, "bad address ...") when the address cannot be
  //   parsed: nothing could connect, and no server answered;
  // - RemoteError (-32602) for params neither an array nor an object, the
  //   error a server would answer.
  Outcome notify_and_close(const std::string& method, const std::optional<json>& params,
                           std::optional<Millis> timeout = std::nullopt);
  // Starts a streamed call; pull its chunks with next(). policy.auto_grant
  // is ignored: credit follows next().
  BlockingStream stream(const std::string& method, const std::optional<json>& params, StreamPolicy policy = {});
  // Runs the loop until `done()` is true or nothing is left to do.
  void run_until(const std::function<bool()>& done);

 private:
  boost::asio::io_context io_{1};
  // Known before `client_` takes the config: Client::notify refuses a bad
  // address with the same code as bad params (-32602), and only the latter
  // is a RemoteError (see notify_and_close).
  bool address_ok_;
  std::unique_ptr<Client> client_;
};

// ---- One-shot calls (the CLI's `weft call`, scripts) ------------------------

// Where a one-shot call connects.
struct Endpoint {
  // A Unix socket, TCP, a child process, or any address string; which one.
  enum class Kind { Unix, Tcp, Exec, Address };
  Kind kind = Kind::Unix;
  std::string path;          // Unix
  std::string host;          // Tcp
  std::uint16_t port = 0;    // Tcp
  std::string command;       // Exec: run with /bin/sh -c
  std::string address;       // Address: any address string (ws://, http://, …)
  std::string text() const;  // as an address string
};

// Options of one one-shot call() or notify().
struct ClientOptions {
  // Where to connect.
  Endpoint endpoint;
  std::optional<Framing> framing;  // nullopt → lsp for Exec, len32be for sockets
  // The codec; the server must use the same.
  CodecKind codec = CodecKind::Json;
  CodecLimits codec_limits;        // max_depth: nesting accepted in the reply (codec.h)
  std::optional<Millis> timeout;   // the whole call: connecting, retries, answer
  // Connection refused / socket missing: retry up to `retries` times, on the
  // Client's backoff schedule (100 ms, 200 + rand(50), 400 + rand(100), …).
  int retries = 3;
  Millis backoff_ms = 100;
  bool verbose = false;            // log retries to stderr
  // Offer rpc.handshake with "metrics" (Outcome::metrics) and/or these
  // compression algorithms (see ClientConfig::handshake and ClientConfig::compression).
  bool metrics = false;
  std::vector<std::string> compression;
};

// The persistent client's configuration for these one-shot options.
ClientConfig to_config(const ClientOptions& options);

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
