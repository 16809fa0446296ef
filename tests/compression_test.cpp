// zstd compression of frames (docs/framing.md, "Compression"): negotiated by
// rpc.handshake, only on the length-prefixed framings, payloads over 1 KiB,
// decompressed within max_frame, bad frames answered and the stream going on.
#include <catch2/catch.hpp>

#include "conn_pair.h"
#include "framing/zstd.h"

#if defined(WEFT_HAVE_ZSTD)
#include <zstd.h>

using namespace weft;
using namespace weft::test;

namespace {

ConnectionOptions zclient(Framing f = Framing::Len32Be, CodecKind c = CodecKind::Json) {
  ConnectionOptions o = plain(f, c);
  o.compression = {"zstd"};
  return o;
}
ConnectionOptions zserver(Framing f = Framing::Len32Be, CodecKind c = CodecKind::Json) {
  ConnectionOptions o = serving(f, c, {"streams"});
  o.compression = {"zstd"};
  return o;
}

void echo(Peer& p) {
  p.method("echo", SyncHandler([](const json& v) -> Result<json> { return v; }));
}

// The payloads of the len32be frames in `wire`.
std::vector<std::string> payloads(std::string_view wire) {
  std::vector<std::string> out;
  while (wire.size() >= 4) {
    const auto* u = reinterpret_cast<const unsigned char*>(wire.data());
    const std::size_t n = (std::size_t{u[0]} << 24) | (std::size_t{u[1]} << 16) | (std::size_t{u[2]} << 8) | u[3];
    out.emplace_back(wire.substr(4, n));
    wire.remove_prefix(4 + n);
  }
  return out;
}

std::string len32be(std::string_view payload) {
  std::string f;
  encode_frame(Framing::Len32Be, payload, f);
  return f;
}

// A zstd frame of `content`; `declare` false leaves out its content size, as
// a streaming compressor does.
std::string zstd_frame(std::string_view content, bool declare = true) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, declare ? 1 : 0);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);  // as ours: damage is detected
  std::string out(ZSTD_compressBound(content.size()), '\0');
  ZSTD_outBuffer dst{out.data(), out.size(), 0};
  ZSTD_inBuffer src{content.data(), content.size(), 0};
  // Streaming without a pledged size: the header then cannot declare it.
  while (ZSTD_compressStream2(c, &dst, &src, ZSTD_e_end) != 0) {
  }
  ZSTD_freeCCtx(c);
  out.resize(dst.pos);
  return out;
}

// The request payload `echo([s])` with id `id`, sized `n` bytes.
json filler_for(std::size_t n, std::int64_t id) {
  const std::size_t base = to_json_text(Request{Id::integer(id), "echo", json::array({""})}).size();
  return json::array({std::string(n - base, 'a')});
}

// `n` bytes zstd cannot squeeze: the high bytes of a linear congruential
// sequence from `seed`.
std::string noise(std::size_t n, std::uint32_t seed) {
  std::string out(n, '\0');
  for (auto& b : out) {
    seed = seed * 1103515245u + 12345u;
    b = static_cast<char>(seed >> 24);
  }
  return out;
}
}  // namespace

TEST_CASE("compression: agreed when both sides offer zstd, on the length-prefixed framings only", "[compression]") {
  for (Framing f : {Framing::Len32Be, Framing::Len32Le}) {
    ConnPair p(zclient(f), zserver(f));
    auto agreed = p.handshake({"streams"});
    REQUIRE(agreed.ok());
    CHECK(agreed->capabilities == std::vector<std::string>{"streams", "compression"});
    CHECK(agreed->compression_used == "zstd");
    CHECK(p.client.conn->compressing());
    CHECK(p.server.conn->compressing());
  }
  for (Framing f : {Framing::Lsp, Framing::Ndjson}) {
    ConnPair p(zclient(f), zserver(f));
    auto agreed = p.handshake({"streams", "compression"});
    REQUIRE(agreed.ok());
    CHECK(agreed->capabilities == std::vector<std::string>{"streams"});
    CHECK(agreed->compression_used.empty());
    CHECK_FALSE(p.client.conn->compressing());
  }
}

