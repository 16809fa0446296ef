// The `weft` command line: every accepted form and one-line errors.
#include <catch2/catch.hpp>

#include "cli/options.h"

using namespace weft::cli;

static Parsed P(std::vector<std::string> a) { return parse(a); }

TEST_CASE("serve transports and defaults") {
  auto p = P({"serve", "--stdio"});
  REQUIRE(p.error.empty());
  CHECK(p.options.command == Command::Serve);
  CHECK(p.options.transport == Transport::Stdio);
  CHECK(!p.options.framing);
  CHECK(p.options.codec == weft::CodecKind::Json);

  p = P({"serve", "--unix", "/tmp/x.sock", "--framing", "len32le", "--codec=msgpack", "--demo"});
  REQUIRE(p.error.empty());
  CHECK(p.options.unix_path == "/tmp/x.sock");
  CHECK(*p.options.framing == weft::Framing::Len32Le);
  CHECK(p.options.codec == weft::CodecKind::MessagePack);
  CHECK(p.options.demo);

  p = P({"serve", "--tcp", "127.0.0.1:0"});
  REQUIRE(p.error.empty());
  CHECK(p.options.host == "127.0.0.1");
  CHECK(p.options.port == 0);
  p = P({"serve", "--tcp", "[::1]:8080"});
  REQUIRE(p.error.empty());
  CHECK(p.options.host == "::1");
  CHECK(p.options.port == 8080);
}

TEST_CASE("call parses method, params and client flags") {
  auto p = P({"call", "--unix", "/s", "--timeout", "250", "--retries", "5", "sum", "[1,2,3]"});
  REQUIRE(p.error.empty());
  CHECK(p.options.command == Command::Call);
  CHECK(p.options.method == "sum");
  CHECK(*p.options.params == weft::json::array({1, 2, 3}));
  CHECK(*p.options.timeout_ms == 250);
  CHECK(p.options.retries == 5);

  p = P({"notify", "--exec", "weft serve --stdio", "update", "{\"a\":1}"});
  REQUIRE(p.error.empty());
  CHECK(p.options.transport == Transport::Exec);
  CHECK(p.options.exec == "weft serve --stdio");
  CHECK(p.options.params->is_object());

  p = P({"call", "rpc.ping"});
  REQUIRE(p.error.empty());
  CHECK(p.options.transport == Transport::Default);
  CHECK(!p.options.params);
}

TEST_CASE("help everywhere") {
  for (auto args : std::vector<std::vector<std::string>>{
           {"--help"}, {"serve", "--help"}, {"call", "--help"}, {"notify", "-h"}, {"call", "--unix", "x", "--help"}}) {
    auto p = P(args);
    CHECK(p.error.empty());
    CHECK(p.options.help);
  }
  CHECK(usage(Command::Serve).find("--stdio") != std::string::npos);
  CHECK(usage(Command::Call).find("--retries") != std::string::npos);
}

TEST_CASE("bad command lines are one-line errors") {
  for (auto args : std::vector<std::vector<std::string>>{
           {},
           {"frobnicate"},
           {"serve", "--bogus"},
           {"serve", "--stdio", "--unix", "/x"},
           {"serve", "--framing", "xml"},
           {"serve", "--codec", "cbor"},
           {"serve", "--tcp", "nope"},
           {"serve", "--tcp", "127.0.0.1:70000"},
           {"serve", "--exec", "x"},
           {"serve", "extra"},
           {"call", "--stdio", "m"},
           {"call", "--unix"},
           {"call", "--timeout", "abc", "m"},
           {"call", "--retries", "-1", "m"},
           {"call"},
           {"call", "m", "{bad json"},
           {"call", "m", "42"},
           {"call", "m", "[]", "extra"},
           {"notify", "--demo", "m"},
           {"call", "--framing", "ndjson", "--codec", "msgpack", "m"},
       }) {
    auto p = P(args);
    INFO(args.size());
    CHECK(!p.error.empty());
    CHECK(p.error.find('\n') == std::string::npos);
  }
}

TEST_CASE("--max-depth sets the codec's nesting limit for serve, call and notify") {
  auto p = P({"serve", "--stdio", "--max-depth", "300"});
  REQUIRE(p.error.empty());
  CHECK(*p.options.max_depth == 300);
  p = P({"call", "--max-depth=1", "m"});
  REQUIRE(p.error.empty());
  CHECK(*p.options.max_depth == 1);
  p = P({"notify", "--max-depth", "10000", "m"});
  REQUIRE(p.error.empty());
  CHECK(*p.options.max_depth == 10000);
  // Unset: the core's default (CodecLimits) applies.
  CHECK(!P({"serve", "--stdio"}).options.max_depth);
  CHECK(usage(Command::Serve).find("--max-depth N") != std::string::npos);
  CHECK(usage(Command::Call).find("--max-depth N") != std::string::npos);

  for (const char* bad : {"0", "10001", "-1", "abc", ""}) {
    p = P({"serve", "--max-depth", bad});
    INFO(bad);
    CHECK(p.error == std::string("--max-depth expects an integer from 1 to 10000, got '") + bad + "'");
  }
}

