// client.cpp — one-shot call/notify over Unix, TCP or a child process, with
// connect retries (exponential backoff + jitter) and an overall timeout.
#include "weft/host/client.h"
#include "weft/host/transport.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <random>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include "child.h"
#include "session.h"
#include "util.h"
#include "weft/host/server.h"

namespace weft::host {

int Outcome::exit_code() const {
  switch (status) {
    case Status::Ok: return 0;
    case Status::RemoteError: return 1;
    case Status::ConnectFailed: return 3;
    case Status::Timeout: return 4;
  }
  return 1;
}

namespace {

using detail::Session;

bool retryable(const boost::system::error_code& ec) {
  if (ec.category() != boost::system::system_category()) return false;
  const int v = ec.value();
  return v == ECONNREFUSED || v == ENOENT || v == EAGAIN;
}

std::string endpoint_text(const Endpoint& e) {
  switch (e.kind) {
    case Endpoint::Kind::Unix: return "unix:" + e.path;
    case Endpoint::Kind::Tcp: return "tcp:" + e.host + ":" + std::to_string(e.port);
    case Endpoint::Kind::Exec: return "exec:" + e.command;
  }
  return "?";
}

class Run {
 public:
  Run(const ClientOptions& o, const std::string& method, const std::optional<json>& params,
      bool is_call)
      : o_(o), method_(method), params_(params), is_call_(is_call), deadline_timer_(io_),
        backoff_timer_(io_), rng_(std::random_device{}()) {}

