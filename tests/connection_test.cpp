// A Peer over bytes: framing + codec + endpoint, both directions, every
// framing with every codec, and the wire answers to bad frames (docs/framing.md
// F6, JSON-RPC 2.0 §5).
#include <catch2/catch.hpp>

#include "demo.h"
#include "weft/weft.h"

using namespace weft;

namespace {

struct End {
  std::string wire;  // bytes this end wrote
  std::vector<Diagnostic> diags;
  std::unique_ptr<Connection> conn;
  End(Framing f, CodecKind c, FramingLimits fl = {}, CodecLimits cl = {}) {
    ConnectionOptions o;
    o.framing = f;
    o.codec = c;
    o.framing_limits = fl;
    o.codec_limits = cl;
    o.write = [this](std::string_view b) { wire.append(b); };
    o.diagnostic = [this](const Diagnostic& d) { diags.push_back(d); };
    conn = std::make_unique<Connection>(std::move(o));
  }
  std::string take() { return std::exchange(wire, {}); }
};

const Framing kFramings[] = {Framing::Lsp, Framing::Ndjson, Framing::Len32Be, Framing::Len32Le};
const CodecKind kCodecs[] = {CodecKind::Json, CodecKind::MessagePack};

}  // namespace

TEST_CASE("every framing and codec round-trips calls, at every split point of the stream", "[connection]") {
  for (Framing f : kFramings) {
    for (CodecKind c : kCodecs) {
      DYNAMIC_SECTION(framing_name(f) << " + " << codec_name(c)) {
        End client(f, c);
        std::vector<std::string> results;
        auto keep = [&](Result<json> r) { results.push_back(r.ok() ? r.value().dump() : r.error().message); };
        REQUIRE(client.conn->peer().call("subtract", json::array({42, 23}), keep, {}, 0).ok());
        REQUIRE(client.conn->peer().call("echo", json{{"s", "h\xC3\xA9llo"}, {"n", nullptr}}, keep, {}, 0).ok());
        REQUIRE(client.conn->peer().notify("update", json::array({1})).ok());
        REQUIRE(client.conn->peer().call("nope", std::nullopt, keep, {}, 0).ok());
        const std::string requests = client.take();

        // The server's answer must not depend on where the reads split.
        std::string reference;
        for (std::size_t cut = 0; cut <= requests.size(); ++cut) {
          End server(f, c);
          register_demo_methods(server.conn->peer());
          server.conn->feed(std::string_view(requests).substr(0, cut), 0);
          server.conn->feed(std::string_view(requests).substr(cut), 0);
          if (cut == 0) reference = server.wire;
          INFO("split at byte " << cut);
          REQUIRE(server.wire == reference);
        }
        // Answers fed back byte by byte settle every call.
        for (char ch : reference) client.conn->feed(std::string_view(&ch, 1), 0);
        CHECK(results == std::vector<std::string>{"19", R"({"n":null,"s":"héllo"})", "Method not found: nope"});
        CHECK(client.conn->peer().pending() == 0);
      }
    }
  }
}

TEST_CASE("binary params travel as MessagePack bin and come back as binary", "[connection][msgpack]") {
  End client(Framing::Len32Le, CodecKind::MessagePack);
  End server(Framing::Len32Le, CodecKind::MessagePack);
  register_demo_methods(server.conn->peer());
  json got;
  const json blob = json::binary({0, 1, 2, 255, 0});
  REQUIRE(client.conn->peer().call("echo", json::array({blob}), [&](Result<json> r) { got = r.value(); }, {}, 0).ok());
  server.conn->feed(client.take(), 0);
  client.conn->feed(server.take(), 0);
  REQUIRE(got.is_array());
  CHECK(got[0].is_binary());
  CHECK(got[0] == blob);
}

TEST_CASE("an undecodable frame is answered -32700 with id null and the stream goes on", "[connection]") {
  End server(Framing::Ndjson, CodecKind::Json);
  register_demo_methods(server.conn->peer());
  server.conn->feed("{not json\n{\"jsonrpc\":\"2.0\",\"method\":\"get_data\",\"id\":1}\n", 0);
  const std::string out = server.take();
  CHECK(out.find(R"({"jsonrpc":"2.0","error":{"code":-32700,)") == 0);
  CHECK(out.find(R"("id":null})") != std::string::npos);
  CHECK(out.find(R"({"jsonrpc":"2.0","result":["hello",5],"id":1})") != std::string::npos);
  REQUIRE_FALSE(server.diags.empty());
  CHECK(server.diags[0].kind == Diagnostic::Kind::BadFrame);
}

