// Our JSON decoder (core/src/json/parse.h) must accept exactly what nlohmann's
// parser accepts and build the same values: the codec's behaviour is pinned
// by the vectors and codec_test.cpp, and this differential test covers the
// inputs nobody thought to write down.
#include <catch2/catch.hpp>

#include <random>

#include "json/parse.h"
#include "weft/codec.h"

using nlohmann::json;

namespace {

// Pieces that hit every grammar rule (and breaks of them) when concatenated.
const char* kAtoms[] = {
    "{", "}", "[", "]", ",", ":", " ", "\t", "\r\n", "\"a\"", "\"id\"", "0", "1", "-1", "-0", "01",
    "1.5", "2.50", "1E3", "1e+2", "1e-400", "1e400", "1.", "-", "1e+", "18446744073709551615",
    "18446744073709551616", "-9223372036854775808", "-9223372036854775809", "true", "false",
    "null", "tru", "nul", "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\"\\ud800\"", "\"\\udc00\"",
    "\"\\ud800\\u0041\"", "\"\\x\"", "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "\"\xc3\xa9\"", "\"\xff\"",
    "\"\xe2\x82\"", "\"\xf0\x9f\x98\x80\"", "\"\xed\xa0\x80\"", "\"\x01\"", "\\",
    "\"abcdefghijklmnopqrstuvwxyz0123456789\"", "\"\xef\xbb\xbf\"", "\xef\xbb\xbf"};

}  // namespace

TEST_CASE("json_parse accepts exactly what nlohmann accepts, with equal values", "[codec][json]") {
  std::mt19937_64 rng(20261121);
  const std::size_t n_atoms = sizeof kAtoms / sizeof *kAtoms;
  int accepted = 0;
  for (int iter = 0; iter < 300000; ++iter) {
    std::string s;
    for (int i = static_cast<int>(rng() % 8); i > 0; --i) s += kAtoms[rng() % n_atoms];
    if (rng() % 4 == 0 && !s.empty()) s[rng() % s.size()] = static_cast<char>(rng() % 256);
    // nlohmann stops at a NUL byte and accepts "1\0junk"; we refuse it (below).
    if (s.find('\0') != std::string::npos) continue;
    auto mine = weft::detail::parse_json(s, 1000);
    json ref = json::parse(s, nullptr, false);
    INFO("input: " << json(s).dump(-1, ' ', true, json::error_handler_t::replace));
    REQUIRE(mine.ok() == !ref.is_discarded());
    if (mine.ok()) {
      ++accepted;
      REQUIRE(*mine == ref);
      REQUIRE(mine->dump() == ref.dump());
    } else {
      REQUIRE(mine.error().code == weft::code::kParseError);
    }
  }
  CHECK(accepted > 1000);  // the generator reaches the accepting paths too
}

TEST_CASE("json_parse: a NUL byte is not the end of the input", "[codec][json]") {
  auto r = weft::detail::parse_json(std::string("1\0x", 3), 64);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "invalid JSON at byte 1: expected end of input, got \\x00");
}

TEST_CASE("json_parse: integers keep nlohmann's kinds", "[codec][json]") {
  auto r = weft::detail::parse_json(R"([0,-0,1,-1,18446744073709551615,-9223372036854775808,1.0])", 64);
  REQUIRE(r.ok());
  const json& v = *r;
  CHECK(v[0].is_number_unsigned());
  CHECK(v[1].is_number_integer());
  CHECK(v[2].is_number_unsigned());
  CHECK(v[3].is_number_integer());
  CHECK(v[4].get<std::uint64_t>() == UINT64_MAX);
  CHECK(v[5].get<std::int64_t>() == INT64_MIN);
  CHECK(v[6].is_number_float());
}

TEST_CASE("json_parse: long strings cross the 8-byte fast path intact", "[codec][json]") {
  for (std::size_t n : {0u, 7u, 8u, 9u, 15u, 16u, 17u, 65536u}) {
    for (const std::string tail : {"", "\xc3\xa9", "\\n", "\\u00e9"}) {
      std::string body(n, 'x');
      auto r = weft::detail::parse_json("\"" + body + tail + "\"", 64);
      REQUIRE(r.ok());
      const std::string want = body + (tail.empty() ? "" : tail[0] == '\\' && tail[1] == 'n' ? "\n" : "\xc3\xa9");
      CHECK(r->get<std::string>() == want);
    }
  }
}

