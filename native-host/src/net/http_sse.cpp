// http_sse.cpp — an answer of the Streamable HTTP endpoint streamed as
// server-sent events (HttpConn): the response's header (chunked but to HTTP/1.0), the events
// written one at a time within write_timeout, the end of the stream, and
// noticing a client that goes away.
#include "net/http_server.h"

namespace weft::host::detail {

void HttpConn::start_sse(std::string first, std::optional<std::string> session, std::shared_ptr<McpSession> s) {
  sse_ = true;
  session_ = std::move(s);
  sse_res_.emplace(http::status::ok, req_.version());
  sse_res_->set(http::field::server, "weft");
  sse_res_->set(http::field::content_type, "text/event-stream");
  sse_res_->set(http::field::cache_control, "no-cache");
  if (session) sse_res_->set("Mcp-Session-Id", *session);
  cors(*sse_res_);
  sse_res_->keep_alive(false);  // the connection closes with the stream
  // RFC 9112 §6.1: no Transfer-Encoding in answer to HTTP/1.0, which cannot
  // read it; there the stream's end is the connection's (§6.3).
  sse_res_->chunked(req_.version() >= 11);
  sse_sr_.emplace(*sse_res_);
  writing_ = true;
  stream_.expires_after(ms(web_.write_timeout));
  http::async_write_header(stream_, *sse_sr_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    self->writing_ = false;
    if (ec) return self->finish("SSE header: " + ec.message());
    self->watch_close();
    self->pump();
  });
  // First: events of this stream may be queued already (McpSession::settle).
  if (!first.empty()) out_.push_front(std::move(first));
}

// While streaming nothing should arrive: a read that completes means the
// client closed (or broke the protocol); the stream is detached for resumption.
void HttpConn::watch_close() {
  stream_.socket().async_read_some(boost::asio::buffer(&probe_, 1),
                                   [self = shared_from_this()](beast::error_code, std::size_t) {
                                     if (!self->finished_) self->finish("");
                                   });
}

void HttpConn::sse_send(std::string text) {
  if (finished_ || sse_over_) return;
  out_.push_back(std::move(text));
  pump();
}

void HttpConn::sse_end() {
  if (finished_ || sse_over_) return;
  sse_over_ = true;
  pump();
}

void HttpConn::pump() {
  if (finished_ || writing_ || !sse_sr_ || !sse_sr_->is_header_done()) return;
  if (out_.empty()) {
    if (!sse_over_) return;
    auto end = [self = shared_from_this()](beast::error_code, std::size_t) {
      self->writing_ = false;
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      self->finish("");
    };
    if (!sse_res_->chunked()) return end({}, 0);
    writing_ = true;
    stream_.expires_after(ms(web_.write_timeout));
    boost::asio::async_write(stream_, http::make_chunk_last(), std::move(end));
    return;
  }
  writing_ = true;
  auto chunk = std::make_shared<std::string>(std::move(out_.front()));
  out_.pop_front();
  stream_.expires_after(ms(web_.write_timeout));
  auto next = [self = shared_from_this(), chunk](beast::error_code ec, std::size_t) {
    self->writing_ = false;
    if (ec) return self->finish(ec == beast::error::timeout ? "slow client: SSE event not taken in time" : "");
    self->pump();
  };
  if (sse_res_->chunked())
    boost::asio::async_write(stream_, http::make_chunk(boost::asio::buffer(*chunk)), std::move(next));
  else
    boost::asio::async_write(stream_, boost::asio::buffer(*chunk), std::move(next));
}

}  // namespace weft::host::detail