TEST_CASE("nesting deeper than the limit is answered -32600 with id null", "[connection][limits]") {
  CodecLimits cl;
  cl.max_depth = 8;
  End server(Framing::Ndjson, CodecKind::Json, {}, cl);
  register_demo_methods(server.conn->peer());
  std::string deep = R"({"jsonrpc":"2.0","method":"echo","id":1,"params":)" + std::string(20, '[') +
                     std::string(20, ']') + "}\n";
  server.conn->feed(deep, 0);
  CHECK(server.take().find(R"({"jsonrpc":"2.0","error":{"code":-32600,)") == 0);
}

TEST_CASE("max_depth reaches both codecs through ConnectionOptions, and the answer names it",
          "[connection][limits]") {
  for (CodecKind c : kCodecs) {
    for (std::size_t limit : {std::size_t{256}, std::size_t{40}}) {
      DYNAMIC_SECTION(codec_name(c) << " max_depth " << limit) {
        CodecLimits cl;
        if (limit != 256) cl.max_depth = limit;  // 256 is the default
        End client(Framing::Len32Be, c);
        End server(Framing::Len32Be, c, {}, cl);
        register_demo_methods(server.conn->peer());
        // The request object is level 1, so params nested limit - 1 deep fill the limit.
        json fits = 1;
        for (std::size_t i = 0; i + 1 < limit; ++i) fits = json::array({fits});
        const json deeper = json::array({fits});
        std::vector<json> got;
        REQUIRE(client.conn->peer().call("echo", fits, [&](Result<json> r) { got.push_back(r.value()); }, {}, 0).ok());
        server.conn->feed(client.take(), 0);
        REQUIRE(client.conn->peer().call("echo", deeper, [](Result<json>) {}, {}, 0).ok());
        const std::string too_deep = client.take();
        client.conn->feed(server.take(), 0);
        REQUIRE(got.size() == 1);
        CHECK(got[0] == fits);

        // One level more: -32600, id null (§5: the id could not be read).
        server.conn->feed(too_deep, 0);
        const std::string frame = server.take();
        REQUIRE(frame.size() > 4);
        auto answer = make_codec(c)->decode(std::string_view(frame).substr(4));  // after the length prefix
        REQUIRE(answer.ok());
        CHECK(answer.value().value ==
              json{{"jsonrpc", "2.0"},
                   {"error",
                    {{"code", -32600},
                     {"message", "Invalid Request: nesting deeper than " + std::to_string(limit) +
                                     " levels (max_depth)"}}},
                   {"id", nullptr}});
      }
    }
  }
}

TEST_CASE("LSP: a body over the size limit is answered -32600 id null and skipped", "[connection][lsp]") {
  FramingLimits fl;
  fl.max_frame = 64;
  End server(Framing::Lsp, CodecKind::Json, fl);
  register_demo_methods(server.conn->peer());
  const std::string big(100, 'x');
  const std::string ok = R"({"jsonrpc":"2.0","method":"get_data","id":2})";
  server.conn->feed("Content-Length: 100\r\n\r\n" + big + "Content-Length: " + std::to_string(ok.size()) +
                        "\r\n\r\n" + ok,
                    0);
  const std::string out = server.take();
  CHECK(out.find(R"("error":{"code":-32600,)") != std::string::npos);
  CHECK(out.find(R"("id":null})") != std::string::npos);
  CHECK(out.find(R"({"jsonrpc":"2.0","result":["hello",5],"id":2})") != std::string::npos);
}

TEST_CASE("LSP: a wrong Content-Type is answered -32600", "[connection][lsp]") {
  End server(Framing::Lsp, CodecKind::Json);
  register_demo_methods(server.conn->peer());
  const std::string body = R"({"jsonrpc":"2.0","method":"get_data","id":1})";
  server.conn->feed("Content-Length: " + std::to_string(body.size()) +
                        "\r\nContent-Type: application/vscode-jsonrpc; charset=latin1\r\n\r\n" + body,
                    0);
  const std::string out = server.take();
  CHECK(out.find(R"("error":{"code":-32600,)") != std::string::npos);
  CHECK(out.find("hello") == std::string::npos);
}

