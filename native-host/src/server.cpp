// server.cpp — the accept loops, signals and graceful stop of weft::host::Server.
#include "weft/host/server.h"
#include "weft/host/transport.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstring>
#include <list>
#include <unordered_map>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "listener.h"
#include "net/hub.h"
#include "session.h"
#include "util.h"
#include "weft/host/builtins.h"

namespace weft::host {

using detail::Session;

namespace {

// A connection refused over max_connections is closed once the client has
// closed it, or after this long at the latest (Server::Impl::refuse).
constexpr Millis kRefusedLingerMs = 1000;
// At most this many refused connections linger at a time; more close at once.
constexpr std::size_t kMaxRefusedLingering = 64;

}  // namespace

struct Server::Impl {
  boost::asio::io_context io{1};
  ServerOptions opts;
  Millis started = now_ms();
  std::vector<std::function<void(Peer&)>> setups;
  std::unordered_map<Session*, std::shared_ptr<Session>> sessions;
  struct UnixListener {
    explicit UnixListener(boost::asio::io_context& io) : acceptor(io), retry(io) {}
    boost::asio::local::stream_protocol::acceptor acceptor;
    detail::UnixSocketFile file;
    boost::asio::steady_timer retry;
    std::string out_of_fds;  // refuse_one()'s frame, made while descriptors were there
  };
  struct TcpListener {
    explicit TcpListener(boost::asio::io_context& io) : acceptor(io), retry(io) {}
    boost::asio::ip::tcp::acceptor acceptor;
    boost::asio::steady_timer retry;
    std::string out_of_fds;
  };
  std::list<UnixListener> unix_listeners;
  std::list<TcpListener> tcp_listeners;
  std::unique_ptr<detail::WebService> ws, http;  // net/: WebSocket, Streamable HTTP
  std::optional<boost::asio::signal_set> signals;
  // Bounds every exit: at grace_ms after stop() whatever is still open is
  // closed, whether or not its own drain timer managed to.
  std::optional<boost::asio::steady_timer> stop_deadline;
  std::size_t refused = 0;
  std::size_t refused_lingering = 0;  // refuse(): connections not closed yet
  // A descriptor held in reserve (of /dev/null): out of descriptors, accept
  // fails with the connection still queued and its client waiting for
  // nothing; giving this one up lets the server take that connection and
  // refuse it with a -32003 saying why (accept()).
  struct Spare {
    int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ~Spare() {
      if (fd >= 0) ::close(fd);
    }
  } spare;
  std::uint64_t next_id = 1;
  bool stopping = false;
  DrainNotice notice;  // what stop() announced (docs/protocol.md, "Drain")
  bool finished = false;
  int exit_code = 0;

  void log(const std::string& s) {
    if (opts.log) opts.log(s);
  }

  // What every peer gets, whatever carries it: socket sessions here, the
  // WebSocket and HTTP peers through the Hub.
  void install(Peer& p) {
    if (opts.builtins) {
      register_builtins(p, started, opts.title, [this] {
        return json{{"connections", connection_count()}, {"in_flight", in_flight_count()}};
      });
    }
    for (auto& f : setups) f(p);
  }

  std::size_t connection_count() const {
    return sessions.size() + (ws ? ws->connections() : 0) + (http ? http->connections() : 0);
  }

  detail::Hub hub() {
    return detail::Hub{io, opts, [this](Peer& p) { install(p); }, opts.log};
  }

  // Requests being served, on every listener (HTTP: in its sessions).
  std::size_t in_flight_count() {
    std::size_t n = (ws ? ws->in_flight() : 0) + (http ? http->in_flight() : 0);
    for (auto& [raw, s] : sessions) n += s->peer().in_flight();
    return n;
  }

  bool all_closed() const {
    return sessions.empty() && (!ws || ws->idle()) && (!http || http->idle());
  }

  Result<void> add_web(std::unique_ptr<detail::WebService>& slot,
                       Result<std::unique_ptr<detail::WebService>> made, const char* kind) {
    if (!made) return made.error();
    if (slot) return Error(code::kServerError, std::string("already listening for ") + kind);
    slot = std::move(made.value());
    slot->on_idle = [this] {
      if (stopping && all_closed()) finish();
    };
    return {};
  }

