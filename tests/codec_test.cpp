// Tests for weft/codec.h: the JSON and MessagePack codecs, one TEST_CASE per
// rule of the contract.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "weft/codec.h"

using weft::CodecKind;
using weft::Document;
using weft::Error;
using weft::Id;
using weft::json;
using weft::Message;
using weft::Notification;
using weft::Outgoing;
using weft::Request;
using weft::Response;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}

std::string encode(CodecKind kind, const Outgoing& out) {
  std::string buf;
  REQUIRE(weft::make_codec(kind)->encode(out, buf));
  return buf;
}

std::string encode(CodecKind kind, const Message& m) { return encode(kind, Outgoing{{m}, false}); }

weft::Result<Document> decode(CodecKind kind, std::string_view b,
                              std::size_t max_depth = weft::CodecLimits{}.max_depth) {
  return weft::make_codec(kind, weft::CodecLimits{max_depth})->decode(b);
}

// Asserts a -32700 whose message names the problem and the byte offset.
void require_parse_error(CodecKind kind, std::string_view input, const std::string& what,
                         std::size_t at) {
  INFO("codec " << weft::codec_name(kind) << ", input of " << input.size() << " bytes");
  auto r = decode(kind, input);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == weft::code::kParseError);
  CHECK_THAT(r.error().message, Catch::Contains(what));
  CHECK_THAT(r.error().message, Catch::Contains("at byte " + std::to_string(at)));
}

std::string nested_arrays(std::size_t depth, bool msgpack) {
  std::string s;
  for (std::size_t i = 0; i < depth; ++i) s += msgpack ? std::string("\x91", 1) : "[";
  s += msgpack ? std::string("\x01", 1) : "1";
  if (!msgpack) s += std::string(depth, ']');
  return s;
}

std::string nested_objects(std::size_t depth, bool msgpack) {
  std::string s;
  for (std::size_t i = 0; i < depth; ++i) s += msgpack ? std::string("\x81\xa1k", 3) : R"({"k":)";
  s += msgpack ? std::string("\xc0", 1) : "null";
  if (!msgpack) s += std::string(depth, '}');
  return s;
}

std::vector<Outgoing> sample_messages() {
  const json nested = {{"a", {{"b", json::array({1, "two", nullptr, true, 2.5, json::object()})}}},
                       {"id", 7},
                       {"empty", json::array()}};
  const std::uint64_t u64max = std::numeric_limits<std::uint64_t>::max();
  const std::int64_t i64min = std::numeric_limits<std::int64_t>::min();
  std::vector<Message> singles = {
      Request{Id::integer(1), "sum", json::array({1, 2, 3})},
      Request{Id::string("r\xc3\xa9q-\xf0\x9f\x98\x80"), "\xc3\xbcnic\xc3\xb8" "de/method", nested},
      Request{Id::null(), "no_params", std::nullopt},
      Request{Id::number("1.5"), "float_id", json::object()},
      Request{Id::number("123456789012345678901234"), "big_id", std::nullopt},
      Request{Id::unsigned_integer(u64max), "u64_id", json::array({u64max, i64min, -1, 0})},
      Notification{"notify", json::array()},
      Notification{"no_params", std::nullopt},
      Notification{"strings", json::array({"", std::string("nul\0byte", 8), "tab\tquote\"back\\slash",
                                           "\xe2\x82\xac \xf0\x9f\x8e\x89 \xe4\xb8\xad"})},
      Response{Id::integer(-7), json(42)},
      Response{Id::integer(i64min), json(i64min)},
      Response{Id::unsigned_integer(u64max), json(u64max)},
      Response{Id::integer(2), json::array({0.1, -0.5, 1e300, 2.0, -1e-300, 9007199254740993ull})},
      Response{Id::string("s"), json::object()},
      Response{Id::integer(3), json(nullptr)},
      Response{Id::null(), Error(-32700, "Parse error")},
      Response{Id::integer(4), Error(-32000, "boom", json{{"detail", {1, 2}}, {"why", "\xc3\xa9"}})},
  };
  std::vector<Outgoing> out;
  for (const auto& m : singles) out.push_back(Outgoing{{m}, false});
  out.push_back(Outgoing{singles, true});
  out.push_back(Outgoing{{singles[0]}, true});  // a batch of one is still an array
  return out;
}

}  // namespace

