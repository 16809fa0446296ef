// http_link.h — the Client "connection" over the MCP Streamable HTTP
// transport (Boost.Beast), as its files share it: the link (HttpLink) and one
// HTTP exchange (Exchange). Every message the Peer sends is one POST to the
// endpoint with `Accept: application/json, text/event-stream`:
//   202 / 204           accepted (a notification or a response of ours)
//   200 application/json one message or batch: the answers
//   200 text/event-stream SSE events, each one message (the server's requests
//                        and notifications, then the answer), until the stream ends
//   404 with a session  the session is gone: the link closes (the client
//                        reconnects; a new session starts with a new initialize)
//   other               the requests of that POST fail with -32002 naming the status
// `Mcp-Session-Id` from a response is sent on every later request, and so is
// `MCP-Protocol-Version` once an `initialize` result names it. With a session,
// a GET opens the server's own SSE stream (405: the server has none), resumed
// with Last-Event-ID. shutdown() ends the session with DELETE. With
// ClientConfig::compression holding zstd, POSTs say `Accept-Encoding: zstd`
// and a zstd-encoded answer is inflated within max_frame (RFC 9110 §8.4;
// docs/transports.md, "Compression").
// POSTs run on up to kMaxParallel keep-alive connections; more wait in order.
//
// The parts: http_link.cpp the link's life (connecting, the handshake, the
// session's GET stream, DELETE, closing), http_posts.cpp sending the POSTs in
// order, http_answers.cpp what comes back. In a namespace of their own: the
// server's side has an Exchange too (net/mcp_session.h).
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "client/link.h"
#include "client/sse.h"
#include "weft/codec.h"
#include "weft/compression.h"
#include "weft/host/server.h"

namespace weft::host::detail::http_link {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

constexpr int kMaxParallel = 16;
constexpr std::size_t kMaxIdle = 8;
constexpr Millis kGetRetryMs = 1000;

class HttpLink;

// One HTTP exchange on one TCP connection.
struct Exchange {
  explicit Exchange(boost::asio::io_context& io) : stream(io) {}
  beast::tcp_stream stream;
  http::request<http::string_body> req;
  http::response_parser<http::string_body> parser;
  beast::flat_buffer buf;
  std::vector<std::int64_t> request_ids;  // requests this POST carried
  std::string initialize_id;              // id of an "initialize" request in it
  bool is_get = false;
  bool fresh = true;  // a new connection (not reused from the idle pool)
  bool notification = false;  // it carries a notification (ordering: HttpLink::may_send)
  bool written = false;       // its request went out
  bool heard = false;         // the response's header arrived: the server has taken the message
};

class HttpLink final : public Link, public std::enable_shared_from_this<HttpLink> {
 public:
  HttpLink(boost::asio::io_context& io, const Address& a, const ClientConfig& cfg, LinkHooks hooks);

  void start();

  Peer& peer() override { return *peer_; }
  bool closed() const override { return closing_; }
  bool undelivering() const override { return undelivering_; }
  void flush() override { pump(); }
  void shutdown() override {
    shutting_down_ = true;
    maybe_finish_shutdown();
  }
  void close(const Error& why) override { finish(why.message); }

 private:
  // http_link.cpp
  void probe();
  void offer_handshake();
  void connect_failed(const beast::error_code& ec);
  std::string host_header() const;
  http::request<http::string_body> request(http::verb v) const;
  void open_get_stream();
  void schedule_get();
  void maybe_finish_shutdown();
  void finish(const std::string& why);
  void report(Error e, bool retryable);

  // http_posts.cpp
  void post_message(Outgoing&& o);
  void pump();
  bool may_send(const Exchange& next) const;
  void initialized(const std::shared_ptr<Exchange>& ex);
  void begin(std::shared_ptr<Exchange> ex);
  void send(std::shared_ptr<Exchange> ex);
  void transport_error(const std::shared_ptr<Exchange>& ex, const std::string& why);

  // http_answers.cpp
  void on_header(const std::shared_ptr<Exchange>& ex, const beast::error_code& ec);
  void read_sse(const std::shared_ptr<Exchange>& ex);
  void read_sse_more(const std::shared_ptr<Exchange>& ex, std::shared_ptr<SseParser> sse);
  Result<void> decode_content(const http::response<http::string_body>& res, std::string& body);
  void deliver(const std::shared_ptr<Exchange>& ex, std::string_view text);
  // -32002 (not delivered), or `code` (-32700: an answer that could not be decoded).
  void reject(const std::shared_ptr<Exchange>& ex, const std::string& why, int code = code::kClosed);
  void done(const std::shared_ptr<Exchange>& ex, bool reusable);

  boost::asio::io_context& io_;
  Address a_;
  ClientConfig cfg_;
  LinkHooks hooks_;
  tcp::resolver resolver_;
  tcp::resolver::results_type endpoints_;
  boost::asio::steady_timer get_timer_;
  std::unique_ptr<Codec> codec_;
  Compressor comp_;  // ClientConfig::compression: zstd answers are asked for and inflated
  std::unique_ptr<Peer> peer_;
  std::deque<std::shared_ptr<Exchange>> waiting_;
  std::set<std::shared_ptr<Exchange>> active_;
  std::vector<std::shared_ptr<Exchange>> idle_;
  std::shared_ptr<Exchange> initializing_;
  std::optional<std::string> session_id_;
  bool sessionless_ = false;  // a request was answered without a session id
  std::optional<std::string> protocol_version_;
  std::string last_event_id_;
  bool open_ = false;
  bool closing_ = false;
  bool undelivering_ = false;  // in reject(): see Link::undelivering
  bool reported_ = false;
  bool shutting_down_ = false;
  bool deleting_ = false;
  bool get_open_ = false;
};

}  // namespace weft::host::detail::http_link
