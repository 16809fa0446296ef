// hub.h — what the WebSocket and HTTP listeners (net/) get from the Server.
//
// The listeners live in their own translation units (Beast is slow to
// compile) and reach the server only through this: the one io_context, the
// options, and `install`, which puts on a new Peer exactly what a socket
// session gets (built-ins, then every method, notification and on_peer
// setup, in registration order; server.cpp). Each listener is a WebService
// the server drains and closes with its sockets on stop().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "weft/error.h"
#include "weft/host/server.h"
#include "weft/peer.h"

namespace weft::host::detail {

struct Hub {
  boost::asio::io_context& io;
  const ServerOptions& opts;
  std::function<void(Peer&)> install;
  std::function<void(std::string_view)> log;
};

class WebService {
 public:
  virtual ~WebService() = default;
  virtual std::uint16_t port() const = 0;
  // Open connections (WebSocket) or live sessions (HTTP).
  virtual std::size_t connections() const = 0;
  // Requests being served on them, not yet answered (rpc.ping's in_flight).
  virtual std::size_t in_flight() const = 0;
  // Stop accepting; every open peer announces `notice` ($/weft/drain) and
  // answers new requests -32005; requests in flight may finish until
  // `deadline`, then everything is closed. on_idle runs once nothing is left open.
  virtual void drain(Millis deadline, const DrainNotice& notice) = 0;
  // Close everything now (second signal).
  virtual void close_all() = 0;
  virtual bool idle() const = 0;
  std::function<void()> on_idle;
};

// Bind and listen; errors are values (bad address, port taken).
Result<std::unique_ptr<WebService>> make_ws_service(Hub hub, const std::string& host, std::uint16_t port);
Result<std::unique_ptr<WebService>> make_http_service(Hub hub, const std::string& host, std::uint16_t port);

}  // namespace weft::host::detail