TEST_CASE("LSP: EOF inside a body is a length mismatch, answered -32700", "[connection][lsp]") {
  End server(Framing::Lsp, CodecKind::Json);
  server.conn->feed("Content-Length: 50\r\n\r\n{\"jsonrpc\"", 0);
  CHECK(server.wire.empty());
  server.conn->finish(0);
  CHECK(server.take().find(R"("error":{"code":-32700,)") != std::string::npos);
}

TEST_CASE("a partial frame times out after the read timeout and the stream goes on", "[connection][time]") {
  FramingLimits fl;
  fl.read_timeout = 30000;
  End server(Framing::Lsp, CodecKind::Json, fl);
  register_demo_methods(server.conn->peer());
  server.conn->feed("Content-Length: 10\r\n\r\n{\"js", 1000);
  REQUIRE(server.conn->next_deadline() == 31000);
  server.conn->advance(30999);
  CHECK(server.diags.empty());
  server.conn->advance(31000);
  REQUIRE(server.diags.size() == 1);
  CHECK(server.diags[0].kind == Diagnostic::Kind::BadFrame);
  CHECK(server.wire.empty());  // docs/framing.md F3: discard and log; nothing is answered
  const std::string ok = R"({"jsonrpc":"2.0","method":"get_data","id":3})";
  server.conn->feed("Content-Length: " + std::to_string(ok.size()) + "\r\n\r\n" + ok, 40000);
  CHECK(server.take() == "Content-Length: 45\r\n\r\n" + std::string(R"({"jsonrpc":"2.0","result":["hello",5],"id":3})"));
}

TEST_CASE("bytes fed after the read deadline do not complete the timed-out frame", "[connection][time]") {
  // docs/framing.md F3, when the host reads before its timer fires.
  FramingLimits fl;
  fl.read_timeout = 30000;
  End server(Framing::Lsp, CodecKind::Json, fl);
  register_demo_methods(server.conn->peer());
  const std::string msg = R"({"jsonrpc":"2.0","method":"get_data","id":3})";
  const std::string frame = "Content-Length: " + std::to_string(msg.size()) + "\r\n\r\n" + msg;
  server.conn->feed(frame.substr(0, 30), 1000);
  server.conn->feed(frame.substr(30), 31000);  // no advance() in between
  REQUIRE(!server.diags.empty());
  CHECK(server.diags[0].message.rfind("read timeout", 0) == 0);
  CHECK(server.take().find(R"("result")") == std::string::npos);
}

TEST_CASE("the connection deadline is the earlier of call timeouts and frame timeouts", "[connection][time]") {
  End client(Framing::Len32Be, CodecKind::Json);
  CHECK_FALSE(client.conn->next_deadline());
  REQUIRE(client.conn->peer().call("x", std::nullopt, {}, CallOptions{500}, 0).ok());
  CHECK(client.conn->next_deadline() == 500);
  client.conn->feed(std::string("\0\0\0\x10{", 5), 100);  // partial frame: 100 + 30000
  CHECK(client.conn->next_deadline() == 500);
  client.conn->advance(500);
  CHECK(client.conn->next_deadline() == 30100);
}

TEST_CASE("undecodable frames in a row are answered only up to the bound", "[connection][limits]") {
  // Two endpoints with mismatched codecs would otherwise answer each other's
  // parse-error answers forever.
  End server(Framing::Ndjson, CodecKind::Json);
  register_demo_methods(server.conn->peer());
  std::string junk;
  for (int i = 0; i < 20; ++i) junk += "\x01garbage\n";
  server.conn->feed(junk, 0);
  const std::string out = server.take();
  std::size_t answers = 0;
  for (std::size_t p = out.find("-32700"); p != std::string::npos; p = out.find("-32700", p + 1)) ++answers;
  CHECK(answers == 16);
  // A good frame resets the run: the next bad one is answered again.
  server.conn->feed("{\"jsonrpc\":\"2.0\",\"method\":\"get_data\",\"id\":1}\nnope\n", 0);
  const std::string after = server.take();
  CHECK(after.find(R"("result":["hello",5])") != std::string::npos);
  CHECK(after.find("-32700") != std::string::npos);
}