  void add_session(Session::Fd in, std::optional<Session::Fd> out, Framing default_framing,
                   std::string name, bool stdio) {
    detail::SessionConfig cfg;
    cfg.conn.framing = opts.framing.value_or(default_framing);
    cfg.conn.codec = opts.codec;
    cfg.conn.framing_limits = opts.framing_limits;
    cfg.conn.codec_limits = opts.codec_limits;
    cfg.conn.peer_limits = opts.peer_limits;
    cfg.conn.max_send = opts.max_response;
    cfg.conn.max_send_name = "max_response";
    if (opts.handshake) {
      cfg.conn.handshake = opts.handshake;
      if (cfg.conn.handshake->session.empty()) cfg.conn.handshake->session = name;
      cfg.conn.compression = opts.compression;
      cfg.conn.clock_us = now_us;  // for "metrics" (docs/protocol.md "Metrics")
    }
    cfg.name = std::move(name);
    cfg.eof_grace = opts.grace_ms;
    cfg.max_queued_output = opts.max_output;
    // The cut-offs are for socket clients, any number of them and not
    // trusted; stdio has one client, the parent that started us, and keeps the
    // core's rules (docs/framing.md F3: a timed-out frame is only discarded).
    cfg.write_timeout = stdio ? 0 : opts.write_timeout;
    cfg.idle_timeout = stdio ? 0 : opts.idle_timeout;
    cfg.close_on_frame_timeout = !stdio && opts.close_on_frame_timeout;
    cfg.log = opts.log;
    auto s = std::make_shared<Session>(io, std::move(in), std::move(out), std::move(cfg));
    install(s->peer());
    Session* raw = s.get();
    sessions.emplace(raw, s);
    s->on_closed = [this, raw, stdio](const std::string& why) {
      if (!why.empty()) log(raw->name() + " closed: " + why);
      // Keep the session alive until this callback returns.
      auto keep = sessions[raw];
      sessions.erase(raw);
      if (stdio) stop(make_notice("shutdown"));
      if (stopping && all_closed()) finish();
    };
    s->start();
    if (stopping) s->drain(now_ms() + opts.grace_ms, notice);
  }

  template <class Listener>
  void accept(Listener& l, Framing framing, const char* kind) {
    l.acceptor.async_accept([this, &l, framing, kind](const boost::system::error_code& ec, auto socket) {
      if (stopping || ec == boost::asio::error::operation_aborted) return;
      if (ec) {
        if (ec == boost::asio::error::no_descriptors && refuse_one(l)) return accept(l, framing, kind);
        // EMFILE and friends: back off instead of spinning.
        log(std::string("accept: ") + ec.message());
        l.retry.expires_after(std::chrono::milliseconds(100));
        l.retry.async_wait([this, &l, framing, kind](const boost::system::error_code& e) {
          if (!e && !stopping) accept(l, framing, kind);
        });
        return;
      }
      if constexpr (std::is_same_v<Listener, TcpListener>) {
        boost::system::error_code ignored;
        socket.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
      }
      if (opts.max_connections && sessions.size() >= opts.max_connections) {
        const std::string why = "too many connections (max " + std::to_string(opts.max_connections) + ")";
        refuse(socket, refusal(framing, why), why);
        accept(l, framing, kind);
        return;
      }
      boost::system::error_code rec;
      int fd = socket.release(rec);
      if (!rec && fd >= 0) {
        add_session(Session::Fd(io, fd), std::nullopt, framing,
                    std::string(kind) + "#" + std::to_string(next_id++), false);
      }
      accept(l, framing, kind);
    });
  }

  // A refused connection (refuse()) waiting for the client to close: our
  // sending side is shut down; what arrives is read and discarded.
  template <class Socket>
  struct Refused {
    Refused(Socket s, boost::asio::io_context& io) : socket(std::move(s)), timer(io) {}
    Socket socket;
    boost::asio::steady_timer timer;
    std::array<char, 4096> discard;
  };

  // Over the connection limit: one id-null -32003 answer, written without
  // waiting (a fresh socket's buffer has room for it), then a graceful
  // close. Closing with the client's request unread would reset the
  // connection (TCP) or fail its write (EPIPE) and lose the -32003 before
  // the client reads it (docs/reliability.md, "connections over the limit");
  // so the socket is read until the client closes, bounded in time
  // (kRefusedLingerMs) and in number (kMaxRefusedLingering, beyond which it
  // closes at once) so that refused clients hold nothing the limit protects.
  // The framed -32003 (id null) that refuses a connection.
  std::string refusal(Framing framing, const std::string& why) const {
    Outgoing out;
    out.messages.push_back(Response{Id::null(), Error(code::kOverloaded, "Server overloaded: " + why)});
    std::string body, frame;
    (void)make_codec(opts.codec)->encode(out, body);  // a fixed error: encodable
    encode_frame(opts.framing.value_or(framing), body, frame);
    return frame;
  }

