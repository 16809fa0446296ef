// The Client's transports and addresses: exec children that crash, hang or
// write garbage (a clear error with the child's stderr tail, never a hang),
// the address strings, and the CLI flags that take them.
#include <catch2/catch.hpp>

#include <memory>
#include <optional>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "address.h"
#include "cli/options.h"
#include "client_test_support.h"

using weft::json;
using weft::host::Client;
using weft::host::ClientConfig;
using weft::host::Outcome;
using S = weft::host::Outcome::Status;

TEST_CASE("exec: a child that crashes fails the call with its exit status and stderr tail") {
  boost::asio::io_context io;
  Client client(io, config("exec:echo 'fatal: no config file' >&2; exit 3"));
  std::optional<Outcome> o;
  client.call("rpc.ping", std::nullopt, {.timeout = 10000}, [&](Outcome r) { o = std::move(r); });
  run_until(io, [&] { return o.has_value(); });
  CHECK(o->status == S::ConnectFailed);
  CHECK(o->error.code == weft::code::kClosed);
  CHECK_THAT(o->error.message, Catch::Contains("exited with status 3"));
  CHECK_THAT(o->error.message, Catch::Contains("fatal: no config file"));
}

TEST_CASE("exec: a child that hangs ends in the caller's timeout, never a hang") {
  boost::asio::io_context io;
  Client client(io, config("exec:echo 'loading...' >&2; exec sleep 30"));
  std::optional<Outcome> o;
  client.call("rpc.ping", std::nullopt, {.timeout = 300}, [&](Outcome r) { o = std::move(r); });
  run_until(io, [&] { return o.has_value(); });
  CHECK(o->status == S::Timeout);
  CHECK_THAT(o->error.message, Catch::Contains("loading..."));
}

TEST_CASE("exec: a child writing garbage on stdout fails the call with -32700 and its stderr tail") {
  boost::asio::io_context io;
  Client client(io, config("exec:echo 'this is not a frame'; echo 'oops' >&2; exec sleep 30"));
  std::optional<Outcome> o;
  client.call("rpc.ping", std::nullopt, {.timeout = 10000}, [&](Outcome r) { o = std::move(r); });
  run_until(io, [&] { return o.has_value(); });
  CHECK(o->status == S::RemoteError);
  CHECK(o->error.code == weft::code::kParseError);
  CHECK_THAT(o->error.message, Catch::Contains("undecodable data from the server"));
  CHECK_THAT(o->error.message, Catch::Contains("oops"));
}

TEST_CASE("exec: a working child answers, and is reaped when the client is destroyed") {
  std::optional<Outcome> o;
  {
    weft::host::BlockingClient c(config("exec:exec cat"));  // echoes our request back
    c.client().method("ping", [](const json&) -> weft::Result<json> { return json("pong"); });
    o = c.call("ping", std::nullopt, {.timeout = 10000});
  }
  // cat echoes our request to us: our own Peer serves it and its answer
  // (to our request's id) goes to cat, which echoes it back: our call is answered.
  REQUIRE(o->status == S::Ok);
  CHECK(o->result == "pong");
}

TEST_CASE("addresses: one string chooses the transport") {
  using weft::host::detail::Address;
  using weft::host::detail::parse_address;
  auto a = parse_address("unix:/run/app.sock");
  REQUIRE(a);
  CHECK(a->kind == Address::Kind::Unix);
  CHECK(a->path == "/run/app.sock");
  a = parse_address("tcp:[::1]:7000");
  REQUIRE(a);
  CHECK(a->host == "::1");
  CHECK(a->port == 7000);
  a = parse_address("exec:weft serve --stdio");
  REQUIRE(a);
  CHECK(a->command == "weft serve --stdio");
  a = parse_address("ws://127.0.0.1:7001/rpc");
  REQUIRE(a);
  CHECK(a->kind == Address::Kind::WebSocket);
  CHECK(a->path == "/rpc");
  a = parse_address("http://localhost/mcp");
  REQUIRE(a);
  CHECK(a->port == 80);
  a = parse_address("ws://h:1");
  REQUIRE(a);
  CHECK(a->path == "/");
  for (const char* bad : {"", "unix:", "tcp:host", "tcp:h:99999", "exec:  ", "wss://h/", "https://h/", "ftp://h",
                          "http://:80/", "/tmp/x.sock"}) {
    auto r = parse_address(bad);
    CHECK_FALSE(r);
    if (!r) CHECK(r.error().code == weft::code::kInvalidParams);
  }
  CHECK_THAT(parse_address("wss://h/").error().message, Catch::Contains("TLS"));
}

TEST_CASE("a bad address fails each call with -32602, after call() returns") {
  boost::asio::io_context io;
  Client client(io, config("carrier-pigeon:home"));
  std::optional<Outcome> o;
  client.call("x", std::nullopt, {}, [&](Outcome r) { o = std::move(r); });
  CHECK_FALSE(o.has_value());
  run_until(io, [&] { return o.has_value(); });
  CHECK(o->error.code == weft::code::kInvalidParams);
}