TEST_CASE("compression: payloads over 1 KiB go out compressed, those of 1 KiB or less as they are",
          "[compression]") {
  ConnPair p(zclient(), zserver());
  echo(p.server.peer());
  REQUIRE(p.handshake({}).ok());
  // The next call is id 2 (the handshake was 1).
  REQUIRE(p.client.peer().call("echo", filler_for(kCompressOver, 2), [](Result<json>) {}, {}, 0).ok());
  REQUIRE(p.client.peer().call("echo", filler_for(kCompressOver + 1, 3), [](Result<json>) {}, {}, 0).ok());
  auto sent = payloads(p.client.wire);
  REQUIRE(sent.size() == 2);
  CHECK(sent[0].size() == kCompressOver);
  CHECK_FALSE(detail::is_zstd_frame(sent[0]));
  CHECK(detail::is_zstd_frame(sent[1]));
  CHECK(sent[1].size() < kCompressOver);
}

TEST_CASE("compression: large calls round-trip compressed in both directions, with either codec",
          "[compression]") {
  for (CodecKind c : {CodecKind::Json, CodecKind::MessagePack}) {
    ConnPair p(zclient(Framing::Len32Le, c), zserver(Framing::Len32Le, c));
    echo(p.server.peer());
    REQUIRE(p.handshake({}).ok());
    std::string big;
    for (int i = 0; i < 20000; ++i) big += "line " + std::to_string(i) + "\n";
    json got;
    REQUIRE(p.client.peer().call("echo", json::array({big}), [&](Result<json> r) { got = r.value(); }, {}, 0).ok());
    const std::size_t request_bytes = p.client.wire.size();
    p.server.conn->feed(p.client.take(), 0);
    const std::size_t answer_bytes = p.server.wire.size();
    p.pump();
    CHECK(got == json::array({big}));
    CHECK(request_bytes < big.size() / 3);
    CHECK(answer_bytes < big.size() / 3);
    CHECK(p.server.diags.empty());
    CHECK(p.client.diags.empty());
  }
}

TEST_CASE("compression: a peer that did not agree never gets compressed frames", "[compression]") {
  const json big = json::array({std::string(5000, 'x')});
  SECTION("the caller did not offer it") {
    ConnPair p(plain(Framing::Len32Be, CodecKind::Json), zserver());
    echo(p.server.peer());
    auto agreed = p.handshake({"streams", "compression"});  // the capability without an algorithm
    REQUIRE(agreed.ok());
    CHECK(agreed->compression_used.empty());
    REQUIRE(p.client.peer().call("echo", big, [](Result<json>) {}, {}, 0).ok());
    p.server.conn->feed(p.client.take(), 0);
    for (const auto& f : payloads(p.server.wire)) CHECK_FALSE(detail::is_zstd_frame(f));
  }
  SECTION("no handshake at all") {
    ConnPair p(zclient(), zserver());
    echo(p.server.peer());
    REQUIRE(p.client.peer().call("echo", big, [](Result<json>) {}, {}, 0).ok());
    for (const auto& f : payloads(p.client.wire)) CHECK_FALSE(detail::is_zstd_frame(f));
    p.server.conn->feed(p.client.take(), 0);
    for (const auto& f : payloads(p.server.wire)) CHECK_FALSE(detail::is_zstd_frame(f));
  }
  SECTION("the serving side did not enable it: compressed frames are just bad JSON to it") {
    ConnPair p(zclient(), serving(Framing::Len32Be, CodecKind::Json, {"streams"}));
    auto agreed = p.handshake({});
    REQUIRE(agreed.ok());
    CHECK_FALSE(p.client.conn->compressing());
    p.server.conn->feed(len32be(zstd_frame(R"({"jsonrpc":"2.0","method":"x","id":9})")), 0);
    const auto answers = payloads(p.server.take());
    REQUIRE(answers.size() == 1);
    CHECK(answers[0].find(R"("code":-32700)") != std::string::npos);
  }
}

TEST_CASE("compression: a compressed request is decompressed and answered", "[compression]") {
  ConnEnd server(zserver());
  echo(server.peer());
  for (bool declare : {true, false}) {
    server.conn->feed(len32be(zstd_frame(R"({"jsonrpc":"2.0","method":"echo","params":[7],"id":1})", declare)), 0);
    CHECK(payloads(server.take()) == std::vector<std::string>{R"({"jsonrpc":"2.0","result":[7],"id":1})"});
  }
}