namespace {

// One classified item as text, so two classifications can be compared.
std::string render(const weft::Id& id) {
  return id.to_string() + "/" + std::to_string(static_cast<int>(id.kind()));
}

std::string render(const weft::Item& item) {
  if (auto* r = std::get_if<weft::Request>(&item))
    return "request " + render(r->id) + " " + r->method + " " + (r->params ? r->params->dump() : "-");
  if (auto* n = std::get_if<weft::Notification>(&item))
    return "notification " + n->method + " " + (n->params ? n->params->dump() : "-");
  if (auto* s = std::get_if<weft::Response>(&item)) {
    if (!s->is_error()) return "result " + render(s->id) + " " + std::get<json>(s->outcome).dump();
    const auto& e = std::get<weft::Error>(s->outcome);
    return "error " + render(s->id) + " " + std::to_string(e.code) + " " + e.message + " " +
           (e.data ? e.data->dump() : "-");
  }
  const auto& bad = std::get<weft::Invalid>(item);
  return "invalid " + render(bad.id) + " " + std::to_string(bad.error.code) + " " + bad.error.message +
         (bad.reply ? " reply" : " quiet") + (bad.foreign ? " foreign" : "") + (bad.call ? " call" : "");
}

std::string render(const weft::Incoming& in) {
  std::string s = in.batch ? "batch:" : "single:";
  for (const auto& i : in.items) s += "\n  " + render(i);
  return s;
}

// Every event a parse reports, as text.
struct Recorder final : weft::detail::EnvelopeSink {
  std::string log;
  std::string skip;  // member names not wanted
  void begin_array() override { log += "["; }
  void end_array() override { log += "]"; }
  void begin_object() override { log += "{"; }
  bool want(std::string_view name) override { return name != skip; }
  void member(std::string&& name, json&& v, std::string_view text) override {
    log += name + "=" + v.dump() + (text.empty() ? "" : "~" + std::string(text)) + ";";
  }
  void end_object() override { log += "}"; }
  void value(json&& v) override { log += "<" + v.dump() + ">"; }
};

std::string events(const std::string& text, const std::string& skip = "") {
  Recorder r;
  r.skip = skip;
  auto ok = weft::detail::parse_json(text, 64, r);
  return ok ? r.log : "error: " + ok.error().message;
}

}  // namespace

TEST_CASE("json_parse: the envelope level arrives as events", "[codec][json]") {
  CHECK(events("5") == "<5>");
  CHECK(events(" [ ] ") == "[]");
  CHECK(events("{}") == "{}");
  CHECK(events(R"({"a":1,"b":[1.50,{"c":2}],"a":1.50})") == R"({a=1;b=[1.5,{"c":2}];a=1.5~1.50;})");
  CHECK(events(R"([{"id":1E3},[1],"x",{},{"n":-0,"m":-0.0}])") ==
        R"([{id=1000.0~1E3;}<[1]><"x">{}{n=0;m=-0.0~-0.0;}])");
  CHECK(events(R"({"id":123456789012345678901234,"u":18446744073709551615})") ==
        R"({id=1.2345678901234569e+23~123456789012345678901234;u=18446744073709551615;})");
  // Members not wanted are still checked, errors at the same bytes.
  CHECK(events(R"({"x":{"y":[1,"z",null]},"id":2})", "x") == "{id=2;}");
  CHECK(events(R"({"x":[1,1e400],"id":2})", "x") == events(R"({"x":[1,1e400],"id":2})"));
  CHECK(events(R"({"x":["\ud800"],"id":2})", "x") == events(R"({"x":["\ud800"],"id":2})"));
  CHECK(events(R"({"x":[1 2]})", "x") == "error: invalid JSON at byte 8: unexpected value; expected ',' or ']' after an array element");
}