TEST_CASE("codec names: json and msgpack map to their kinds, anything else is rejected",
          "[codec]") {
  CodecKind k = CodecKind::MessagePack;
  REQUIRE(weft::parse_codec_name("json", k));
  CHECK(k == CodecKind::Json);
  REQUIRE(weft::parse_codec_name("msgpack", k));
  CHECK(k == CodecKind::MessagePack);
  CHECK(std::string(weft::codec_name(CodecKind::Json)) == "json");
  CHECK(std::string(weft::codec_name(CodecKind::MessagePack)) == "msgpack");
  k = CodecKind::Json;
  CHECK_FALSE(weft::parse_codec_name("JSON", k));
  CHECK_FALSE(weft::parse_codec_name("", k));
  CHECK_FALSE(weft::parse_codec_name("messagepack", k));
  CHECK(k == CodecKind::Json);  // untouched on failure
}

TEST_CASE("make_codec returns a codec of the requested kind", "[codec]") {
  CHECK(weft::make_codec(CodecKind::Json)->kind() == CodecKind::Json);
  CHECK(weft::make_codec(CodecKind::MessagePack)->kind() == CodecKind::MessagePack);
}

TEST_CASE("a message encoded with either codec decodes to the same value", "[codec]") {
  for (const Outgoing& out : sample_messages()) {
    const std::string j = encode(CodecKind::Json, out);
    const std::string m = encode(CodecKind::MessagePack, out);
    INFO(j);
    auto dj = decode(CodecKind::Json, j);
    auto dm = decode(CodecKind::MessagePack, m);
    REQUIRE(dj.ok());
    REQUIRE(dm.ok());
    CHECK(dj->value == dm->value);
    CHECK(dm->id_lexemes.empty());  // MessagePack has no lexemes (codec.h)
    // And both equal the message as a json value.
    if (!out.batch) CHECK(dm->value == weft::to_json_value(out.messages[0]));
  }
}

TEST_CASE("integer types survive both codecs exactly", "[codec]") {
  const json v = json::array({std::numeric_limits<std::uint64_t>::max(),
                              std::numeric_limits<std::int64_t>::min(), -1, 0, 1,
                              9007199254740993ull});
  const Message m = Response{Id::integer(1), v};
  for (CodecKind k : {CodecKind::Json, CodecKind::MessagePack}) {
    auto d = decode(k, encode(k, m));
    REQUIRE(d.ok());
    const json& r = d->value["result"];
    CHECK(r[0].is_number_unsigned());
    CHECK(r[0].get<std::uint64_t>() == std::numeric_limits<std::uint64_t>::max());
    CHECK(r[1].is_number_integer());
    CHECK(r[1].get<std::int64_t>() == std::numeric_limits<std::int64_t>::min());
    CHECK(r[2].get<std::int64_t>() == -1);
    CHECK(r[3].is_number_unsigned());  // non-negative integers are unsigned, as JSON parses them
    CHECK(r[5].get<std::uint64_t>() == 9007199254740993ull);  // not rounded through double
  }
}

TEST_CASE("msgpack: bin is first-class binary and round-trips", "[codec][msgpack]") {
  const std::vector<std::uint8_t> raw = {0x00, 0xff, 0xc1, 0x80, 0x7f};
  const Message m = Response{Id::integer(1), json{{"blob", json::binary(raw)}}};
  const std::string enc = encode(CodecKind::MessagePack, m);
  CHECK(enc.find(std::string("\xc4\x05\x00\xff\xc1\x80\x7f", 7)) != std::string::npos);  // bin8
  auto d = decode(CodecKind::MessagePack, enc);
  REQUIRE(d.ok());
  const json& blob = d->value["result"]["blob"];
  REQUIRE(blob.is_binary());
  CHECK(static_cast<const std::vector<std::uint8_t>&>(blob.get_binary()) == raw);
  // Empty bin, and bin16.
  auto e = decode(CodecKind::MessagePack, bytes({0xc4, 0x00}));
  REQUIRE(e.ok());
  CHECK(e->value.is_binary());
  CHECK(e->value.get_binary().empty());
  std::string b16 = bytes({0xc5, 0x01, 0x00}) + std::string(256, 'x');
  auto f = decode(CodecKind::MessagePack, b16);
  REQUIRE(f.ok());
  CHECK(f->value.get_binary().size() == 256);
}

