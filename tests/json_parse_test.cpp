// Our JSON decoder (core/src/json/parse.h) must accept exactly what nlohmann's
// parser accepts and build the same values: the codec's behaviour is pinned
// by the vectors and codec_test.cpp, and this differential test covers the
// inputs nobody thought to write down.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "json/parse.h"
#include "json/scan.h"
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

// The special bytes of a string (scan.h) and what the parser must make of
// each: the string's value, or the offset of the error inside the insert.
struct Insert {
  const char* name;
  std::string raw;       // as it appears between the quotes
  std::string value;     // the decoded bytes, when accepted
  int error_at = -1;     // else: the error's offset from the insert's start
};

const std::vector<Insert>& inserts() {
  static const std::vector<Insert> all = {
      {"plain ASCII", "~", "~"},
      {"DEL is plain", "\x7f", "\x7f"},
      {"escaped quote", "\\\"", "\""},
      {"escaped backslash", "\\\\", "\\"},
      {"escaped newline", "\\n", "\n"},
      {"\\u escape", "\\u00e9", "\xc3\xa9"},
      {"surrogate pair escape", "\\ud83d\\ude00", "\xf0\x9f\x98\x80"},
      {"2-byte UTF-8", "\xc3\xa9", "\xc3\xa9"},
      {"3-byte UTF-8", "\xe4\xb8\x96", "\xe4\xb8\x96"},
      {"4-byte UTF-8", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
      {"control byte 0x01", "\x01", "", 0},
      {"control byte 0x1f", "\x1f", "", 0},
      {"raw tab", "\t", "", 0},
      {"NUL byte", std::string(1, '\0'), "", 0},
      {"byte 0xff", "\xff", "", 0},
      {"lone continuation byte", "\x80", "", 0},
      {"overlong", "\xc0\xaf", "", 0},
      {"truncated sequence", "\xc3x", "", 1},
      {"encoded surrogate", "\xed\xa0\x80", "", 1},
      {"above U+10FFFF", "\xf4\x90\x80\x80", "", 1},
      {"bad escape (the byte after the backslash)", "\\x", "", 1},
  };
  return all;
}

}  // namespace

TEST_CASE("scan: every stage finds the first special byte the byte-by-byte scan finds", "[codec][json]") {
  // find_special() hands over between AVX2, SSE2 (x86-64), the 8-byte word trick
  // (WebAssembly) and single bytes; each stage is held to the reference on its
  // own here, so the stage this machine does not use is tested too.
  std::mt19937 rng(12);
  const unsigned char specials[] = {'"', '\\', 0x00, 0x01, 0x1f, 0x80, 0xc3, 0xff};
  const unsigned char near[] = {' ', '!', '#', '[', ']', 0x7f, '~', 'a'};  // plain, next to special ones
  for (int iter = 0; iter < 4000; ++iter) {
    std::string buf(rng() % 200, 'x');
    for (char& c : buf) c = static_cast<char>(near[rng() % 8]);
    for (int k = static_cast<int>(rng() % 3); k > 0 && !buf.empty(); --k)
      buf[rng() % buf.size()] = static_cast<char>(specials[rng() % 8]);
    for (std::size_t from = 0; from <= buf.size(); ++from) {
      const char* b = buf.data() + from;
      const char* e = buf.data() + buf.size();
      const char* want = weft::detail::find_special_bytes(b, e);
      INFO("buffer of " << buf.size() << " bytes, scanned from " << from);
      REQUIRE(weft::detail::find_special(b, e) == want);
#ifdef WEFT_SCAN_SWAR
      const char* swar = weft::detail::find_special_swar(b, e);
      REQUIRE(swar <= want);
      REQUIRE((swar == want || e - swar < 8));  // stops at the hit, or with < 8 bytes left
#endif
#ifdef WEFT_SCAN_SSE2
      const char* sse = weft::detail::find_special_sse2(b, e);
      REQUIRE(sse <= want);
      REQUIRE((sse == want || e - sse < 16));
#endif
#ifdef WEFT_SCAN_AVX2
      if (weft::detail::cpu_has_avx2()) {
        const char* avx = weft::detail::find_special_avx2(b, e);
        REQUIRE(avx <= want);
        REQUIRE((avx == want || e - avx < 64));
      }
#endif
    }
  }
}