TEST_CASE("compression: a frame that would decompress past max_frame is refused with -32600", "[compression]") {
  ConnectionOptions o = zserver();
  o.framing_limits.max_frame = 100000;
  ConnEnd server(std::move(o));
  echo(server.peer());
  const std::string bomb(100001, ' ');  // whitespace: valid JSON padding once decompressed
  for (bool declare : {true, false}) {
    DYNAMIC_SECTION("content size " << (declare ? "declared" : "not declared")) {
      const std::string z = zstd_frame(bomb, declare);
      REQUIRE(z.size() < 100);
      server.conn->feed(len32be(z), 0);
      const auto answers = payloads(server.take());
      REQUIRE(answers.size() == 1);
      CHECK(answers[0] ==
            R"x({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: decompressed frame exceeds 100000 bytes (max_frame)"},"id":null})x");
      // The stream goes on (docs/framing.md F5).
      server.conn->feed(len32be(R"({"jsonrpc":"2.0","method":"echo","params":[1],"id":2})"), 0);
      CHECK(payloads(server.take()) == std::vector<std::string>{R"({"jsonrpc":"2.0","result":[1],"id":2})"});
    }
  }
  SECTION("exactly max_frame bytes are accepted") {
    std::string fits = R"({"jsonrpc":"2.0","method":"echo","params":[1],"id":3})";
    fits.append(100000 - fits.size(), ' ');
    server.conn->feed(len32be(zstd_frame(fits, false)), 0);
    CHECK(payloads(server.take()) == std::vector<std::string>{R"({"jsonrpc":"2.0","result":[1],"id":3})"});
  }
}

TEST_CASE("compression: a frame asking for a window over max(max_frame, 8 MiB) is refused with -32600",
          "[compression]") {
  ConnEnd server(zserver());  // max_frame 10 MB: the cap is 16 MiB
  echo(server.peer());
  // A streaming compressor with a 128 MiB window (zstd --long=27) that does
  // not know the content size up front writes that window in the header.
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 27);
  const std::string content = R"({"jsonrpc":"2.0","method":"echo","params":[1],"id":1})";
  std::string z(1024, '\0');
  ZSTD_outBuffer dst{z.data(), z.size(), 0};
  ZSTD_inBuffer src{content.data(), content.size(), 0};
  ZSTD_compressStream2(c, &dst, &src, ZSTD_e_continue);
  ZSTD_inBuffer none{nullptr, 0, 0};
  while (ZSTD_compressStream2(c, &dst, &none, ZSTD_e_end) != 0) {
  }
  ZSTD_freeCCtx(c);
  z.resize(dst.pos);
  server.conn->feed(len32be(z), 0);
  CHECK(payloads(server.take()) ==
        std::vector<std::string>{
            R"x({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: compressed frame needs a window over 16777216 bytes (the larger of max_frame and 8 MiB)"},"id":null})x"});
}

TEST_CASE("compression: a corrupt compressed frame is refused with -32700 saying what was wrong", "[compression]") {
  ConnEnd server(zserver());
  echo(server.peer());
  const std::string good = zstd_frame(std::string(3000, ' ') + R"({"jsonrpc":"2.0","method":"echo","id":1})");
  struct Case {
    const char* name;
    std::string frame;
    const char* says;
  };
  std::string flipped = good;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x5A);
  const Case cases[] = {
      {"only the magic number", good.substr(0, 4), "Parse error: compressed frame: "},
      {"truncated", good.substr(0, good.size() - 3), "Parse error: compressed frame: "},
      {"bytes after the frame", good + "{}", "Parse error: compressed frame: bytes after the end of the zstd frame"},
      {"a corrupted block", flipped, "Parse error: compressed frame: "},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      server.conn->feed(len32be(c.frame), 0);
      const auto answers = payloads(server.take());
      REQUIRE(answers.size() == 1);
      const json a = json::parse(answers[0]);
      CHECK(a["id"].is_null());
      CHECK(a["error"]["code"] == code::kParseError);
      INFO(a["error"]["message"].get<std::string>());
      CHECK(a["error"]["message"].get<std::string>().rfind(c.says, 0) == 0);
      REQUIRE(!server.diags.empty());
      CHECK(server.diags.back().kind == Diagnostic::Kind::BadFrame);
      server.conn->feed(len32be(R"({"jsonrpc":"2.0","method":"echo","params":[1],"id":2})"), 0);
      CHECK(payloads(server.take()) == std::vector<std::string>{R"({"jsonrpc":"2.0","result":[1],"id":2})"});
    }
  }
}

