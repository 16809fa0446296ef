// stream_link.cpp — a Client connection over a byte stream: a Unix socket, TCP,
// or a child process's stdin/stdout. The bytes are handled by the same host
// Session the server uses (framing, codec, one write per pass, backpressure).
#include <cerrno>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>

#include "child.h"
#include "client/link.h"
#include "session.h"
#include "util.h"
#include "weft/host/server.h"
#include "weft/host/transport.h"

namespace weft::host::detail {

bool retryable_connect_error(const boost::system::error_code& ec) {
  if (ec == boost::asio::error::connection_refused || ec == boost::asio::error::connection_reset ||
      ec == boost::asio::error::host_not_found_try_again || ec == boost::asio::error::timed_out)
    return true;
  if (ec.category() != boost::system::system_category()) return false;
  const int v = ec.value();
  return v == ECONNREFUSED || v == ENOENT || v == EAGAIN || v == ECONNRESET;
}

namespace {

// An exec child has this long, after its stdout ends, to finish writing its
// stderr and exit, so that the error can say how it ended.
constexpr Millis kChildSettleMs = 500;

class StreamLink final : public Link, public std::enable_shared_from_this<StreamLink> {
 public:
  StreamLink(boost::asio::io_context& io, const Address& a, const ClientConfig& cfg, LinkHooks hooks)
      : io_(io), a_(a), cfg_(cfg), hooks_(std::move(hooks)) {}

  void start() {
    switch (a_.kind) {
      case Address::Kind::Unix: {
        auto sock = std::make_shared<boost::asio::local::stream_protocol::socket>(io_);
        sock->async_connect(boost::asio::local::stream_protocol::endpoint(a_.path),
                            [self = shared_from_this(), sock](const boost::system::error_code& ec) {
                              self->connected(ec, *sock);
                            });
        return;
      }
      case Address::Kind::Tcp: {
        auto resolver = std::make_shared<boost::asio::ip::tcp::resolver>(io_);
        resolver->async_resolve(
            a_.host, std::to_string(a_.port),
            [self = shared_from_this(), resolver](const boost::system::error_code& ec,
                                                  boost::asio::ip::tcp::resolver::results_type rs) {
              if (ec) return self->connect_failed(ec);
              auto sock = std::make_shared<boost::asio::ip::tcp::socket>(self->io_);
              boost::asio::async_connect(*sock, rs, [self, sock](const boost::system::error_code& ec2, const auto&) {
                if (!ec2) {
                  boost::system::error_code ignored;
                  sock->set_option(boost::asio::ip::tcp::no_delay(true), ignored);
                }
                self->connected(ec2, *sock);
              });
            });
        return;
      }
      case Address::Kind::Exec: {
        ignore_sigpipe();
        auto c = spawn_shell(a_.command, /*capture_stderr=*/true);
        if (!c) {
          boost::asio::post(io_, [self = shared_from_this(), e = c.error()] {
            self->report(Error(code::kClosed, "cannot start " + self->a_.text + ": " + e.message), false);
          });
          return;
        }
        auto passthrough = [](std::string_view bytes) {
          // The child's diagnostics stay visible, as when its stderr was inherited.
          std::size_t left = bytes.size();
          const char* p = bytes.data();
          while (left > 0) {
            ssize_t n = ::write(2, p, left);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return;
            p += n;
            left -= static_cast<std::size_t>(n);
          }
        };
        child_ = std::make_shared<ChildWatch>(io_, *c, cfg_.child_grace_ms, passthrough);
        child_->start();
        begin(Session::Fd(io_, c->from_child), Session::Fd(io_, c->to_child), default_framing(Transport::Exec));
        return;
      }
      default:
        break;
    }
  }

  Peer& peer() override { return session_->peer(); }
  // The session marks itself closed before its Peer fails the calls.
  bool closed() const override { return closing_ || (session_ && session_->closed()); }
  void flush() override {
    if (session_) session_->poke();
  }
  void shutdown() override {
    if (!session_ || closing_) return close(Error(code::kClosed, "closed by the client"));
    own_reason_ = "closed by the client";
    session_->drain(now_ms() + 24 * 3600 * 1000);  // closes once our output is written
  }
  void close(const Error& why) override {
    if (reported_) return;
    own_reason_ = why.message;
    closing_ = true;
    if (session_) session_->close(why);  // → on_closed → finish()
    else finish("");
  }
  std::string context() const override { return child_ ? child_->context() : std::string(); }
  std::uint64_t queued() const override { return session_ ? session_->queued() : 0; }
  std::uint64_t written() const override { return session_ ? session_->written() : 0; }

