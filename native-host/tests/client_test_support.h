// client_test_support.h — what the Client tests share: a temporary
// directory, a Server on its own thread (a demo one on loopback), a quiet
// client config, and running the client's loop until a condition holds.
#pragma once

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include <boost/asio/post.hpp>

#include "demo.h"
#include "weft/host/host.h"

namespace client_test {

using weft::json;
using weft::host::ClientConfig;

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/weft-client-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

// A Server on its own thread.
struct Running {
  weft::host::Server server;
  std::thread thread;
  explicit Running(weft::host::ServerOptions o) : server(o) {}
  void start() {
    thread = std::thread([this] { server.run(); });
  }
  // Listens on the Unix socket `path`, starts, and returns its address.
  std::string serve_unix(const std::string& path) {
    REQUIRE(server.listen_unix(path));
    start();
    return "unix:" + path;
  }
  void stop() {
    boost::asio::post(server.context(), [this] { server.stop(); });
    if (thread.joinable()) thread.join();
  }
  ~Running() { stop(); }
};

inline weft::host::ServerOptions quiet_server() {
  weft::host::ServerOptions so;
  so.handle_signals = false;
  so.grace_ms = 0;  // a stop closes connections at once: calls in flight are lost
  so.log = [](std::string_view) {};
  return so;
}

// A demo server on loopback: TCP, WebSocket and Streamable HTTP.
struct LoopbackServer {
  Running srv{quiet_server()};
  LoopbackServer() {
    srv.server.on_peer([](weft::Peer& p) { weft::register_demo_methods(p); });
    REQUIRE(srv.server.listen_tcp("127.0.0.1", 0));
    REQUIRE(srv.server.listen_ws("127.0.0.1", 0));
    REQUIRE(srv.server.listen_http("127.0.0.1", 0));
    srv.start();
  }
  // By host name, so that each connection is resolved (Asio's resolver thread).
  std::string tcp() const { return "tcp:localhost:" + std::to_string(srv.server.tcp_port()); }
  std::string ws() const { return "ws://localhost:" + std::to_string(srv.server.ws_port()) + "/"; }
  std::string http() const { return "http://localhost:" + std::to_string(srv.server.http_port()) + "/mcp"; }
};

inline ClientConfig config(const std::string& address) {
  ClientConfig c;
  c.address = address;
  c.log = [](std::string_view) {};
  c.child_grace_ms = 100;
  return c;
}

// Runs the client's loop until `done` (bounded by the calls' own timeouts).
inline void run_until(boost::asio::io_context& io, const std::function<bool()>& done) {
  while (!done()) {
    io.restart();
    if (io.run_one() == 0) break;
  }
}

}  // namespace client_test

using namespace client_test;
