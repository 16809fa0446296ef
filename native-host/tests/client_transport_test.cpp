// The Client's transports and addresses: exec children that crash, hang or
// write garbage (a clear error with the child's stderr tail, never a hang),
// the address strings, and the CLI flags that take them.
#include <catch2/catch.hpp>

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