TEST_CASE("msgpack encoding uses the smallest int formats, float64 and str", "[codec][msgpack]") {
  auto packed = [](const json& v) {
    std::string s = encode(CodecKind::MessagePack, Message{Notification{"m", json::array({v})}});
    // {"jsonrpc":"2.0","method":"m","params":[v]}: v follows the 0x91 array header.
    return s.substr(s.rfind('\x91') + 1);
  };
  CHECK(packed(json(1)) == bytes({0x01}));
  CHECK(packed(json(-1)) == bytes({0xff}));
  CHECK(packed(json(-33)) == bytes({0xd0, 0xdf}));
  CHECK(packed(json(300)) == bytes({0xcd, 0x01, 0x2c}));
  CHECK(packed(json(std::numeric_limits<std::uint64_t>::max())) ==
        bytes({0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  CHECK(packed(json(1.5)) == bytes({0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0}));
  // A double stays a double: msgpack-c's own pack_double would pack these as ints.
  CHECK(packed(json(1.0)) == bytes({0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0}));
  CHECK(packed(json(-0.0)) == bytes({0xcb, 0x80, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(packed(json("hi")) == bytes({0xa2, 'h', 'i'}));
  CHECK(packed(json(nullptr)) == bytes({0xc0}));
  CHECK(packed(json(true)) == bytes({0xc3}));
}

TEST_CASE("msgpack decoding maps every type to its JSON counterpart", "[codec][msgpack]") {
  auto one = [](const std::string& b) {
    auto d = decode(CodecKind::MessagePack, b);
    REQUIRE(d.ok());
    return d->value;
  };
  CHECK(one(bytes({0xc0})).is_null());
  CHECK(one(bytes({0xc2})) == json(false));
  CHECK(one(bytes({0xd0, 0x05})).is_number_unsigned());  // int8 holding 5
  CHECK(one(bytes({0xd0, 0xfb})) == json(-5));
  CHECK(one(bytes({0xca, 0x3f, 0xc0, 0, 0})) == json(1.5));  // float32
  CHECK(one(bytes({0xa0})) == json(""));
  CHECK(one(bytes({0x82, 0xa1, 'a', 0x01, 0xa1, 'b', 0x90})) == json{{"a", 1}, {"b", json::array()}});
  CHECK(one(bytes({0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02})) == json{{"a", 2}});  // last wins, as JSON
  CHECK(one(bytes({0x80})) == json::object());
}

std::string too_deep(std::size_t max_depth) {
  return "Invalid Request: nesting deeper than " + std::to_string(max_depth) + " levels (max_depth)";
}

TEST_CASE("depth limit: a custom max_depth is honoured; one level more is -32600 naming it",
          "[codec][limits]") {
  for (CodecKind k : {CodecKind::Json, CodecKind::MessagePack}) {
    const bool mp = k == CodecKind::MessagePack;
    for (std::size_t n : {1u, 2u, 5u, 64u, 200u}) {
      INFO(weft::codec_name(k) << " max_depth " << n);
      CHECK(decode(k, nested_arrays(n, mp), n).ok());
      CHECK(decode(k, nested_objects(n, mp), n).ok());
      for (const std::string& deep : {nested_arrays(n + 1, mp), nested_objects(n + 1, mp)}) {
        auto r = decode(k, deep, n);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == weft::code::kInvalidRequest);
        CHECK(r.error().message == too_deep(n));
      }
    }
    // Scalars have depth 0.
    CHECK(decode(k, mp ? bytes({0x01}) : "1", 0).ok());
  }
}

TEST_CASE("depth limit: by default 256 levels pass both codecs, 257 are -32600 naming the limit",
          "[codec][limits]") {
  CHECK(weft::CodecLimits{}.max_depth == 256);
  for (CodecKind k : {CodecKind::Json, CodecKind::MessagePack}) {
    const bool mp = k == CodecKind::MessagePack;
    INFO(weft::codec_name(k));
    // Depth counts the top level as 1: a request whose params are nested 128
    // levels is 129 deep, and one in a batch 130: both pass.
    const std::string inner = nested_arrays(128, mp);
    const std::string request =
        mp ? std::string("\x84\xa7jsonrpc\xa3" "2.0\xa6method\xa4" "echo\xa2id\x01\xa6params") + inner
           : R"({"jsonrpc":"2.0","method":"echo","id":1,"params":)" + inner + "}";
    auto ok = decode(k, request);
    REQUIRE(ok.ok());
    CHECK(ok.value().value["params"] == json::parse(nested_arrays(128, false)));
    CHECK(decode(k, mp ? std::string("\x91") + request : "[" + request + "]").ok());
    CHECK(decode(k, nested_arrays(256, mp)).ok());
    CHECK(decode(k, nested_objects(256, mp)).ok());
    for (const std::string& deep : {nested_arrays(257, mp), nested_objects(257, mp)}) {
      auto r = decode(k, deep);
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().code == weft::code::kInvalidRequest);
      CHECK(r.error().message == "Invalid Request: nesting deeper than 256 levels (max_depth)");
    }
  }
}

TEST_CASE("depth limit stops the parse before reading the rest", "[codec]") {
  // Too deep AND malformed later: depth is reported, so parsing stopped there.
  auto j = decode(CodecKind::Json, "[[[1]]] trailing", 2);
  REQUIRE_FALSE(j.ok());
  CHECK(j.error().code == weft::code::kInvalidRequest);
  auto m = decode(CodecKind::MessagePack, bytes({0x91, 0x91, 0x91, 0xc1}), 2);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().code == weft::code::kInvalidRequest);
  // A hostile depth far beyond the limit is cheap to reject.
  CHECK(decode(CodecKind::Json, std::string(1 << 20, '[')).error().code ==
        weft::code::kInvalidRequest);
}

TEST_CASE("JSON: malformed input is -32700 naming the problem and byte offset", "[codec][json]") {
  const CodecKind J = CodecKind::Json;
  SECTION("empty input") { require_parse_error(J, "", "empty input", 0); }
  SECTION("whitespace only") { require_parse_error(J, "  \n", "unexpected end of input", 3); }
  SECTION("truncated object") { require_parse_error(J, R"({"jsonrpc":"2.0","id":)", "", 22); }
  SECTION("truncated string") { require_parse_error(J, R"({"a":"abc)", "missing closing quote", 9); }
  SECTION("trailing garbage") { require_parse_error(J, R"({"a":1} x)", "expected end of input", 8); }
  SECTION("two values") { require_parse_error(J, "1 2", "expected end of input", 2); }
  SECTION("bad literal") { require_parse_error(J, "[tru]", "invalid literal", 4); }
  SECTION("single quotes") { require_parse_error(J, "{'a':1}", "invalid literal", 1); }
  SECTION("trailing comma") { require_parse_error(J, "[1,]", "unexpected ']'", 3); }
  SECTION("comments are not JSON") { require_parse_error(J, "/*x*/1", "", 0); }
  SECTION("leading zero") { require_parse_error(J, "01", "expected end of input", 1); }
  SECTION("raw control character in string") {
    require_parse_error(J, std::string("\"a\x01\""), "control character", 2);
  }
  SECTION("invalid UTF-8 in a string") {
    require_parse_error(J, "\"ab\xff\"", "invalid string: ill-formed UTF-8 byte", 3);
    require_parse_error(J, "\"\xc0\xaf\"", "ill-formed UTF-8", 1);          // overlong
    require_parse_error(J, "\"\xed\xa0\x80\"", "ill-formed UTF-8", 2);      // surrogate
  }
  SECTION("lone surrogate escape") { require_parse_error(J, R"("\ud800")", "surrogate", 7); }
  SECTION("number out of range") { require_parse_error(J, "1e400", "number overflow", 4); }
  SECTION("the message escapes the offending bytes") {
    auto r = decode(J, "[\"\xfe\"]");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("\\xfe"));
    CHECK(r.error().message.find('\xfe') == std::string::npos);
  }
  SECTION("a huge bad token does not make a huge message") {
    auto r = decode(J, "\"" + std::string(100000, 'a') + "\x01\"");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.size() < 300);
  }
}

TEST_CASE("msgpack: malformed input is -32700 naming the problem and byte offset",
          "[codec][msgpack]") {
  const CodecKind M = CodecKind::MessagePack;
  SECTION("empty input") { require_parse_error(M, "", "empty input", 0); }
  SECTION("truncated") {
    require_parse_error(M, bytes({0xcd, 0x01}), "truncated", 2);               // uint16
    require_parse_error(M, bytes({0xa3, 'a', 'b'}), "truncated", 3);           // fixstr 3
    require_parse_error(M, bytes({0x92, 0x01}), "truncated", 2);               // array of 2
    require_parse_error(M, bytes({0x81, 0xa1, 'a'}), "truncated", 3);          // map value missing
    require_parse_error(M, bytes({0xdd, 0xff, 0xff, 0xff, 0xff}), "truncated", 5);  // 4G elements
    require_parse_error(M, bytes({0xc6, 0xff, 0xff, 0xff, 0xff}), "truncated", 5);  // 4 GB bin
  }
  SECTION("trailing bytes") {
    require_parse_error(M, bytes({0x01, 0x02}), "trailing bytes", 1);
    require_parse_error(M, bytes({0x90, 0xc0}), "trailing bytes", 1);
  }
  SECTION("invalid type byte") { require_parse_error(M, bytes({0x92, 0x01, 0xc1}), "0xc1", 2); }
  SECTION("invalid UTF-8 in str") {
    require_parse_error(M, bytes({0x91, 0xa3, 'a', 0xff, 'b'}), "invalid UTF-8", 3);
    require_parse_error(M, bytes({0xa2, 0xc0, 0xaf}), "invalid UTF-8", 1);        // overlong
    require_parse_error(M, bytes({0xa3, 0xed, 0xa0, 0x80}), "invalid UTF-8", 1);  // surrogate
    require_parse_error(M, bytes({0xa4, 0xf4, 0x90, 0x80, 0x80}), "invalid UTF-8", 1);  // > U+10FFFF
    require_parse_error(M, bytes({0xa2, 'a', 0xe2}), "invalid UTF-8", 2);         // cut sequence
    // Also as a map key.
    require_parse_error(M, bytes({0x81, 0xa1, 0x80, 0x01}), "invalid UTF-8", 2);
  }
  SECTION("valid UTF-8 of every length is accepted") {
    const std::string s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf";
    auto d = decode(M, std::string(1, static_cast<char>(0xa0 | s.size())) + s);
    REQUIRE(d.ok());
    CHECK(d->value == json(s));
  }
  SECTION("non-string map key") {
    require_parse_error(M, bytes({0x81, 0x01, 0x02}), "map key must be a string", 1);
    require_parse_error(M, bytes({0x81, 0xc0, 0x02}), "map key must be a string", 1);
    require_parse_error(M, bytes({0x81, 0x90, 0x02}), "map key must be a string", 1);
    require_parse_error(M, bytes({0x81, 0x80, 0x02}), "map key must be a string", 1);
    require_parse_error(M, bytes({0x81, 0xc4, 0x01, 'k', 0x02}), "map key must be a string", 3);
  }
  SECTION("NaN and Infinity have no JSON form") {
    require_parse_error(M, bytes({0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0}), "NaN", 8);
    require_parse_error(M, bytes({0x91, 0xca, 0xff, 0x80, 0, 0}), "Infinity", 5);
  }
  SECTION("ext is not supported") {
    require_parse_error(M, bytes({0xd4, 0x01, 0x02}), "ext", 2);
    require_parse_error(M, bytes({0xc7, 0x01, 0x05, 0xaa}), "ext", 3);
  }
  SECTION("an ext32 of 0xffffffff bytes is refused without a throw (32-bit size_t)") {
    require_parse_error(M, bytes({0xc9, 0xff, 0xff, 0xff, 0xff, 0x01}), "ext values are not supported", 0);
    require_parse_error(M, bytes({0x92, 0x01, 0xc9, 0xff, 0xff, 0xff, 0xff}), "ext", 2);
    // An earlier problem is still reported first.
    require_parse_error(M, bytes({0x92, 0xa1, 0xff, 0xc9, 0xff, 0xff, 0xff, 0xff}), "invalid UTF-8", 2);
    // The same bytes inside a bin payload are just data.
    auto d = decode(M, bytes({0xc4, 0x05, 0xc9, 0xff, 0xff, 0xff, 0xff}));
    REQUIRE(d.ok());
    CHECK(d->value.get_binary().size() == 5);
    // After a run of c9 bytes (skipped whole when scanning) the header is still found.
    require_parse_error(M, bytes({0x92, 0xc4, 0x03, 0xc9, 0xc9, 0xc9, 0xc9, 0xff, 0xff, 0xff, 0xff}), "ext", 6);
    auto run = bytes({0xc5, 0x01, 0x00});
    run.append(256, '\xc9');
    REQUIRE(decode(M, run).ok());
  }
}

TEST_CASE("JSON: a top-level id that is not a 64-bit integer keeps its lexeme", "[codec][json]") {
  SECTION("single message, index -1") {
    auto d = decode(CodecKind::Json, R"({"jsonrpc":"2.0","result":1,"id":1.50})");
    REQUIRE(d.ok());
    REQUIRE(d->id_lexemes.size() == 1);
    CHECK(d->id_lexemes[0].index == -1);
    CHECK(d->id_lexemes[0].lexeme == "1.50");
    CHECK(d->value["id"] == json(1.5));
  }
  SECTION("integers beyond 64 bits, exponents and negative zero") {
    for (std::string lex : {"123456789012345678901234", "-99999999999999999999", "1e3", "2E-2",
                            "-0.0", "18446744073709551616"}) {
      auto d = decode(CodecKind::Json, R"({"id":)" + lex + "}");
      REQUIRE(d.ok());
      REQUIRE(d->id_lexemes.size() == 1);
      CHECK(d->id_lexemes[0].lexeme == lex);
    }
  }
  SECTION("batch, index = element position") {
    auto d = decode(CodecKind::Json,
                    R"([{"id":1},{"method":"m","id":123456789012345678901234},"x",{"id":2.0e3}])");
    REQUIRE(d.ok());
    REQUIRE(d->id_lexemes.size() == 2);
    CHECK(d->id_lexemes[0].index == 1);
    CHECK(d->id_lexemes[0].lexeme == "123456789012345678901234");
    CHECK(d->id_lexemes[1].index == 3);
    CHECK(d->id_lexemes[1].lexeme == "2.0e3");
  }
  SECTION("a repeated id keeps only the lexeme of the value that won") {
    auto d = decode(CodecKind::Json, R"({"id":1.5,"id":2.25})");
    REQUIRE(d.ok());
    REQUIRE(d->id_lexemes.size() == 1);
    CHECK(d->id_lexemes[0].lexeme == "2.25");
    auto e = decode(CodecKind::Json, R"({"id":1.5,"id":7})");
    REQUIRE(e.ok());
    CHECK(e->id_lexemes.empty());
  }
}

TEST_CASE("JSON: integer ids are not recorded as lexemes", "[codec][json]") {
  for (std::string id : {"0", "-1", "42", "9223372036854775807", "-9223372036854775808",
                         "18446744073709551615", "\"1.5\"", "null"}) {
    auto d = decode(CodecKind::Json, R"({"jsonrpc":"2.0","method":"m","id":)" + id + "}");
    REQUIRE(d.ok());
    CHECK(d->id_lexemes.empty());
  }
  auto b = decode(CodecKind::Json, R"([{"id":1},{"id":-2},{"id":18446744073709551615}])");
  REQUIRE(b.ok());
  CHECK(b->id_lexemes.empty());
}

TEST_CASE("JSON: ids below the top level are not recorded", "[codec][json]") {
  for (const char* doc : {
           R"({"method":"m","params":{"id":1.5},"id":1})",
           R"({"result":{"id":2.5},"id":"x"})",
           R"({"params":[{"id":1.5}]})",
           R"([[{"id":1.5}]])",
           R"([{"params":{"id":1.5}}])",
           R"({"id":{"id":1.5}})",
           R"({"id":[1.5]})",
           R"({"other":1.5,"x":{"y":2.5}})",
           R"([1.5,{"a":2.5}])",
       }) {
    INFO(doc);
    auto d = decode(CodecKind::Json, doc);
    REQUIRE(d.ok());
    CHECK(d->id_lexemes.empty());
  }
}

TEST_CASE("encode appends to the buffer", "[codec]") {
  const Message m = Request{Id::integer(1), "m", std::nullopt};
  for (CodecKind k : {CodecKind::Json, CodecKind::MessagePack}) {
    std::string buf = "prefix";
    auto c = weft::make_codec(k);
    REQUIRE(c->encode(Outgoing{{m}, false}, buf));
    const std::size_t one = buf.size() - 6;
    REQUIRE(c->encode(Outgoing{{m}, false}, buf));
    CHECK(buf.substr(0, 6) == "prefix");
    CHECK(buf.size() == 6 + 2 * one);
    CHECK(c->decode(std::string_view(buf).substr(6, one)).ok());
  }
  // Invalid UTF-8: JSON replaces it, MessagePack sends the bytes as str.
  const Message bad = Notification{"m", json::array({std::string("a\xff"), json(1)})};
  auto j = decode(CodecKind::Json, encode(CodecKind::Json, bad));
  REQUIRE(j.ok());
  CHECK(j->value["params"][0] == json("a\xef\xbf\xbd"));
  const std::string mp = encode(CodecKind::MessagePack, bad);
  CHECK(mp.find(std::string("\xa2" "a\xff", 3)) != std::string::npos);
}

TEST_CASE("msgpack: a float64 id comes back as a float64 id, not an integer", "[codec][msgpack]") {
  auto mp = weft::make_codec(CodecKind::MessagePack);
  for (const double d : {1.0, -0.0, 1.5}) {
    const Message req = Request{*Id::from_json(json(d)), "m", std::nullopt};
    auto doc = mp->decode(encode(CodecKind::MessagePack, req));
    REQUIRE(doc.ok());
    const auto& id = doc->value["id"];
    CHECK(id.is_number_float());
    CHECK(std::signbit(id.get<double>()) == std::signbit(d));
  }
}

// RFC 8259 §6: no NaN or Infinity in JSON; the MessagePack decoder refuses them too.
TEST_CASE("encode refuses a NaN or infinite number, appending nothing; unencodable() marks its message", "[codec]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Outgoing out;
  out.batch = true;
  out.messages.push_back(Response{Id::integer(1), json::array({1, inf})});
  out.messages.push_back(Response{Id::integer(2), json(2.5)});
  out.messages.push_back(Response{Id::integer(3), Error(-32000, "e", json{{"x", nan}})});
  out.messages.push_back(Notification{"n", json::array({-inf})});
  for (CodecKind k : {CodecKind::Json, CodecKind::MessagePack}) {
    std::string buf = "prefix";
    CHECK_FALSE(weft::make_codec(k)->encode(out, buf));
    CHECK(buf == "prefix");
  }
  CHECK(weft::unencodable(out) == std::vector<bool>{true, false, true, true});
  CHECK(weft::unencodable_error().code == weft::code::kInternalError);
}

TEST_CASE("decoders accept what the other side of the wire produces", "[codec]") {
  // JSON: whitespace around the value is allowed (RFC 8259 §2).
  auto j = decode(CodecKind::Json, " \t\r\n{\"id\":1} \n");
  REQUIRE(j.ok());
  CHECK(j->value == json{{"id", 1}});
  // MessagePack: str8/str16/str32 and map16/array16 forms decode as their fix forms do.
  auto m = decode(CodecKind::MessagePack,
                  bytes({0xde, 0x00, 0x01, 0xd9, 0x02, 'i', 'd', 0xdc, 0x00, 0x01, 0xdb, 0, 0, 0, 1, 'x'}));
  REQUIRE(m.ok());
  CHECK(m->value == json{{"id", json::array({"x"})}});
}
