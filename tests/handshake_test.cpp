// The optional handshake (docs/protocol.md, "Handshake"): versions,
// capabilities agreed and what they gate, limits and the session id.
#include <catch2/catch.hpp>

#include "peer_pair.h"
#include "weft/weft.h"

using namespace weft;
using weft::test::Pair;

namespace {
Handshake offer(std::string version, std::vector<std::string> caps) {
  Handshake h;
  h.version = std::move(version);
  h.capabilities = std::move(caps);
  return h;
}
// A pair whose server serves rpc.handshake with `server_side`.
Pair served(Handshake server_side) {
  return Pair({}, [server_side](PeerOptions& o, bool server) {
    if (server) o.handshake = server_side;
  });
}
// The answer of `p`'s server to a raw rpc.handshake request carrying `params`.
Result<json> raw_handshake(Pair& p, const json& params) {
  std::optional<Result<json>> got;
  p.client->call("rpc.handshake", params, [&](Result<json> r) { got = std::move(r); }, {}, 0);
  p.run();
  REQUIRE(got);
  return std::move(*got);
}
// The same, sent to a server offering 1.0.
Result<json> raw_handshake(const json& params) {
  Pair p = served(offer("1.0", {}));
  return raw_handshake(p, params);
}
}  // namespace

TEST_CASE("rpc.handshake agrees on the capabilities both sides have, with limits and session", "[handshake]") {
  Handshake mine = offer("1.0", {"streams", "progress", "drain"});
  mine.session = "s-42";
  Pair p = served(mine);
  std::optional<Result<Handshake>> got;
  REQUIRE(p.client->handshake(offer("1.3", {"streams", "compression"}),
                              [&](Result<Handshake> r) { got = std::move(r); }, {}, 0).ok());
  p.run();
  REQUIRE(got);
  REQUIRE(got->ok());
  CHECK((*got)->capabilities == std::vector<std::string>{"streams"});
  CHECK((*got)->session == "s-42");
  CHECK((*got)->limits.at("max_in_flight") == 1000);
  REQUIRE(p.client->agreed());
  REQUIRE(p.server->agreed());
  CHECK(p.server->agreed()->capabilities == std::vector<std::string>{"streams"});
}

TEST_CASE("a different major version is refused with -32006", "[handshake]") {
  Pair p = served(offer("1.0", {"streams"}));
  std::optional<Result<Handshake>> got;
  p.client->handshake(offer("2.0", {"streams"}), [&](Result<Handshake> r) { got = std::move(r); }, {}, 0);
  p.run();
  REQUIRE(got);
  REQUIRE_FALSE(got->ok());
  CHECK(got->error().code == code::kVersionMismatch);
  CHECK(got->error().message == "Unsupported protocol version 2.0 (this side speaks 1.0)");
  CHECK_FALSE(p.server->agreed());
}

TEST_CASE("a malformed handshake is -32602 naming the member", "[handshake]") {
  const Result<json> got = raw_handshake(json{{"version", 1}});
  REQUIRE_FALSE(got.ok());
  CHECK(got.error().code == code::kInvalidParams);
  CHECK(got.error().message == R"(Invalid params: rpc.handshake: "version" must be a string "major.minor")");
}

TEST_CASE("a version not of the form major.minor is -32602", "[handshake]") {
  // "1" has no minor part and "01.0" a leading zero: neither is read as 1.0.
  for (const char* v : {"1", "01.0", "1.00", "1.", ".0", "1.0.0", "1.x", "+1.0", " 1.0"}) {
    INFO(v);
    const Result<json> got = raw_handshake(json{{"version", v}});
    REQUIRE_FALSE(got.ok());
    CHECK(got.error().code == code::kInvalidParams);
    CHECK(got.error().message == R"(Invalid params: rpc.handshake: "version" must be a string "major.minor")");
  }
  for (const char* v : {"1.0", "1.10", "10.0", "1.999999"}) {
    INFO(v);
    const Result<json> got = raw_handshake(json{{"version", v}});
    if (std::string(v) == "10.0") CHECK(got.error().code == code::kVersionMismatch);
    else CHECK(got.ok());
  }
}

TEST_CASE("limits that are not an object and a session that is not a string are -32602", "[handshake]") {
  const std::pair<json, const char*> cases[] = {
      {json{{"version", "1.0"}, {"limits", 5}}, R"(Invalid params: rpc.handshake: "limits" must be an object)"},
      {json{{"version", "1.0"}, {"limits", json::array()}}, R"(Invalid params: rpc.handshake: "limits" must be an object)"},
      {json{{"version", "1.0"}, {"session", 7}}, R"(Invalid params: rpc.handshake: "session" must be a string)"},
  };
  for (const auto& [params, message] : cases) {
    INFO(params.dump());
    Pair p = served(offer("1.0", {}));
    const Result<json> got = raw_handshake(p, params);
    REQUIRE_FALSE(got.ok());
    CHECK(got.error().code == code::kInvalidParams);
    CHECK(got.error().message == message);
    CHECK_FALSE(p.server->agreed());
  }
}