 private:
  template <class Socket>
  void connected(const boost::system::error_code& ec, Socket& sock) {
    if (closing_) return;
    if (ec) return connect_failed(ec);
    boost::system::error_code rec;
    int fd = sock.release(rec);
    if (rec) return connect_failed(rec);
    begin(Session::Fd(io_, fd), std::nullopt, default_framing(Transport::Unix));  // Unix and TCP alike
  }

  void connect_failed(const boost::system::error_code& ec) {
    if (closing_) return;
    closing_ = true;
    report(Error(code::kClosed, "cannot connect to " + a_.text + ": " + ec.message()), retryable_connect_error(ec));
  }

  void begin(Session::Fd in, std::optional<Session::Fd> out, Framing fallback) {
    SessionConfig sc;
    sc.conn.framing = cfg_.framing.value_or(fallback);
    sc.conn.codec = cfg_.codec;
    sc.conn.codec_limits = cfg_.codec_limits;
    sc.conn.framing_limits = cfg_.framing_limits;
    sc.conn.peer_limits = cfg_.peer_limits;
    sc.conn.max_send = cfg_.max_request;
    sc.conn.max_send_name = "max_request";
    if (cfg_.handshake) sc.conn.compression = cfg_.compression;
    sc.name = a_.text;
    sc.eof_grace = 0;  // the server ended the stream: nothing will read our answers
    sc.log = hooks_.log;
    sc.conn.diagnostic = hooks_.diagnostic;
    sc.conn.on_drain = hooks_.drain;
    session_ = std::make_shared<Session>(io_, std::move(in), std::move(out), std::move(sc));
    if (hooks_.setup) hooks_.setup(session_->peer());
    session_->on_closed = [w = weak_from_this()](const std::string& why) {
      if (auto self = w.lock()) self->finish(why);
    };
    opened_ = true;
    // `opened` runs posted (not inside the client's own call: start() may
    // be). Reading starts just before it sends the calls: what the server
    // sent already (a refusal: an error with id null, then its close, as over
    // max_connections) is then read before our write to the closed socket
    // fails, and answers the call; the read's handler still runs after
    // `opened` (Asio never completes an operation inside the call that
    // starts it), so nothing the server sends arrives before it.
    boost::asio::post(io_, [self = shared_from_this()] {
      if (self->closing_) return;
      if (self->cfg_.handshake) return self->offer_handshake();
      self->session_->start();
      if (self->hooks_.opened) self->hooks_.opened();
    });
  }

  // ClientConfig::handshake: the connection counts as open (calls are sent)
  // once the server has answered it.
  void offer_handshake() {
    session_->start();
    auto failed = send_handshake(
        io_,
        [this](HandshakeDone done) {
          return session_->connection().handshake(*cfg_.handshake, std::move(done), {}, now_ms());
        },
        [w = weak_from_this()](std::optional<Error> e) {
          auto self = w.lock();
          if (!self || self->closing_) return;
          if (e) return self->close(*e);
          if (self->hooks_.opened) self->hooks_.opened();
        });
    if (failed) return close(*failed);
    session_->poke();
  }

  // The session has closed (its Peer has failed the calls it held).
  void finish(const std::string& session_why) {
    closing_ = true;
    std::string why = !own_reason_.empty() ? own_reason_
                      : !session_why.empty() ? session_why
                      : a_.kind == Address::Kind::Exec ? "the child closed its stdout"
                                                       : "the server closed the connection";
    Error e(code::kClosed, "connection to " + a_.text + " closed: " + why);
    if (!child_) return report(std::move(e), true);
    // Let a crashed child's exit status and last words reach the message.
    child_->stop();
    child_->settle(own_reason_.empty() ? kChildSettleMs : 0, [self = shared_from_this(), e]() mutable {
      e.message += self->child_->context();
      self->report(std::move(e), true);
    });
  }

  void report(Error e, bool retryable) {
    if (reported_) return;
    reported_ = true;
    if (hooks_.closed) hooks_.closed(std::move(e), opened_, retryable);
  }

  boost::asio::io_context& io_;
  Address a_;
  ClientConfig cfg_;
  LinkHooks hooks_;
  std::shared_ptr<Session> session_;
  std::shared_ptr<ChildWatch> child_;
  std::string own_reason_;
  bool opened_ = false;
  bool closing_ = false;
  bool reported_ = false;
};

}  // namespace

std::shared_ptr<Link> open_stream_link(boost::asio::io_context& io, const Address& a,
                                       const ClientConfig& cfg, LinkHooks hooks) {
  auto l = std::make_shared<StreamLink>(io, a, cfg, std::move(hooks));
  l->start();
  return l;
}

}  // namespace weft::host::detail
