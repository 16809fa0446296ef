// client_test_support.h — what the Client tests share: a temporary
// directory, a Server on its own thread, a quiet client config, and running
// the client's loop until a condition holds.
#pragma once

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include <boost/asio/post.hpp>

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