TEST_CASE("two endpoints with mismatched codecs stop trading errors", "[connection][limits]") {
  End a(Framing::Len32Be, CodecKind::Json);
  End b(Framing::Len32Be, CodecKind::MessagePack);
  REQUIRE(a.conn->peer().call("echo", json::array({1}), {}, {}, 0).ok());
  int rounds = 0;
  while ((!a.wire.empty() || !b.wire.empty()) && rounds < 1000) {
    b.conn->feed(a.take(), 0);
    a.conn->feed(b.take(), 0);
    ++rounds;
  }
  CHECK(rounds < 40);
}

// The parser builds params objects from maps and member nodes kept between
// messages (core/src/json/pool.h); a call must see exactly its own members.
TEST_CASE("by-name params of one call carry nothing into the next", "[connection][params]") {
  End server(Framing::Ndjson, CodecKind::Json);
  std::vector<json> seen;
  server.conn->peer().method("f", SyncHandler([&](const json& p) -> Result<json> {
    seen.push_back(p);
    return json(nullptr);
  }));
  server.conn->feed(R"({"jsonrpc":"2.0","method":"f","params":{"a":1,"b":{"c":[1,2]}},"id":1})"
                    "\n"
                    R"({"jsonrpc":"2.0","method":"f","params":{"z":2,"z":3},"id":2})"
                    "\n"
                    R"({"jsonrpc":"2.0","method":"f","params":{},"id":3})"
                    "\n"
                    R"({"jsonrpc":"2.0","method":"f","params":{"b":true,"a":"x"},"id":4})"
                    "\n",
                    0);
  REQUIRE(seen.size() == 4);
  CHECK(seen[0] == json{{"a", 1}, {"b", {{"c", {1, 2}}}}});
  CHECK(seen[1] == json{{"z", 3}});  // a repeated name: last wins
  CHECK(seen[2] == json::object());
  CHECK(seen[3] == json{{"a", "x"}, {"b", true}});
}

// RFC 8259 §6 has no NaN or Infinity; JSON-RPC 2.0 §5.1: -32603 Internal error.
TEST_CASE("a result with a NaN or an infinity is answered -32603, with either codec; the rest of its batch as it was",
          "[connection]") {
  for (CodecKind c : kCodecs) {
    End server(Framing::Len32Be, c);
    server.conn->peer().method("big", SyncHandler([](const json&) -> Result<json> {
                                  return json::array({std::numeric_limits<double>::infinity()});
                                }));
    server.conn->peer().method("ok", SyncHandler([](const json&) -> Result<json> { return json(1.0); }));
    End client(Framing::Len32Be, c);
    std::vector<std::string> got;
    auto note = [&](Result<json> r) { got.push_back(r ? r->dump() : std::to_string(r.error().code) + " " + r.error().message); };
    std::vector<BatchEntry> b;
    b.push_back({"big", std::nullopt, note});
    b.push_back({"ok", std::nullopt, note});
    REQUIRE(client.conn->peer().batch(std::move(b), {}, 0).ok());
    REQUIRE(client.conn->peer().call("big", std::nullopt, note, {}, 0).ok());
    server.conn->feed(client.take(), 0);
    client.conn->feed(server.take(), 0);
    CHECK(got == std::vector<std::string>{
                     "-32603 Internal error: the result could not be sent: NaN or Infinity has no JSON representation",
                     "1.0",
                     "-32603 Internal error: the result could not be sent: NaN or Infinity has no JSON representation"});
    CHECK(client.diags.empty());
  }
}

TEST_CASE("an answer over max_send: in a batch only the largest results are answered -32603, the rest as they were",
          "[connection][limits]") {
  for (CodecKind c : kCodecs) {
    INFO(codec_name(c));
    std::string wire;
    ConnectionOptions o;
    o.framing = Framing::Ndjson;
    o.codec = c;
    o.max_send = 300;
    o.max_send_name = "max_response";
    o.write = [&](std::string_view b) { wire.append(b); };
    o.diagnostic = [](const Diagnostic&) {};
    Connection server(std::move(o));
    server.peer().method("big", SyncHandler([](const json&) -> Result<json> { return json(std::string(400, 'x')); }));
    server.peer().method("small", SyncHandler([](const json&) -> Result<json> { return json(3); }));
    End client(Framing::Ndjson, c);
    std::vector<std::string> got;
    auto note = [&](Result<json> r) { got.push_back(r ? r->dump() : std::to_string(r.error().code) + " " + r.error().message); };
    std::vector<BatchEntry> b;
    b.push_back({"big", std::nullopt, note});
    b.push_back({"small", std::nullopt, note});
    b.push_back({"small", std::nullopt, note});
    REQUIRE(client.conn->peer().batch(std::move(b), {}, 0).ok());
    server.feed(client.take(), 0);
    client.conn->feed(std::exchange(wire, {}), 0);
    REQUIRE(got.size() == 3);
    CHECK_THAT(got[0], Catch::StartsWith("-32603 Internal error: the result could not be sent: the message is "));
    CHECK_THAT(got[0], Catch::EndsWith("over max_response (300)"));
    CHECK(got[1] == "3");
    CHECK(got[2] == "3");
  }
}