  Outcome go() {
    detail::ignore_sigpipe();
    if (o_.timeout) {
      deadline_timer_.expires_after(std::chrono::milliseconds(*o_.timeout));
      deadline_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) fail(Outcome::Status::Timeout,
                      "timed out after " + std::to_string(*o_.timeout) + " ms");
      });
    }
    connect();
    io_.run();
    if (child_.pid > 0) {
      int st = detail::reap_child(child_.pid, 2000);
      if (out_.status == Outcome::Status::ConnectFailed && st != -1) {
        if (WIFEXITED(st))
          out_.error.message += " (child exited with status " + std::to_string(WEXITSTATUS(st)) + ")";
        else if (WIFSIGNALED(st))
          out_.error.message += " (child killed by signal " + std::to_string(WTERMSIG(st)) + ")";
      }
    }
    return out_;
  }

 private:
  void connect() {
    ++out_.attempts;
    const Endpoint& e = o_.endpoint;
    if (e.kind == Endpoint::Kind::Exec) {
      auto c = detail::spawn_shell(e.command);
      if (!c) return fail(Outcome::Status::ConnectFailed, c.error().message);
      child_ = *c;
      start(Session::Fd(io_, child_.from_child), Session::Fd(io_, child_.to_child), default_framing(Transport::Exec));
      return;
    }
    if (e.kind == Endpoint::Kind::Unix) {
      auto sock = std::make_shared<boost::asio::local::stream_protocol::socket>(io_);
      sock->async_connect(boost::asio::local::stream_protocol::endpoint(e.path),
                          [this, sock](const boost::system::error_code& ec) { connected(ec, *sock); });
      return;
    }
    boost::system::error_code ec;
    auto addr = boost::asio::ip::make_address(e.host == "localhost" ? "127.0.0.1" : e.host, ec);
    if (ec) return fail(Outcome::Status::ConnectFailed, "bad TCP address '" + e.host + "'");
    auto sock = std::make_shared<boost::asio::ip::tcp::socket>(io_);
    sock->async_connect(boost::asio::ip::tcp::endpoint(addr, e.port), [this, sock](const boost::system::error_code& ec) {
      if (!ec) {
        boost::system::error_code ignored;
        sock->set_option(boost::asio::ip::tcp::no_delay(true), ignored);
      }
      connected(ec, *sock);
    });
  }

  template <class Socket>
  void connected(const boost::system::error_code& ec, Socket& sock) {
    if (done_) return;
    if (!ec) {
      boost::system::error_code rec;
      int fd = sock.release(rec);
      if (rec) return fail(Outcome::Status::ConnectFailed, "socket: " + rec.message());
      start(Session::Fd(io_, fd), std::nullopt, default_framing(Transport::Unix));  // Unix and TCP alike
      return;
    }
    const int retry = out_.attempts - 1;  // retries used so far
    if (retryable(ec) && retry < o_.retries) {
      const double base = static_cast<double>(o_.backoff_ms) * std::ldexp(1.0, retry);
      std::uniform_real_distribution<double> jitter(0.0, 0.25);
      const auto delay = static_cast<Millis>(base * (1.0 + jitter(rng_)));
      if (o_.verbose)
        detail::log_stderr("connect " + endpoint_text(o_.endpoint) + ": " + ec.message() +
                           "; retrying in " + std::to_string(delay) + " ms");
      backoff_timer_.expires_after(std::chrono::milliseconds(delay));
      backoff_timer_.async_wait([this](const boost::system::error_code& e) {
        if (!e && !done_) connect();
      });
      return;
    }
    fail(Outcome::Status::ConnectFailed,
         "cannot connect to " + endpoint_text(o_.endpoint) + ": " + ec.message() + " (" +
             std::to_string(out_.attempts) + (out_.attempts == 1 ? " attempt)" : " attempts)"));
  }

  void start(Session::Fd in, std::optional<Session::Fd> out, Framing default_framing) {
    detail::SessionConfig cfg;
    cfg.conn.framing = o_.framing.value_or(default_framing);
    cfg.conn.codec = o_.codec;
    cfg.conn.codec_limits = o_.codec_limits;
    cfg.name = endpoint_text(o_.endpoint);
    cfg.eof_grace = 0;
    cfg.log = detail::default_log();
    // A one-shot call answered with an id-null error (the other side could not
    // parse or accept our request) will never get its response: report that
    // error (the Diagnostic carries it) instead of waiting.
    cfg.conn.diagnostic = [this](const Diagnostic& d) {
      detail::log_stderr(endpoint_text(o_.endpoint) + ": " + d.message);
      if (!is_call_ || done_) return;
      if (d.kind == Diagnostic::Kind::BadFrame) {
        // We could not decode what came back (mismatched codec or framing):
        // stop here rather than trade id-null errors with the other side.
        out_.status = Outcome::Status::RemoteError;
        out_.error = Error(code::kParseError, "could not decode the reply: " + d.message);
        done_ = true;
        boost::asio::post(io_, [this] { teardown(); });
        return;
      }
      if (d.kind != Diagnostic::Kind::ErrorWithoutId || !d.error) return;
      out_.status = Outcome::Status::RemoteError;
      out_.error = *d.error;
      done_ = true;
      boost::asio::post(io_, [this] { teardown(); });  // not from inside the peer's receive
    };
    session_ = std::make_shared<Session>(io_, std::move(in), std::move(out), std::move(cfg));
    session_->on_closed = [this](const std::string& why) {
      if (done_) return;
      if (!is_call_ && why.empty()) return succeed(json());  // notification written
      fail(Outcome::Status::ConnectFailed,
           why.empty() ? "connection closed before the response arrived" : why);
    };
    session_->start();
    if (is_call_) {
      auto r = session_->peer().call(
          method_, params_,
          [this](Result<json> res) {
            if (done_) return;
            if (res) return succeed(std::move(*res));
            // Errors raised by our own side (the session closing) are transport failures.
            if (session_->closed())
              return fail(Outcome::Status::ConnectFailed, "connection closed before the response arrived");
            out_.status = Outcome::Status::RemoteError;
            out_.error = res.error();
            finish();
          },
          CallOptions{}, now_ms());
      if (!r) {
        out_.status = Outcome::Status::RemoteError;
        out_.error = r.error();
        return finish();
      }
      session_->poke();
    } else {
      auto r = session_->peer().notify(method_, params_);
      if (!r) {
        out_.status = Outcome::Status::RemoteError;
        out_.error = r.error();
        return finish();
      }
      // Closes cleanly (on_closed with no reason) once the bytes are written.
      session_->drain(now_ms() + 24 * 3600 * 1000);
    }
  }

  void succeed(json result) {
    out_.status = Outcome::Status::Ok;
    out_.result = std::move(result);
    finish();
  }

  void fail(Outcome::Status st, std::string why) {
    if (done_) return;
    out_.status = st;
    out_.error = Error(st == Outcome::Status::Timeout ? code::kTimeout : code::kClosed, std::move(why));
    finish();
  }

  void finish() {
    if (done_) return;
    done_ = true;
    teardown();
  }

  void teardown() {
    deadline_timer_.cancel();
    backoff_timer_.cancel();
    if (session_) session_->close();
    io_.stop();
  }

  const ClientOptions& o_;
  const std::string& method_;
  const std::optional<json>& params_;
  const bool is_call_;
  boost::asio::io_context io_{1};
  boost::asio::steady_timer deadline_timer_;
  boost::asio::steady_timer backoff_timer_;
  std::mt19937 rng_;
  std::shared_ptr<Session> session_;
  detail::Child child_;
  Outcome out_;
  bool done_ = false;
};

}  // namespace

Outcome call(const ClientOptions& options, const std::string& method,
             const std::optional<json>& params) {
  return Run(options, method, params, true).go();
}

Outcome notify(const ClientOptions& options, const std::string& method,
               const std::optional<json>& params) {
  return Run(options, method, params, false).go();
}

}  // namespace weft::host