TEST_CASE("handshakes are off by default: rpc.handshake is an unknown method", "[handshake]") {
  Pair p;
  std::optional<Result<Handshake>> got;
  p.client->handshake(offer("1.0", {"streams"}), [&](Result<Handshake> r) { got = std::move(r); }, {}, 0);
  p.run();
  REQUIRE(got);
  CHECK(got->error().code == code::kMethodNotFound);
  CHECK_FALSE(p.client->agreed());
}

TEST_CASE("capabilities gate streams and progress once agreed", "[handshake][stream]") {
  Pair p = served(offer("1.0", {"drain"}));  // no streams, no progress
  p.server->method("work", MethodHandler([](json, Reply r, const CallInfo&) {
    CHECK_FALSE(r.streaming());
    CHECK_FALSE(r.wants_progress());
    r.ok(1);
  }));
  p.client->handshake(offer("1.0", {"streams", "progress", "drain"}), [](Result<Handshake>) {}, {}, 0);
  p.run();
  StreamOptions so;
  so.on_chunk = [](Chunk&&) {};
  auto refused = p.client->stream("work", std::nullopt, so, [](Result<json>) {}, {}, 0);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "Invalid Request: streams were not agreed in the handshake");
  // A caller that asks for progress anyway sends no $/weft/open for it.
  CallOptions opts;
  opts.on_progress = [](json) {};
  const auto before = p.from_client.size();
  p.client->call("work", std::nullopt, [](Result<json>) {}, opts, 0);
  p.run();
  REQUIRE(p.from_client.size() == before + 1);
  CHECK(p.from_client.back().find("$/weft/open") == std::string::npos);
}

TEST_CASE("compression: the serving side picks the first of the caller's preferences it supports",
          "[handshake][compression]") {
  Handshake server_side = offer("1.0", {"compression"});
  server_side.compression_preference = {"lz4", "zstd"};
  Pair p = served(server_side);
  Handshake mine = offer("1.0", {"compression"});
  mine.compression_preference = {"none", "brotli", "zstd", "lz4"};
  std::optional<Result<Handshake>> got;
  REQUIRE(p.client->handshake(mine, [&](Result<Handshake> r) { got = std::move(r); }, {}, 0).ok());
  p.run();
  REQUIRE(got);
  REQUIRE(got->ok());
  CHECK((*got)->compression_used == "zstd");  // "none" is never picked
  CHECK((*got)->capabilities == std::vector<std::string>{"compression"});
  CHECK(p.server->agreed()->compression_used == "zstd");
  // On the wire: compression_preference in the offer, compression_used in the answer.
  CHECK(p.from_client[0].find(R"("compression_preference":["none","brotli","zstd","lz4"])") != std::string::npos);
  CHECK(p.from_server[0].find(R"("compression_used":"zstd")") != std::string::npos);
}

TEST_CASE("compression: no common algorithm, or no capability, agrees on no compression",
          "[handshake][compression]") {
  Handshake server_side = offer("1.0", {"compression", "streams"});
  server_side.compression_preference = {"zstd"};
  SECTION("no common algorithm") {
    Pair p = served(server_side);
    Handshake mine = offer("1.0", {"compression", "streams"});
    mine.compression_preference = {"lz4"};
    std::optional<Result<Handshake>> got;
    p.client->handshake(mine, [&](Result<Handshake> r) { got = std::move(r); }, {}, 0);
    p.run();
    REQUIRE(got->ok());
    CHECK((*got)->compression_used.empty());
    CHECK((*got)->capabilities == std::vector<std::string>{"streams"});
  }
  SECTION("an algorithm but not the capability") {
    Pair p = served(server_side);
    Handshake mine = offer("1.0", {"streams"});
    mine.compression_preference = {"zstd"};
    std::optional<Result<Handshake>> got;
    p.client->handshake(mine, [&](Result<Handshake> r) { got = std::move(r); }, {}, 0);
    p.run();
    REQUIRE(got->ok());
    CHECK((*got)->compression_used.empty());
    CHECK(p.server->agreed()->compression_used.empty());
  }
}

TEST_CASE("compression: an answer naming an algorithm the caller did not offer is not agreed",
          "[handshake][compression]") {
  Pair p;
  p.server->method("rpc.handshake", SyncHandler([](const json&) -> Result<json> {
    return json{{"version", "1.0"}, {"capabilities", {"compression"}}, {"compression_used", "lz4"}};
  }));
  Handshake mine = offer("1.0", {"compression"});
  mine.compression_preference = {"zstd"};
  std::optional<Result<Handshake>> got;
  p.client->handshake(mine, [&](Result<Handshake> r) { got = std::move(r); }, {}, 0);
  p.run();
  REQUIRE(got->ok());
  CHECK((*got)->compression_used.empty());
  CHECK((*got)->capabilities.empty());
}

TEST_CASE("a malformed compression member is -32602 naming it", "[handshake][compression]") {
  const Result<json> got = raw_handshake(json{{"version", "1.0"}, {"compression_preference", "zstd"}});
  REQUIRE_FALSE(got.ok());
  CHECK(got.error().code == code::kInvalidParams);
  CHECK(got.error().message ==
        R"(Invalid params: rpc.handshake: "compression_preference" must be an array of strings)");
}