TEST_CASE("json_parse: every special byte is found at every offset of a run", "[codec][json]") {
  // The fast path reads 64, 16 and 8 bytes at a time: the insert lands at every
  // position of the first words and after them, in strings of every length
  // around the boundaries, with plain bytes on both sides.
  for (const Insert& ins : inserts()) {
    for (std::size_t before = 0; before <= 200; ++before) {
      for (std::size_t after : {0u, 1u, 7u, 8u, 15u, 16u, 17u, 33u, 130u}) {
        const std::string head(before, 'a'), tail(after, 'b');
        const std::string text = "\"" + head + ins.raw + tail + "\"";
        INFO(ins.name << " after " << before << " bytes, " << after << " bytes after it");
        auto r = weft::detail::parse_json(text, 64);
        if (ins.error_at < 0) {
          REQUIRE(r.ok());
          REQUIRE(r->get<std::string>() == head + ins.value + tail);
        } else {
          REQUIRE_FALSE(r.ok());
          REQUIRE(r.error().code == weft::code::kParseError);
          const std::string at = "invalid JSON at byte " + std::to_string(1 + before + ins.error_at) + ": ";
          REQUIRE(r.error().message.substr(0, at.size()) == at);
        }
        // nlohmann agrees on what is accepted (it stops at NUL, which we refuse).
        if (ins.raw.find('\0') == std::string::npos)
          REQUIRE(json::parse(text, nullptr, false).is_discarded() == (ins.error_at >= 0));
      }
    }
  }
}

TEST_CASE("json_parse: mixed text decodes as nlohmann decodes it", "[codec][json]") {
  // Runs of multi-byte sequences back to back, ASCII between them, escapes,
  // and now and then one ill-formed piece: accepted exactly when nlohmann
  // accepts, to the same value, and refused at the offending byte.
  const char* pieces[] = {"a", "bcdefghijklmnopq", "\xc3\xa9", "\xe4\xb8\x96", "\xf0\x9f\x98\x80", "\\n",
                          "\\u00e9", "\\\"", "\xff", "\xc3", "\xed\xa0\x80", "\x01"};
  std::mt19937 rng(99);
  int refused = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string body;
    std::size_t first_bad = std::string::npos;
    for (int k = static_cast<int>(rng() % 40); k > 0; --k) {
      const std::size_t i = rng() % 12;
      if (i >= 8 && rng() % 8 != 0) continue;  // ill-formed pieces are rare
      if (i >= 8 && first_bad == std::string::npos) first_bad = body.size() + (i == 9 || i == 10 ? 1 : 0);
      body += pieces[i];
    }
    const std::string text = "\"" + body + "\"";
    INFO("input: " << json(text).dump(-1, ' ', true, json::error_handler_t::replace));
    auto mine = weft::detail::parse_json(text, 64);
    const json ref = json::parse(text, nullptr, false);
    REQUIRE(mine.ok() == !ref.is_discarded());
    if (mine.ok()) {
      REQUIRE(*mine == ref);
    } else {
      ++refused;
      // "\xc3" then a lead byte or '"': refused at the byte after the lead.
      const std::string at = "invalid JSON at byte " + std::to_string(1 + first_bad) + ": ";
      REQUIRE(mine.error().message.substr(0, at.size()) == at);
    }
  }
  CHECK(refused > 1000);
}

TEST_CASE("json_parse: a string cut off at any length misses its closing quote", "[codec][json]") {
  // The scan must stop at the end of the input, never read past it.
  for (std::size_t n = 0; n <= 70; ++n) {
    const std::string text = "\"" + std::string(n, 'x');
    auto r = weft::detail::parse_json(text, 64);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message ==
          "invalid JSON at byte " + std::to_string(n + 1) + ": invalid string: missing closing quote");
  }
  auto cut = weft::detail::parse_json("\"" + std::string(20, 'x') + "\xe4\xb8", 64);
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.error().message == "invalid JSON at byte 23: invalid string: missing closing quote "
                               "(input ends inside a UTF-8 sequence)");
}

TEST_CASE("json_parse: a quote inside a long run ends the string there", "[codec][json]") {
  // What follows the closing quote is the document's, not the string's.
  for (std::size_t n = 0; n <= 40; ++n) {
    const std::string key(n, 'k');
    auto r = weft::detail::parse_json("{\"" + key + "\":\"" + key + "\",\"z\":[\"" + key + "\"]}", 64);
    REQUIRE(r.ok());
    CHECK(*r == json({{key, key}, {"z", {key}}}));
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
  void member(std::string_view name, json&& v, std::string_view text) override {
    log += std::string(name) + "=" + v.dump() + (text.empty() ? "" : "~" + std::string(text)) + ";";
  }
  void member_text(std::string_view name, std::string_view text) override {
    log += std::string(name) + "=" + json(std::string(text)).dump() + ";";
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