TEST_CASE("compression: a payload that does not shrink goes out as it is", "[compression]") {
  // Noise in a MessagePack bin: nothing for zstd to squeeze.
  ConnPair p(zclient(Framing::Len32Be, CodecKind::MessagePack), zserver(Framing::Len32Be, CodecKind::MessagePack));
  echo(p.server.peer());
  REQUIRE(p.handshake({}).ok());
  const std::string bytes = noise(3000, 12345);
  const std::vector<std::uint8_t> bin(bytes.begin(), bytes.end());
  REQUIRE(p.client.peer().call("echo", json::array({json::binary(bin)}), [](Result<json>) {}, {}, 0).ok());
  const auto sent = payloads(p.client.wire);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].size() > kCompressOver);
  CHECK_FALSE(detail::is_zstd_frame(sent[0]));
}

// Compressor: the same rules for the hosts' message transports (WebSocket
// frames, HTTP bodies), which have no Connection around them.

TEST_CASE("Compressor Z2: a payload over 1 KiB that shrinks is compressed, one of 1 KiB or less is not", "[compression]") {
  Compressor c({"zstd"});
  REQUIRE(c.enabled());
  std::string out = "head";
  CHECK_FALSE(c.compress(std::string(kCompressOver, 'a'), out));
  CHECK(out == "head");
  REQUIRE(c.compress(std::string(kCompressOver + 1, 'a'), out));
  CHECK(out.substr(0, 4) == "head");
  CHECK(Compressor::is_compressed(std::string_view(out).substr(4)));
  std::string back;
  REQUIRE(c.decompress(std::string_view(out).substr(4), 1 << 20, back).ok());
  CHECK(back == std::string(kCompressOver + 1, 'a'));
}

TEST_CASE("Compressor Z2: a payload that does not shrink is left as it is", "[compression]") {
  Compressor c({"zstd"});
  std::string out;
  CHECK_FALSE(c.compress(noise(3000, 777), out));
  CHECK(out.empty());
}

TEST_CASE("Compressor: offers only what this build has, and is agreed only on zstd", "[compression]") {
  Compressor none({"brotli", "none"});
  CHECK_FALSE(none.enabled());
  Handshake h;
  h.capabilities = {"streams", "compression"};
  Handshake o = none.offer(h);
  CHECK(o.capabilities == std::vector<std::string>{"streams"});
  CHECK(o.compression_preference.empty());
  std::string out;
  CHECK_FALSE(none.compress(std::string(5000, 'a'), out));

  Compressor z({"zstd", "brotli", "zstd"});
  CHECK(z.algorithms() == std::vector<std::string>{"zstd"});
  Handshake zo = z.offer(Handshake{});
  CHECK(zo.capabilities == std::vector<std::string>{"compression"});
  CHECK(zo.compression_preference == std::vector<std::string>{"zstd"});
  Handshake agreed;
  CHECK_FALSE(z.agreed(std::nullopt));
  CHECK_FALSE(z.agreed(agreed));
  agreed.compression_used = "zstd";
  CHECK(z.agreed(agreed));
  CHECK_FALSE(none.agreed(agreed));
}

TEST_CASE("Compressor Z4, Z5: a bomb is refused -32600 naming the bound, a corrupt frame -32700", "[compression]") {
  Compressor c({"zstd"});
  std::string out;
  auto r = c.decompress(zstd_frame(std::string(1 << 20, ' '), false), 100000, out);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code::kInvalidRequest);
  CHECK(r.error().message == "Invalid Request: decompressed frame exceeds 100000 bytes (max_frame)");
  const std::string good = zstd_frame(R"({"jsonrpc":"2.0","method":"x"})");
  r = c.decompress(good.substr(0, good.size() - 2), 100000, out);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code::kParseError);
  CHECK(r.error().message.rfind("Parse error: compressed frame: ", 0) == 0);
}

#endif  // WEFT_HAVE_ZSTD