  template <class Socket>
  void refuse(Socket& socket, const std::string& frame, const std::string& why, bool linger = true) {
    if (refused++ % 1000 == 0)
      log("refusing connections: " + why + " (" + std::to_string(refused) + " so far)");
    boost::system::error_code ec;
    socket.non_blocking(true, ec);
    socket.write_some(boost::asio::buffer(frame), ec);
    socket.shutdown(Socket::shutdown_send, ec);
    if (ec || !linger || refused_lingering >= kMaxRefusedLingering) {
      socket.close(ec);
      return;
    }
    ++refused_lingering;
    auto r = std::make_shared<Refused<Socket>>(std::move(socket), io);
    r->timer.expires_after(std::chrono::milliseconds(kRefusedLingerMs));
    r->timer.async_wait([r](const boost::system::error_code& e) {
      boost::system::error_code ignored;
      if (!e) r->socket.close(ignored);  // ends the read below
    });
    discard(r);
  }

  // Out of descriptors: the spare one is given up for the connection
  // waiting, which is refused at once (no linger: its descriptor is needed
  // back as the spare), then the spare is taken again. False: no spare. Its
  // frame was made at listen(): nothing here may need a descriptor of its
  // own (a sanitizer's runtime checking a virtual call does).
  template <class Listener>
  bool refuse_one(Listener& l) {
    if (spare.fd < 0) return false;
    ::close(spare.fd);
    boost::system::error_code ec;
    l.acceptor.non_blocking(true, ec);  // nothing queued after all: would_block, not a wait
    auto socket = l.acceptor.accept(ec);
    if (!ec) refuse(socket, l.out_of_fds, "out of file descriptors", false);
    spare.fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    return !ec;
  }

  template <class Socket>
  void discard(const std::shared_ptr<Refused<Socket>>& r) {
    r->socket.async_read_some(boost::asio::buffer(r->discard),
                              [this, r](const boost::system::error_code& ec, std::size_t) {
                                if (!ec) return discard(r);
                                r->timer.cancel();
                                boost::system::error_code ignored;
                                r->socket.close(ignored);
                                --refused_lingering;
                              });
  }

  DrainNotice make_notice(std::string reason) const {
    return DrainNotice{std::move(reason), opts.downtime_ms, opts.reconnect_after_ms};
  }

  // Every open connection is told ($/weft/drain with `n`), refuses new
  // requests with -32005 (the core's rule, Peer::drain) and closes once its
  // in-flight requests are answered; nothing is accepted any more.
  void stop(DrainNotice n) {
    if (stopping) return;
    stopping = true;
    notice = std::move(n);
    stop_deadline.emplace(io);
    stop_deadline->expires_after(std::chrono::milliseconds(opts.grace_ms + 50));
    stop_deadline->async_wait([this](const boost::system::error_code& ec) {
      if (ec || finished) return;
      if (!sessions.empty()) log("grace period over; closing the remaining connections");
      force_close();
    });
    boost::system::error_code ec;
    for (auto& l : unix_listeners) {
      l.acceptor.close(ec);
      l.retry.cancel();
    }
    for (auto& l : tcp_listeners) {
      l.acceptor.close(ec);
      l.retry.cancel();
    }
    const Millis deadline = now_ms() + opts.grace_ms;
    std::vector<std::shared_ptr<Session>> all;
    for (auto& [raw, s] : sessions) all.push_back(s);
    for (auto& s : all) s->drain(deadline, notice);
    if (ws) ws->drain(deadline, notice);
    if (http) http->drain(deadline, notice);
    if (all_closed()) finish();
  }

  void force_close() {
    std::vector<std::shared_ptr<Session>> all;
    for (auto& [raw, s] : sessions) all.push_back(s);
    for (auto& s : all) s->close(Error(code::kClosed, "server stopped"));
    if (ws) ws->close_all();
    if (http) http->close_all();
    if (all_closed()) finish();
  }

  void finish() {
    if (finished) return;
    finished = true;
    for (auto& l : unix_listeners) detail::remove_socket_file(l.file);
    if (stop_deadline) stop_deadline->cancel();
    if (signals) {
      boost::system::error_code ec;
      signals->cancel(ec);
    }
    io.stop();
  }

  // SIGINT/SIGTERM: drain "shutdown"; SIGHUP: drain "reload" (the process
  // exits 0 and its supervisor starts the new one; docs/reliability.md). A
  // second SIGINT/SIGTERM closes at once; a second SIGHUP changes nothing.
  void wait_signal() {
    signals->async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      const char* name = sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM";
      if (!stopping) {
        // First: once the line below is logged, new connections are refused
        // and every open one has been sent $/weft/drain.
        stop(make_notice(sig == SIGHUP ? "reload" : "shutdown"));
        log(std::string("received ") + name + ", draining: finishing in-flight requests (reason \"" +
            notice.reason + "\", reconnect_after " + std::to_string(notice.reconnect_after) + " ms)");
      } else if (sig == SIGHUP) {
        log("received SIGHUP while draining; already stopping");
      } else {
        log("second signal, closing now");
        force_close();
      }
      if (!finished) wait_signal();
    });
  }
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  detail::ignore_sigpipe();
  impl_->opts = std::move(options);
  if (!impl_->opts.log) impl_->opts.log = detail::default_log();
}

