// blocking.cpp — BlockingClient (a Client with its own io_context) and the
// one-shot call()/notify() of the CLI, built on it.
#include "weft/host/client.h"

#include <boost/asio/steady_timer.hpp>

#include "address.h"

namespace weft::host {

BlockingClient::BlockingClient(ClientConfig config)
    : address_ok_(static_cast<bool>(detail::parse_address(config.address))),
      client_(std::make_unique<Client>(io_, std::move(config))) {}

BlockingClient::~BlockingClient() {
  // A clean goodbye where the transport has one (WebSocket close frame, HTTP
  // session DELETE, our output written), for at most a second.
  if (client_->state() == Client::State::Open) {
    // The flags outlive this block: the cancelled timer's handler (and a
    // late shutdown callback) run in the poll() below.
    struct Flags { bool closed = false, late = false; };
    auto f = std::make_shared<Flags>();
    boost::asio::steady_timer t(io_, std::chrono::seconds(1));
    t.async_wait([f](const boost::system::error_code& ec) { f->late = !ec; });
    client_->shutdown([f] { f->closed = true; });
    run_until([&] { return f->closed || f->late; });
    t.cancel();
  }
  client_.reset();  // fails what is pending, closes the connection
  io_.restart();
  io_.poll();       // lets the closing handlers run (child reaped by its watch)
}

void BlockingClient::run_until(const std::function<bool()>& done) {
  while (!done()) {
    if (io_.stopped()) io_.restart();
    if (io_.run_one() == 0) break;  // nothing left that could make progress
  }
}

Outcome BlockingClient::call(const std::string& method, const std::optional<json>& params, CallPolicy policy) {
  // Shared: if the loop runs out of work first, the completion comes later.
  auto out = std::make_shared<std::optional<Outcome>>();
  client_->call(method, params, policy, [out](Outcome o) { *out = std::move(o); });
  run_until([&] { return out->has_value(); });
  if (!*out) {
    Outcome o;
    o.status = Outcome::Status::ConnectFailed;
    o.error = Error(code::kClosed, "the event loop ran out of work before the answer");
    return o;
  }
  return **out;
}

Outcome BlockingClient::notify_and_close(const std::string& method, const std::optional<json>& params,
                                         std::optional<Millis> timeout) {
  Outcome out;
  const std::size_t unsent = client_->unsent_notifications();
  const std::size_t queued = client_->queued_notifications();
  auto r = client_->notify(method, params);
  if (!r) {
    // Classed as Client::call classes a refusal (header: notify_and_close):
    // only the params check, the server's own rule, is a RemoteError. A bad
    // address (-32602 too, checked first) or a closed client could not
    // connect.
    const bool bad_params = address_ok_ && r.error().code == code::kInvalidParams;
    out.status = bad_params ? Outcome::Status::RemoteError : Outcome::Status::ConnectFailed;
    out.error = r.error();
    return out;
  }
  // Handed to the open connection (after a call or a stream): close now. Not
  // when it was queued instead: while connecting, or while a drained
  // connection is still open (docs/protocol.md "Drain": nothing new is sent
  // on it; it waits for the next connection, which closing now would
  // cancel, dropping it).
  const bool handed = client_->queued_notifications() == queued;
  // Else connect (the notification waits for it), then write it and close.
  // The state outlives this call: the cancelled timer's handler and a late
  // shutdown callback run after it returns (the destructor's poll()).
  struct State { bool connected = false, closed = false, timed_out = false; };
  auto st = std::make_shared<State>();
  Client* c = client_.get();
  // A connection that closes before ours opens (the drained one) is no
  // failure: the client reconnects. When it gives up, its state goes back
  // to Idle (it fails the waiting notification: unsent_notifications).
  client_->on_connection = [st, c](bool open, const std::string&) {
    if (!open || st->connected) return;
    st->connected = true;
    c->shutdown([st] { st->closed = true; });
  };
  if (handed) {
    st->connected = true;
    c->shutdown([st] { st->closed = true; });
  }
  std::optional<boost::asio::steady_timer> t;
  if (timeout) {
    t.emplace(io_, std::chrono::milliseconds(*timeout));
    t->async_wait([st](const boost::system::error_code& ec) { st->timed_out = !ec; });
  }
  if (!handed) client_->connect();
  run_until([&] {
    return st->closed || st->timed_out || (!st->connected && client_->state() == Client::State::Idle);
  });
  if (t) t->cancel();
  client_->on_connection = nullptr;
  out.attempts = 1;
  if (st->closed && client_->unsent_notifications() > unsent) {
    // Not delivered: too large to send, refused by an HTTP server (an error
    // status for its POST), or the connection closed before it reached the
    // socket (the server had closed it); the reason is logged.
    out.status = Outcome::Status::ConnectFailed;
    out.error = Error(code::kClosed, "the notification was not delivered");
    return out;
  }
  if (st->closed) return out;
  if (st->timed_out) {
    out.status = Outcome::Status::Timeout;
    out.error = Error(code::kTimeout, "timed out after " + std::to_string(*timeout) + " ms");
    return out;
  }
  out.status = Outcome::Status::ConnectFailed;
  out.error = client_->last_error() ? *client_->last_error() : Error(code::kClosed, "could not connect");
  return out;
}

// ---- one-shot ------------------------------------------------------------

std::string Endpoint::text() const {
  switch (kind) {
    case Kind::Unix: return "unix:" + path;
    case Kind::Tcp:
      return "tcp:" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
    case Kind::Exec: return "exec:" + command;
    case Kind::Address: return address;
  }
  return address;
}

ClientConfig to_config(const ClientOptions& o) {
  ClientConfig c;
  c.address = o.endpoint.text();
  c.framing = o.framing;
  c.codec = o.codec;
  c.codec_limits = o.codec_limits;
  c.default_timeout = o.timeout;
  c.connect_attempts = o.retries + 1;
  c.backoff_ms = o.backoff_ms;
  // One call: a connection that drops before the answer is the answer (exit 3).
  c.reconnect = false;
  c.verbose = o.verbose;
  if (o.metrics || !o.compression.empty()) {
    // What this client can do besides: a handshake that left out
    // "streams" would refuse --stream (docs/protocol.md "Handshake").
    Handshake h;
    h.capabilities = {"streams", "progress", "drain"};
    if (o.metrics) h.capabilities.push_back("metrics");
    c.handshake = h;
    c.compression = o.compression;
  }
  return c;
}

Outcome call(const ClientOptions& options, const std::string& method, const std::optional<json>& params) {
  BlockingClient c(to_config(options));
  return c.call(method, params);
}

Outcome notify(const ClientOptions& options, const std::string& method, const std::optional<json>& params) {
  BlockingClient c(to_config(options));
  return c.notify_and_close(method, params, options.timeout);
}

}  // namespace weft::host