TEST_CASE("EnvelopeBuilder gives exactly what the JSON codec's decode + classify gives", "[codec][json]") {
  // Envelopes built from members that hit every classify rule, in random
  // order, with repeats, odd types, numeric ids of every spelling, batches
  // around the batch limit, nesting around the depth limit and broken syntax.
  const char* members[] = {
      R"("jsonrpc":"2.0")", R"("jsonrpc":"2.0")", R"("jsonrpc":"1.0")", R"("jsonrpc":2)", R"("jsonrpc":null)",
      R"("method":"add")", R"("method":"add")", R"("method":"")", R"("method":5)", R"("method":["m"])",
      R"("params":{"a":1,"b":2})", R"("params":[1,2])", R"("params":"x")", R"("params":null)",
      R"("params":{"id":1.5,"deep":[[{"x":1E3}]]})", R"("params":[])",
      R"("id":1)", R"("id":"abc")", R"("id":null)", R"("id":[1])", R"("id":{"id":1.5})", R"("id":true)",
      R"("result":3)", R"("result":null)", R"("result":{"id":2.50})", R"("result":[1.0,-0])",
      R"("error":{"code":-32000,"message":"m","data":[1]})", R"("error":{"code":"x","message":"m"})",
      R"("error":{"code":1.0,"message":"m"})", R"("error":{"code":2147483648,"message":"m"})",
      R"("error":{"code":-7,"message":5})", R"("error":{"code":-7})", R"("error":5)", R"("error":null)",
      R"("extra":{"deep":[[[1]]]})", R"("extra":[1,{"a":"\u00e9"}])", R"("extra":1.5)", R"("Id":1.5)",
      R"("ids":2.5)", R"("":0)"};
  const char* ids[] = {"0", "-0", "7", "-1", "1.0", "1.50", "-0.0", "0.1", "1E3", "1e3", "2e-2", "2E+2",
                       "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                       "-9223372036854775809", "18446744073709551615", "18446744073709551616",
                       "123456789012345678901234", "-99999999999999999999", "1e308", "5e-324", "1e-400",
                       "0.30000000000000004", "\"1.50\""};
  const char* others[] = {"5", "\"x\"", "null", "[]", "[{\"id\":1.5}]", "true", "1.50", "{}"};
  const std::size_t n_members = sizeof members / sizeof *members;
  const std::size_t n_ids = sizeof ids / sizeof *ids;
  const std::size_t n_others = sizeof others / sizeof *others;
  std::mt19937_64 rng(7);
  auto member = [&]() -> std::string {
    if (rng() % 4 == 0) return std::string(R"("id":)") + ids[rng() % n_ids];
    return members[rng() % n_members];
  };
  auto object = [&] {
    std::string o = "{";
    for (int k = static_cast<int>(rng() % 7); k > 0; --k) o += member() + std::string(k > 1 ? "," : "");
    return o + "}";
  };
  int batches = 0, errors = 0, lexemes = 0;
  for (int iter = 0; iter < 40000; ++iter) {
    std::string text;
    const int shape = static_cast<int>(rng() % 10);
    if (shape < 3) {
      text = "[";
      for (int k = static_cast<int>(rng() % 6); k > 0; --k)
        text += (rng() % 5 == 0 ? std::string(others[rng() % n_others]) : object()) + (k > 1 ? "," : "");
      text += "]";
      ++batches;
    } else if (shape == 3) {
      text = others[rng() % n_others];
    } else {
      text = object();
    }
    if (rng() % 4 == 0) text = " \n" + text + "\t";
    if (rng() % 8 == 0) text.insert(rng() % (text.size() + 1), 1, "{}[],:\" x\\"[rng() % 10]);
    const std::size_t depth = rng() % 4 == 0 ? 1 + rng() % 4 : 64;
    const std::size_t max_batch = rng() % 3 == 0 ? rng() % 4 : 1000;
    INFO("input: " << text << " depth " << depth << " max_batch " << max_batch);
    auto doc = weft::make_codec(weft::CodecKind::Json, weft::CodecLimits{depth})->decode(text);
    weft::detail::EnvelopeBuilder b(max_batch);
    auto parsed = weft::detail::parse_json(text, depth, b);
    REQUIRE(doc.ok() == parsed.ok());
    if (!doc.ok()) {
      REQUIRE(doc.error() == parsed.error());
      ++errors;
      continue;
    }
    lexemes += !doc->id_lexemes.empty();
    const std::string want = render(weft::classify(std::move(*doc), max_batch));
    REQUIRE(render(b.take()) == want);
  }
  CHECK(batches > 5000);
  CHECK(errors > 1000);
  CHECK(lexemes > 3000);
}
