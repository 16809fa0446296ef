// The fuzz targets write their own messages without nlohmann::json
// (tests/fuzz/message_writer.h); its contract is to give exactly the bytes
// of json::dump() / json::to_msgpack() for the same members in key order, so
// that the committed seed corpora mean what they meant when made.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "fuzz/message_writer.h"
#include "weft/weft.h"

using weft::CodecKind;
using weft::json;

namespace {

std::string reference(CodecKind k, const json& j) {
  if (k == CodecKind::Json) return j.dump();
  const auto v = json::to_msgpack(j);
  return std::string(v.begin(), v.end());
}

}  // namespace

TEST_CASE("fuzz writer: a request is written as dump() and to_msgpack() write it") {
  const auto k = GENERATE(CodecKind::Json, CodecKind::MessagePack);
  // Every width of MessagePack integer, both signs.
  const std::int64_t id = GENERATE(0, 1, 127, 128, 255, 256, 65535, 65536, 1000000000LL, 5000000000LL, -1, -32,
                                   -33, -128, -129, -40000, -3000000000LL);
  fuzz::Writer w(k);
  w.map(4).key("id").num(id).key("jsonrpc").str("2.0").key("method").str("subtract");
  w.key("params").array(2).num(7).num(1).end().end();
  const json j = {{"jsonrpc", "2.0"}, {"id", id}, {"method", "subtract"}, {"params", json::array({7, 1})}};
  CHECK(w.take() == reference(k, j));
}

TEST_CASE("fuzz writer: nested maps, arrays, booleans and empty containers") {
  const auto k = GENERATE(CodecKind::Json, CodecKind::MessagePack);
  fuzz::Writer w(k);
  w.array(2).map(2).key("error").map(2).key("code").num(-1).key("message").str("no").end();
  w.key("x").boolean(true).end().array(0).end().end();
  const json j = json::array({{{"error", {{"code", -1}, {"message", "no"}}}, {"x", true}}, json::array()});
  CHECK(w.take() == reference(k, j));
}

TEST_CASE("fuzz writer: 16+ members and 32+ byte strings take the wider MessagePack forms") {
  const auto k = GENERATE(CodecKind::Json, CodecKind::MessagePack);
  const std::string text(40, 'a');
  fuzz::Writer w(k);
  json j = json::object();
  w.map(20);
  for (int i = 0; i < 20; ++i) {
    const std::string key = "k" + std::to_string(100 + i);
    w.key(key).str(text);
    j[key] = text;
  }
  w.end();
  CHECK(w.take() == reference(k, j));
  CHECK(w.take().empty());  // take() starts anew
}