Server::~Server() {
  if (impl_ && !impl_->finished) {
    for (auto& l : impl_->unix_listeners) detail::remove_socket_file(l.file);
  }
}

boost::asio::io_context& Server::context() { return impl_->io; }
const ServerOptions& Server::options() const { return impl_->opts; }
std::size_t Server::connections() const { return impl_->connection_count(); }
Millis Server::started_ms() const { return impl_->started; }

void Server::method(std::string name, SyncHandler h, std::optional<ParamSpec> spec,
                    std::string description) {
  impl_->setups.push_back([=](Peer& p) { p.method(name, h, spec, description); });
}

void Server::method(std::string name, MethodHandler h, std::optional<ParamSpec> spec,
                    std::string description) {
  impl_->setups.push_back([=](Peer& p) { p.method(name, h, spec, description); });
}

void Server::notification(std::string name, NotificationHandler h, std::optional<ParamSpec> spec) {
  impl_->setups.push_back([=](Peer& p) { p.notification(name, h, spec); });
}

void Server::on_peer(std::function<void(Peer&)> setup) { impl_->setups.push_back(std::move(setup)); }

Result<void> Server::listen_unix(const std::string& path) {
  auto& l = impl_->unix_listeners.emplace_back(impl_->io);
  auto r = detail::open_unix_listener(l.acceptor, path, l.file, impl_->opts.log);
  if (!r) {
    impl_->unix_listeners.pop_back();
    return r;
  }
  l.out_of_fds = impl_->refusal(default_framing(Transport::Unix), "out of file descriptors");
  impl_->accept(l, default_framing(Transport::Unix), "unix");
  return {};
}

Result<void> Server::listen_tcp(const std::string& host, std::uint16_t port) {
  auto& l = impl_->tcp_listeners.emplace_back(impl_->io);
  auto r = detail::open_tcp_listener(l.acceptor, host, port);
  if (!r) {
    impl_->tcp_listeners.pop_back();
    return r;
  }
  l.out_of_fds = impl_->refusal(default_framing(Transport::Tcp), "out of file descriptors");
  impl_->accept(l, default_framing(Transport::Tcp), "tcp");
  return {};
}

std::uint16_t Server::tcp_port() const {
  for (auto& l : impl_->tcp_listeners) {
    boost::system::error_code ec;
    auto ep = l.acceptor.local_endpoint(ec);
    if (!ec) return ep.port();
  }
  return 0;
}

Result<void> Server::listen_ws(const std::string& host, std::uint16_t port) {
  return impl_->add_web(impl_->ws, detail::make_ws_service(impl_->hub(), host, port), "WebSocket");
}

std::uint16_t Server::ws_port() const { return impl_->ws ? impl_->ws->port() : 0; }

Result<void> Server::listen_http(const std::string& host, std::uint16_t port) {
  return impl_->add_web(impl_->http, detail::make_http_service(impl_->hub(), host, port), "HTTP");
}

std::uint16_t Server::http_port() const { return impl_->http ? impl_->http->port() : 0; }

Result<void> Server::serve_stdio() {
  // Private copies of stdin/stdout; fd 1 then points at stderr, so nothing but
  // frames can ever reach the real stdout.
  int in = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
  if (in < 0) return Error(code::kServerError, std::string("dup stdin: ") + std::strerror(errno));
  int out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (out < 0) {
    ::close(in);
    return Error(code::kServerError, std::string("dup stdout: ") + std::strerror(errno));
  }
  ::dup2(2, 1);
  impl_->add_session(Session::Fd(impl_->io, in), Session::Fd(impl_->io, out), default_framing(Transport::Stdio),
                     "stdio", true);
  return {};
}

int Server::run() {
  if (impl_->opts.handle_signals && !impl_->signals) {
    impl_->signals.emplace(impl_->io, SIGINT, SIGTERM, SIGHUP);
    impl_->wait_signal();
  }
  if (impl_->finished) return impl_->exit_code;
  impl_->io.run();
  if (!impl_->finished) impl_->finish();
  return impl_->exit_code;
}

void Server::stop() { impl_->stop(impl_->make_notice("shutdown")); }

void Server::drain(DrainNotice notice) { impl_->stop(std::move(notice)); }

}  // namespace weft::host
