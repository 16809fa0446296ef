// Our JSON decoder (core/src/json_parse.h) must accept exactly what nlohmann's
// parser accepts and build the same values: the codec's behaviour is pinned
// by the vectors and codec_test.cpp, and this differential test covers the
// inputs nobody thought to write down.
#include <catch2/catch.hpp>

#include <random>

#include "json_parse.h"

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
      REQUIRE(mine->value == ref);
      REQUIRE(mine->value.dump() == ref.dump());
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
  const json& v = r->value;
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
      CHECK(r->value.get<std::string>() == want);
    }
  }
}

namespace {

// One classified item as text, so two classifications can be compared.
std::string render(const weft::Item& item) {
  if (auto* r = std::get_if<weft::Request>(&item))
    return "request " + r->id.to_string() + " " + r->method + " " + (r->params ? r->params->dump() : "-");
  if (auto* n = std::get_if<weft::Notification>(&item))
    return "notification " + n->method + " " + (n->params ? n->params->dump() : "-");
  if (auto* s = std::get_if<weft::Response>(&item)) {
    if (!s->is_error()) return "result " + s->id.to_string() + " " + std::get<json>(s->outcome).dump();
    const auto& e = std::get<weft::Error>(s->outcome);
    return "error " + s->id.to_string() + " " + std::to_string(e.code) + " " + e.message + " " +
           (e.data ? e.data->dump() : "-");
  }
  const auto& bad = std::get<weft::Invalid>(item);
  return "invalid " + bad.id.to_string() + " " + std::to_string(bad.error.code) + " " + bad.error.message +
         (bad.reply ? " reply" : " quiet");
}

std::string render(const weft::Incoming& in) {
  std::string s = in.batch ? "batch:" : "single:";
  for (const auto& i : in.items) s += "\n  " + render(i);
  return s;
}

}  // namespace

TEST_CASE("parse_json_flat + classify gives exactly what parse_json + classify gives", "[codec][json]") {
  // Envelopes built from members that hit every classify rule, in random
  // order, with repeats, odd types and broken syntax.
  const char* members[] = {
      R"("jsonrpc":"2.0")", R"("jsonrpc":"1.0")", R"("jsonrpc":2)", R"("method":"add")", R"("method":"")",
      R"("method":5)", R"("params":{"a":1,"b":2})", R"("params":[1,2])", R"("params":"x")", R"("params":null)",
      R"("id":1)", R"("id":"abc")", R"("id":1.50)", R"("id":1E3)", R"("id":null)", R"("id":[1])",
      R"("id":123456789012345678901234567890)", R"("result":3)", R"("result":null)",
      R"("error":{"code":-32000,"message":"m","data":[1]})", R"("error":{"code":"x","message":"m"})",
      R"("error":5)", R"("extra":{"deep":[[[1]]]})", R"("id":-0.0)"};
  const std::size_t n = sizeof members / sizeof *members;
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string text;
    const int shape = static_cast<int>(rng() % 10);
    auto object = [&] {
      std::string o = "{";
      for (int k = static_cast<int>(rng() % 6); k > 0; --k) o += members[rng() % n] + std::string(k > 1 ? "," : "");
      return o + "}";
    };
    if (shape == 0) text = "[" + object() + "," + object() + "]";
    else if (shape == 1) text = "5";
    else text = object();
    if (rng() % 8 == 0) text.insert(rng() % (text.size() + 1), 1, "{}[],:\" x"[rng() % 9]);
    const std::size_t depth = rng() % 4 == 0 ? 3 : 64;
    INFO("input: " << text << " depth " << depth);
    auto a = weft::detail::parse_json(text, depth);
    auto b = weft::detail::parse_json_flat(text, depth);
    REQUIRE(a.ok() == b.ok());
    if (!a.ok()) {
      CHECK(a.error() == b.error());
      continue;
    }
    CHECK(b->flat == (text[text.find_first_not_of(' ')] == '{'));
    const std::string want = render(weft::classify(std::move(*a), 1000));
    const std::string got = render(weft::detail::classify(std::move(*b), 1000));
    REQUIRE(got == want);
  }
}