TEST_CASE("a batch's answers over max_send go as several arrays that each fit, every call answered whole",
          "[connection][limits]") {
  for (CodecKind c : kCodecs) {
    INFO(codec_name(c));
    std::vector<std::string> frames;
    ConnectionOptions o;
    o.framing = Framing::Len32Be;
    o.codec = c;
    o.max_send = 1000;
    o.max_send_name = "max_response";
    o.write = [&](std::string_view b) { frames.emplace_back(b); };
    o.diagnostic = [](const Diagnostic&) {};
    Connection server(std::move(o));
    // Each answer is ~90 bytes: replaced by a -32603 naming the limit, it
    // would be longer, and 200 of them fit in no single array.
    server.peer().method("echo", SyncHandler([](const json& p) -> Result<json> { return p; }));
    End client(Framing::Len32Be, c);
    std::vector<std::string> got(200);
    std::vector<BatchEntry> b;
    for (int i = 0; i < 200; ++i)
      b.push_back({"echo", json::array({std::string(40, 'a' + i % 26)}),
                   [&got, i](Result<json> r) { got[i] = r ? r->dump() : r.error().message; }});
    REQUIRE(client.conn->peer().batch(std::move(b), {}, 0).ok());
    server.feed(client.take(), 0);
    REQUIRE(frames.size() > 1);
    std::string wire;
    for (const std::string& f : frames) {
      CHECK(f.size() <= 1000 + 4);  // and its length prefix
      wire += f;
    }
    client.conn->feed(wire, 0);
    for (int i = 0; i < 200; ++i) CHECK(got[i] == json::array({std::string(40, 'a' + i % 26)}).dump());
  }
}

TEST_CASE("an error answer over max_send goes once more with a short message; the call is answered", "[connection][limits]") {
  std::string wire;
  ConnectionOptions o;
  o.framing = Framing::Ndjson;
  o.max_send = 120;
  o.max_send_name = "max_response";
  o.write = [&](std::string_view b) { wire.append(b); };
  o.diagnostic = [](const Diagnostic&) {};
  Connection server(std::move(o));
  server.peer().method("big", SyncHandler([](const json&) -> Result<json> { return json(std::string(200, 'x')); }));
  End client(Framing::Ndjson, CodecKind::Json);
  std::vector<std::string> got;
  auto note = [&](Result<json> r) { got.push_back(r ? r->dump() : std::to_string(r.error().code) + " " + r.error().message); };
  REQUIRE(client.conn->peer().call("big", std::nullopt, note, {}, 0).ok());
  server.feed(client.take(), 0);
  client.conn->feed(std::exchange(wire, {}), 0);
  CHECK(got == std::vector<std::string>{"-32603 the answer could not be sent"});
}

TEST_CASE("a NaN in a call's params fails the call with -32002; in a notification it is reported; nothing is written",
          "[connection]") {
  End client(Framing::Len32Be, CodecKind::Json);
  std::optional<Error> failed;
  const json nan = json::array({std::numeric_limits<double>::quiet_NaN()});
  REQUIRE(client.conn->peer().call("m", nan, [&](Result<json> r) { failed = r.error(); }, {}, 0).ok());
  REQUIRE(failed);
  CHECK(failed->code == code::kClosed);
  CHECK(failed->message == "Transport send failed: NaN or Infinity has no JSON representation");
  CHECK(client.conn->peer().notify("n", nan).ok());
  CHECK(client.take().empty());
  REQUIRE(client.diags.size() == 2);
  CHECK(client.diags[1].kind == Diagnostic::Kind::SendFailed);
}