TEST_CASE("serve limit flags set their limits; call and notify do not take them") {
  auto p = P({"serve", "--unix", "/tmp/x", "--max-message", "1000", "--max-in-flight=8", "--max-batch", "16",
              "--max-connections", "5", "--max-output", "65536", "--frame-timeout", "400",
              "--idle-timeout", "300", "--write-timeout", "0", "--grace", "1000", "--max-response", "2000"});
  REQUIRE(p.error.empty());
  // --max-message, --max-connections and --idle-timeout are shared with --ws/--http.
  CHECK(*p.options.max_message == 1000);
  CHECK(*p.options.max_connections == 5);
  CHECK(*p.options.idle_timeout_ms == 300);
  const auto& l = p.options.limits;
  CHECK(*l.max_in_flight == 8);
  CHECK(*l.max_batch == 16);
  CHECK(*l.max_output == 65536);
  CHECK(*l.max_response == 2000);
  CHECK(*l.frame_timeout == 400);
  CHECK(*l.write_timeout == 0);  // 0: no write timeout
  CHECK(*l.grace == 1000);
  CHECK(!P({"serve", "--stdio"}).options.limits.max_in_flight);  // unset: ServerOptions' defaults

  CHECK(P({"serve", "--max-in-flight", "0"}).error == "--max-in-flight expects an integer from 1 to 2^40, got '0'");
  CHECK(P({"serve", "--frame-timeout", "soon"}).error == "--frame-timeout expects milliseconds (0 or more), got 'soon'");
  CHECK(P({"call", "--max-message", "10", "m"}).error.find("unknown option '--max-message'") == 0);
  // Each command names only the transports it has.
  CHECK(P({"serve", "--stdio", "--unix", "x"}).error == "only one of --stdio, --unix, --tcp may be given (--unix)");
  CHECK(P({"call", "--unix", "x", "--exec", "y", "m"}).error ==
        "only one of --unix, --tcp, --exec, --connect may be given (--exec)");
}

TEST_CASE("serve drain flags set the notice's reconnect_after and downtime") {
  auto p = P({"serve", "--unix", "/tmp/x", "--reconnect-after", "250", "--downtime=2000"});
  REQUIRE(p.error.empty());
  CHECK(*p.options.limits.reconnect_after == 250);
  CHECK(*p.options.limits.downtime == 2000);
  CHECK(!P({"serve", "--stdio"}).options.limits.reconnect_after);  // unset: ServerOptions' default (1000)
  CHECK(P({"serve", "--reconnect-after", "later"}).error ==
        "--reconnect-after expects milliseconds (0 or more), got 'later'");
  CHECK(P({"call", "--downtime", "10", "m"}).error.find("unknown option '--downtime'") == 0);
}

TEST_CASE("call --stream: a streamed call; not with --session, not for notify or serve") {
  auto p = P({"call", "--unix", "/s", "--stream", "bytes", "{\"count\":3,\"size\":4}"});
  REQUIRE(p.error.empty());
  CHECK(p.options.stream);
  CHECK(p.options.method == "bytes");
  CHECK(!P({"call", "--unix", "/s", "bytes"}).options.stream);
  CHECK(P({"call", "--stream", "--session"}).error == "--session and --stream cannot be combined");
  CHECK(P({"notify", "--stream", "m"}).error.find("unknown option '--stream'") == 0);
  CHECK(P({"serve", "--stream"}).error.find("unknown option '--stream'") == 0);
  CHECK(P({"call", "--stream=1", "m"}).error == "--stream takes no value");
}

TEST_CASE("--handshake, --metrics and --compress zstd: serve serves them, call offers them") {
  auto p = P({"serve", "--unix", "/tmp/x", "--handshake"});
  REQUIRE(p.error.empty());
  CHECK(p.options.handshake);
  CHECK_FALSE(p.options.metrics);
  CHECK(p.options.compress.empty());
  p = P({"serve", "--unix", "/tmp/x", "--metrics", "--compress", "zstd"});
  REQUIRE(p.error.empty());
  CHECK(p.options.handshake);  // implied
  CHECK(p.options.metrics);
  CHECK(p.options.compress == std::vector<std::string>{"zstd"});
  p = P({"call", "--unix", "/tmp/x", "--metrics", "--compress=zstd", "m"});
  REQUIRE(p.error.empty());
  CHECK(p.options.metrics);
  CHECK(p.options.compress == std::vector<std::string>{"zstd"});

  CHECK(P({"serve", "--compress", "lz4"}).error == "unknown compression 'lz4' (zstd)");
  CHECK(P({"call", "--handshake", "m"}).error.find("unknown option '--handshake'") == 0);
  CHECK(P({"notify", "--metrics", "m"}).error.find("unknown option '--metrics'") == 0);
}
