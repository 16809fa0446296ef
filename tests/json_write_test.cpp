// The run-based JSON writer must produce exactly nlohmann's bytes
// (ensure_ascii=false, invalid UTF-8 replaced): the vectors depend on it.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "json/write.h"

using nlohmann::json;

namespace {

struct Gen {
  std::mt19937 rng{20261121};
  std::string str() {
    static const char* odd[] = {"é", "😀", "世", "\x7f", "\xed\xa0\x80" /* surrogate */,
                                "\xf4\x90\x80\x80" /* > U+10FFFF */, "\xc0\xaf" /* overlong */,
                                "\xe0\x80\xaf" /* overlong */, "\"", "\\", "\n", "\x01"};
    std::string s;
    const int n = rng() % 12;
    for (int i = 0; i < n; ++i) {
      const int k = rng() % 10;
      if (k < 3) s += static_cast<char>(rng() % 256);
      else if (k < 7) s += static_cast<char>(0x20 + rng() % 95);
      else s += odd[rng() % 12];
    }
    return s;
  }
  json value(int depth) {
    switch (rng() % (depth > 3 ? 6 : 8)) {
      case 0: return nullptr;
      case 1: return rng() % 2 == 0;
      case 2: return static_cast<std::int64_t>(rng()) - (1ll << 31);
      case 3: return static_cast<std::uint64_t>(rng()) * rng() * 4;
      case 4: return static_cast<double>(rng()) / 7.0;
      case 5: return str();
      case 6: {
        json a = json::array();
        for (int i = rng() % 4; i > 0; --i) a.push_back(value(depth + 1));
        return a;
      }
      default: {
        json o = json::object();
        for (int i = rng() % 4; i > 0; --i) o[str()] = value(depth + 1);
        return o;
      }
    }
  }
};

}  // namespace

TEST_CASE("the JSON writer matches nlohmann's dump byte for byte", "[json]") {
  Gen g;
  for (int i = 0; i < 20000; ++i) {
    const json v = g.value(0);
    std::string ours;
    weft::detail::write_json_value(v, ours);
    const std::string theirs = v.dump(-1, ' ', false, json::error_handler_t::replace);
    INFO("value #" << i);
    REQUIRE(ours == theirs);
  }
}

TEST_CASE("a long plain string is written in one run", "[json]") {
  const std::string s(65536, 'x');
  std::string out;
  weft::detail::write_json_string(s, out);
  CHECK(out == "\"" + s + "\"");
}

TEST_CASE("the JSON writer escapes every special byte at every offset of a run", "[json]") {
  // The fast path reads 64, 16 and 8 bytes at a time: each byte that needs a look
  // (every control byte, '"', '\\', DEL, UTF-8 of every length, ill-formed
  // UTF-8, which nlohmann replaces) lands at every position of the first
  // words and after them; the bytes must equal nlohmann's dump.
  std::vector<std::string> specials = {"\"", "\\", "\x7f", "\xc3\xa9", "\xe4\xb8\x96", "\xf0\x9f\x98\x80",
                                       "\xff", "\x80", "\xc0\xaf", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80"};
  for (int c = 0; c < 0x20; ++c) specials.emplace_back(1, static_cast<char>(c));
  for (const std::string& sp : specials) {
    for (std::size_t before = 0; before <= 200; ++before) {
      for (std::size_t after : {0u, 1u, 7u, 8u, 15u, 16u, 17u, 33u, 130u}) {
        const std::string s = std::string(before, 'a') + sp + std::string(after, 'b');
        std::string ours = "prefix";
        weft::detail::write_json_string(s, ours);
        const std::string theirs = "prefix" + json(s).dump(-1, ' ', false, json::error_handler_t::replace);
        INFO("special " << json(sp).dump(-1, ' ', true, json::error_handler_t::replace) << " after " << before
                        << " bytes, " << after << " after it");
        REQUIRE(ours == theirs);
      }
    }
  }
}

TEST_CASE("the JSON writer keeps plain runs of every length intact", "[json]") {
  for (std::size_t n = 0; n <= 70; ++n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += static_cast<char>(0x20 + (i * 7) % 95);  // printable, not special
    std::string ours;
    weft::detail::write_json_string(s, ours);
    REQUIRE(ours == json(s).dump(-1, ' ', false, json::error_handler_t::replace));
  }
}

TEST_CASE("the JSON writer matches nlohmann on runs of multi-byte text", "[json]") {
  // Sequences back to back (checked one after the other without the scanner),
  // with controls, quotes and ill-formed bytes among them.
  const char* pieces[] = {"a", "bcdefghijklmnopq", "\xc3\xa9", "\xe4\xb8\x96", "\xf0\x9f\x98\x80",
                          "\n", "\"", "\x7f", "\xff", "\xc3", "\xed\xa0\x80"};
  std::mt19937 rng(5);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s;
    for (int k = static_cast<int>(rng() % 40); k > 0; --k) {
      const std::size_t i = rng() % 11;
      if (i >= 8 && rng() % 8 != 0) continue;
      s += pieces[i];
    }
    std::string ours;
    weft::detail::write_json_string(s, ours);
    INFO("input: " << json(s).dump(-1, ' ', true, json::error_handler_t::replace));
    REQUIRE(ours == json(s).dump(-1, ' ', false, json::error_handler_t::replace));
  }
}