TEST_CASE("weft call --connect ADDR and --session") {
  using weft::cli::parse;
  auto p = parse({"call", "--connect", "ws://127.0.0.1:7001/rpc", "sum", "[1,2]"});
  REQUIRE(p.error.empty());
  CHECK(p.options.transport == weft::cli::Transport::Address);
  CHECK(p.options.address == "ws://127.0.0.1:7001/rpc");
  p = parse({"call", "--session", "--connect", "exec:weft serve --stdio"});
  REQUIRE(p.error.empty());
  CHECK(p.options.session);
  CHECK(p.options.method.empty());
  CHECK_THAT(parse({"call", "--connect", "wss://h/", "m"}).error, Catch::Contains("TLS is not supported"));
  CHECK_THAT(parse({"call", "--session", "--unix", "/x", "m"}).error, Catch::Contains("reads requests from stdin"));
  CHECK_THAT(parse({"call", "--unix", "/x", "--connect", "tcp:h:1", "m"}).error, Catch::Contains("only one of"));
  CHECK_FALSE(parse({"notify", "--session", "m"}).error.empty());  // call only
  CHECK_FALSE(parse({"serve", "--connect", "unix:/x"}).error.empty());
}

TEST_CASE("a request over max_request is not sent over any transport: its call fails at once naming the limit") {
  LoopbackServer s;
  for (const std::string& address : {s.tcp(), s.ws(), s.http()}) {
    INFO(address);
    ClientConfig cfg = config(address);
    cfg.max_request = 1000;
    weft::host::BlockingClient c(cfg);
    Outcome big = c.call("echo", json::array({std::string(2000, 'x')}), {.timeout = 10000});
    CHECK(big.status != S::Ok);
    CHECK(big.error.code == weft::code::kClosed);
    CHECK_THAT(big.error.message, Catch::Contains("over max_request (1000)"));
    CHECK(c.call("echo", json::array({1}), {.timeout = 10000}).ok());  // the connection goes on
  }
}

// ---- HTTP: a POST is sent once ------------------------------------------------------

namespace {
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

// A raw HTTP server on the test's own loop. Each connection reads one POST
// (counted); `answer` says whether to answer it (200, keep-alive) before
// closing the connection, as a server's idle timeout would.
struct OnePostServer {
  tcp::acceptor acceptor;
  bool answer;
  int posts = 0;
  int closed = 0;
  OnePostServer(boost::asio::io_context& io, bool answer_it)
      : acceptor(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)), answer(answer_it) {
    accept();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/mcp"; }
  void accept() {
    acceptor.async_accept([this](const boost::system::error_code& ec, tcp::socket s) {
      if (ec) return;
      serve(std::make_shared<tcp::socket>(std::move(s)));
      accept();
    });
  }
  void serve(std::shared_ptr<tcp::socket> s) {
    auto buf = std::make_shared<beast::flat_buffer>();
    auto req = std::make_shared<http::request<http::string_body>>();
    http::async_read(*s, *buf, *req, [this, s, buf, req](const boost::system::error_code& ec, std::size_t) {
      if (ec) return;  // the client's probe connection, closed unused
      ++posts;
      if (!answer) return close(*s);
      const json q = json::parse(req->body());
      auto res = std::make_shared<http::response<http::string_body>>(http::status::ok, 11);
      res->set(http::field::content_type, "application/json");
      res->keep_alive(true);
      res->body() = json{{"jsonrpc", "2.0"}, {"result", posts}, {"id", q["id"]}}.dump();
      res->prepare_payload();
      http::async_write(*s, *res, [this, s, res](const boost::system::error_code&, std::size_t) { close(*s); });
    });
  }
  void close(tcp::socket& s) {
    boost::system::error_code ignored;
    s.shutdown(tcp::socket::shutdown_both, ignored);
    s.close(ignored);
    ++closed;
  }
};
}  // namespace

TEST_CASE("HTTP: a request the server may have run is not sent again; its call fails -32002") {
  boost::asio::io_context io;
  OnePostServer server(io, false);  // reads the POST, closes without answering
  Client client(io, config(server.url()));
  std::optional<Outcome> o;
  client.call("subtract", json::array({5, 3}), {.timeout = 10000}, [&](Outcome r) { o = std::move(r); });
  run_until(io, [&] { return o.has_value(); });
  CHECK(o->status != S::Ok);
  CHECK(o->error.code == weft::code::kClosed);
  CHECK(server.posts == 1);
}

TEST_CASE("HTTP: a kept-alive connection the server closed is not reused; the next call goes out once, anew") {
  boost::asio::io_context io;
  OnePostServer server(io, true);  // answers, then closes the connection
  Client client(io, config(server.url()));
  std::optional<Outcome> first, second;
  client.call("ping", std::nullopt, {.timeout = 10000}, [&](Outcome r) { first = std::move(r); });
  run_until(io, [&] { return first.has_value() && server.closed == 1; });
  REQUIRE(first->status == S::Ok);
  client.call("ping", std::nullopt, {.timeout = 10000}, [&](Outcome r) { second = std::move(r); });
  run_until(io, [&] { return second.has_value(); });
  REQUIRE(second->status == S::Ok);
  CHECK(second->result == 2);
  CHECK(server.posts == 2);
}
