// acceptor_loop.h — what the WebSocket and HTTP listeners share: the TCP
// acceptor, the open connections, the connection limit and the draining state
// (docs/transports.md, "Security and limits": max_connections).
//
// A listener derives from AcceptorLoop<Self, Conn> (Self: the listener itself,
// whose protocol-specific members its connections use) and implements
// WebService::connections, drain and close_all with stop_accepting(),
// snapshot() and notify_idle(); Self::make opens one. Self must be
// constructible from a Hub, and Conn must provide
//   Conn(Self&, tcp::socket, std::string name)  // name for logs: "<prefix><n>"
//   void start(bool over_limit)  // over_limit: refuse it (503) and close
// and call remove(this) once it is closed.
//
// Asio only: no Beast here, which would cost every includer its compile time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "listener.h"
#include "net/hub.h"

namespace weft::host::detail {

template <class Self, class Conn>
class AcceptorLoop : public WebService {
 public:
  using tcp = boost::asio::ip::tcp;

  // `kind` names the listener in logs ("ws accept: …"), `conn_prefix` its
  // connections ("ws#1").
  AcceptorLoop(Hub hub, std::string kind, std::string conn_prefix)
      : hub_(std::move(hub)), acceptor_(hub_.io), retry_(hub_.io), kind_(std::move(kind)),
        conn_prefix_(std::move(conn_prefix)) {}

  // A Self listening on host:port; errors are values (bad address, port taken).
  static Result<std::unique_ptr<WebService>> make(Hub hub, const std::string& host, std::uint16_t port) {
    auto s = std::make_unique<Self>(std::move(hub));
    if (auto r = s->listen(host, port); !r) return r.error();
    return std::unique_ptr<WebService>(std::move(s));
  }

  std::uint16_t port() const override {
    boost::system::error_code ec;
    auto ep = acceptor_.local_endpoint(ec);
    return ec ? 0 : ep.port();
  }
  bool idle() const override { return conns_.empty(); }

  // A connection that has closed leaves the set; the last one out of a
  // draining listener runs on_idle.
  void remove(Conn* c) {
    auto it = conns_.find(c);
    if (it == conns_.end()) return;
    auto hold = it->second;  // c is mid-call (its finish()): not destroyed inside erase
    conns_.erase(it);
    notify_idle();
  }

  Hub& hub() { return hub_; }
  bool draining() const { return draining_; }
  // A WebSocket message or HTTP body larger than this is refused
  // (docs/transports.md: --max-message, default framing_limits.max_frame).
  std::size_t max_message() const {
    return hub_.opts.web.max_message ? hub_.opts.web.max_message : hub_.opts.framing_limits.max_frame;
  }
  void log(const std::string& s) {
    if (hub_.log) hub_.log(s);
  }

 protected:
  // The start of drain() and close_all(): no connection is accepted from here.
  void stop_accepting() {
    draining_ = true;
    boost::system::error_code ec;
    acceptor_.close(ec);
    retry_.cancel();
  }
  std::size_t open_connections() const { return conns_.size(); }
  // A copy: closing a connection removes it from the set while we iterate.
  std::vector<std::shared_ptr<Conn>> snapshot() const {
    std::vector<std::shared_ptr<Conn>> all;
    for (auto& [raw, c] : conns_) all.push_back(c);
    return all;
  }
  void notify_idle() {
    if (draining_ && conns_.empty() && on_idle) on_idle();
  }

 private:
  Result<void> listen(const std::string& host, std::uint16_t port) {
    auto r = open_tcp_listener(acceptor_, host, port);
    if (!r) return r;
    accept();
    return {};
  }
  void accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (draining_ || ec == boost::asio::error::operation_aborted) return;
      if (ec) {
        // Out of file descriptors and the like: try again shortly rather than
        // spin or stop listening.
        log(kind_ + " accept: " + ec.message());
        retry_.expires_after(std::chrono::milliseconds(100));
        retry_.async_wait([this](boost::system::error_code e) {
          if (!e && !draining_) accept();
        });
        return;
      }
      socket.set_option(tcp::no_delay(true), ec);
      // Over the limit, the connection is still made so that it is told why
      // (503) before it is closed.
      const bool over = conns_.size() >= hub_.opts.web.max_connections;
      auto c = std::make_shared<Conn>(static_cast<Self&>(*this), std::move(socket),
                                      conn_prefix_ + std::to_string(next_id_++));
      conns_.emplace(c.get(), c);
      c->start(over);
      accept();
    });
  }

  Hub hub_;
  tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;
  std::unordered_map<Conn*, std::shared_ptr<Conn>> conns_;
  std::string kind_, conn_prefix_;
  std::uint64_t next_id_ = 1;
  bool draining_ = false;
};

}  // namespace weft::host::detail
