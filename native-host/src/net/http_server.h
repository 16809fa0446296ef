// http_server.h — the MCP Streamable HTTP listener (`listen_http`) as its
// files share it: the listener (HttpService), its connections (HttpConn) and
// the helpers they use. The transport (revision 2025-11-25) on Boost.Beast:
// one endpoint (WebOptions::http_path) taking POST, GET and DELETE, and
// OPTIONS for browsers' CORS preflight (docs/transports.md, "Streamable HTTP").
//
// Checks, in order, each answered with its status and a JSON-RPC error body
// without id where the spec allows one: Origin (403), path (404),
// MCP-Protocol-Version (400), method (405), Accept (406), Content-Type (415),
// Content-Encoding (415 unless zstd with `weft serve --compress zstd`),
// body: one valid JSON-RPC message (400), session (400 missing, 404 unknown).
// Sizes are bounded by Beast's parser before buffering (431 header, 413
// body), a zstd body by the same limit once inflated (413); a request must
// arrive within handshake_timeout (first) or idle_timeout (kept-alive
// connection); every write within write_timeout.
//
// Compression is HTTP's own (RFC 9110 §8.4, §12.5.3; zstd: RFC 8878 §7.2),
// not the handshake's (docs/transports.md, "Compression"): a JSON answer over
// 1 KiB goes zstd-encoded when the request's Accept-Encoding allows zstd and
// that is smaller; SSE streams go as they are.
//
// The parts: http_server.cpp the listener (sessions, drain), http_conn.cpp a
// connection (reading, the checks up to the method, answers, closing),
// http_requests.cpp what POST, GET and DELETE do, http_sse.cpp an answer
// streamed as SSE.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "net/acceptor_loop.h"
#include "net/hub.h"
#include "net/mcp_session.h"
#include "weft/compression.h"

namespace weft::host::detail {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

inline std::chrono::milliseconds ms(Millis m) { return std::chrono::milliseconds(m); }
inline std::string_view sv(beast::string_view v) { return std::string_view(v.data(), v.size()); }

inline std::optional<std::string> header(const http::request<http::string_body>& req, beast::string_view name) {
  auto it = req.find(name);
  if (it == req.end()) return std::nullopt;
  return std::string(sv(it->value()));
}

// {"jsonrpc":"2.0","id":null,"error":{...}}: the body the spec allows on a
// refused request ("a JSON-RPC error response that has no id").
inline std::string error_body(int code, const std::string& message) {
  std::string out;
  write_json(Message{Response{Id::null(), Error(code, message)}}, out);
  return out;
}

class HttpService;

class HttpConn : public Exchange, public std::enable_shared_from_this<HttpConn> {
 public:
  HttpConn(HttpService& svc, tcp::socket socket, std::string name);
  void start(bool over_limit);
  void close_now() { finish(""); }
  void drain();
  bool busy() const { return handling_; }

  void sse_send(std::string text) override;
  void sse_end() override;

 private:
  void do_read();
  void on_read(beast::error_code ec);
  void handle();
  void post();
  void get();
  void del();
  bool decode_content();
  void respond(http::status status, std::string body, const char* type = "application/json",
               std::optional<std::string> session = std::nullopt, const char* accept_encoding = nullptr);
  void preflight();
  template <class Fields> void cors(Fields& res) const;
  void start_sse(std::string first, std::optional<std::string> session, std::shared_ptr<McpSession> s);
  void watch_close();
  void pump();
  void finish(const std::string& why);

  HttpService& svc_;
  const WebOptions& web_;
  std::string name_;
  beast::tcp_stream stream_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> req_;
  std::shared_ptr<McpSession> session_;  // while streaming (or stateless)
  std::optional<std::string> cors_origin_;  // an allowed Origin of the current request
  bool first_ = true;
  bool handling_ = false;
  bool draining_ = false;
  bool finished_ = false;
  // SSE
  bool sse_ = false;
  bool sse_over_ = false;
  bool writing_ = false;
  std::deque<std::string> out_;
  std::optional<http::response<http::empty_body>> sse_res_;
  std::optional<http::response_serializer<http::empty_body>> sse_sr_;
  char probe_ = 0;
};

class HttpService final : public AcceptorLoop<HttpService, HttpConn> {
 public:
  explicit HttpService(Hub hub) : AcceptorLoop(std::move(hub), "http", "http-conn#") {}

  std::size_t connections() const override { return sessions_.size(); }
  std::size_t in_flight() const override;

  void drain(Millis deadline, const DrainNotice& notice) override;

  // Draining: some request is still being answered. Until none is, kept-alive
  // connections stay open, so that a request sent on one is answered -32005
  // rather than met by a closed connection.
  bool working() const;
  // After a request's answer went out: once nothing is in flight, the
  // connections kept open for it close.
  void drain_step();
  void close_all() override;

  std::shared_ptr<McpSession> find(const std::string& id);
  // nullptr when max_sessions are live and busy (McpSession::busy); past the
  // limit the one idle longest is ended to make room.
  std::shared_ptr<McpSession> create(bool stateful);

  // What drain() announced; nullopt before (or after close_all() alone).
  const std::optional<DrainNotice>& notice() const { return notice_; }

  const Codec& codec();

  // ServerOptions::compression: zstd bodies are taken and given (one set of
  // contexts for the listener: every connection runs on the one io thread).
  Compressor& compressor() { return comp_; }

 private:
  std::optional<boost::asio::steady_timer> grace_;
  std::optional<DrainNotice> notice_;
  std::unordered_map<std::string, std::shared_ptr<McpSession>> sessions_;
  std::unique_ptr<Codec> codec_;
  Compressor comp_{hub().opts.compression};
  std::uint64_t next_session_ = 1;
};

// CORS headers of an answer (plain, preflight or SSE): a template, so here,
// where http_conn.cpp and http_sse.cpp both see it.
template <class Fields>
void HttpConn::cors(Fields& res) const {
  if (!cors_origin_) return;
  res.set(http::field::access_control_allow_origin, *cors_origin_);
  res.set(http::field::access_control_expose_headers, "Mcp-Session-Id");
  res.set(http::field::vary, "Origin");
}

}  // namespace weft::host::detail
