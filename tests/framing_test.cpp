// framing_test.cpp — weft/framing.h decoders and encoders.
//
// The golden vectors in tests/vectors/framing/*.txt pin one rule per case. Each
// case is replayed (a) whole, (b) split in two at every point, (c) byte by
// byte, and (d) the error-free cases of a file are merged into one stream; all
// replays must give exactly the expected events. Direct tests below cover what
// the vectors cannot: memory while skipping oversized payloads, zero-copy
// delivery and encode→decode round trips (the read timeout's cases are
// framing_timeout_test.cpp's).
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "framing/detail.h"
#include "frame_recorder.h"
#include "vector_text.h"
#include "weft/framing.h"

using namespace weft;
using test::Event;
using test::Recorder;
using test::framed;
using test::kAll;

namespace {

std::string escape(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '\r') out += "\\r";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '"' || c == '\\') out += std::string("\\") + static_cast<char>(c);
    else if (c < 0x20 || c >= 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else out += static_cast<char>(c);
  }
  return out + "\"";
}

// Expectations of a case as comparable text, with an implicit trailing `eof`.
std::vector<std::string> expected_of(const test::Case& c) {
  std::vector<std::string> out;
  bool eof = false;
  for (const auto& e : c.expect) {
    if (e.kind == "frame") {
      out.push_back("frame " + escape(e.bytes));
    } else if (e.kind == "error") {
      std::string s = "error " + std::to_string(e.number.value_or(0));
      auto r = e.attrs.find("reply");
      s += (r != e.attrs.end() && r->second == "false") ? " reply=false" : "";
      if (auto a = e.attrs.find("at"); a != e.attrs.end()) s += " at=" + a->second;
      out.push_back(s);
    } else if (e.kind == "eof") {
      out.push_back("eof");
      eof = true;
    } else {
      out.push_back("?? unknown directive " + e.kind + " on line " + std::to_string(e.line));
    }
  }
  if (!eof) out.push_back("eof");
  return out;
}

// Actual events rendered like the expectations; `at=` only where they give it.
std::vector<std::string> render(const std::vector<Event>& ev, const std::vector<std::string>& want) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    if (e.kind == Event::Frame) {
      out.push_back("frame " + escape(e.bytes));
    } else if (e.kind == Event::Eof) {
      out.push_back("eof");
    } else {
      std::string s = "error " + std::to_string(e.error.error.code);
      if (!e.error.reply) s += " reply=false";
      if (i < want.size() && want[i].find(" at=") != std::string::npos)
        s += " at=" + std::to_string(e.error.offset);
      out.push_back(s);
    }
  }
  return out;
}

FramingLimits limits_of(const test::Case& c) {
  FramingLimits l;
  if (auto it = c.limits.find("max_frame"); it != c.limits.end()) l.max_frame = it->second;
  if (auto it = c.limits.find("max_header"); it != c.limits.end()) l.max_header = it->second;
  return l;
}

// Feeds `in` cut at `cuts` (ascending offsets), then finish().
std::vector<Event> replay(Framing f, FramingLimits l, std::string_view in,
                          const std::vector<std::size_t>& cuts) {
  auto dec = make_decoder(f, l);
  Recorder r;
  std::size_t at = 0;
  for (std::size_t cut : cuts) {
    dec->feed(in.substr(at, cut - at), 0, r);
    at = cut;
  }
  dec->feed(in.substr(at), 0, r);
  r.events.push_back({Event::Eof, {}, {}});
  dec->finish(r);
  CHECK(dec->idle());
  return r.events;
}

std::vector<test::Case> load(const char* file) {
  std::vector<test::Case> cases;
  std::string err;
  const bool ok = test::load_vectors(std::string(WEFT_VECTORS_DIR) + "/framing/" + file, cases, err);
  INFO(err);
  REQUIRE(ok);
  REQUIRE(!cases.empty());
  return cases;
}

void run_vectors(Framing f, const char* file) {
  const auto cases = load(file);
  std::string merged_in;
  std::vector<std::string> merged_want;
  for (const auto& c : cases) {
    INFO(file << ":" << c.line << " ## " << c.name);
    const auto want = expected_of(c);
    const auto l = limits_of(c);
    const std::string& in = c.input;
    {
      INFO("replay: whole");
      CHECK(render(replay(f, l, in, {}), want) == want);
    }
    for (std::size_t i = 1; i < in.size(); ++i) {
      INFO("replay: split at " << i);
      CHECK(render(replay(f, l, in, {i}), want) == want);
    }
    {
      INFO("replay: byte by byte (and an empty first chunk)");
      std::vector<std::size_t> cuts{0};
      for (std::size_t i = 1; i < in.size(); ++i) cuts.push_back(i);
      CHECK(render(replay(f, l, in, cuts), want) == want);
    }
    // (d) Cases with default limits, only frames, and nothing produced by
    // finish() end on a frame boundary, so their inputs can be concatenated.
    bool mergeable = c.limits.empty() && want.back() == "eof";
    for (const auto& w : want) mergeable = mergeable && (w == "eof" || w.rfind("frame ", 0) == 0);
    if (mergeable) {
      merged_in += in;
      merged_want.insert(merged_want.end(), want.begin(), want.end() - 1);
    }
  }
  merged_want.push_back("eof");
  INFO(file << ": merged error-free cases (" << merged_in.size() << " bytes)");
  REQUIRE(merged_want.size() > 3);
  const FramingLimits l;
  CHECK(render(replay(f, l, merged_in, {}), merged_want) == merged_want);
  std::vector<std::size_t> every;
  for (std::size_t i = 1; i < merged_in.size(); ++i) every.push_back(i);
  CHECK(render(replay(f, l, merged_in, every), merged_want) == merged_want);
  for (std::size_t i = 1; i < merged_in.size(); i += 7) {
    INFO("merged split at " << i << " and " << (i + merged_in.size()) / 2);
    CHECK(render(replay(f, l, merged_in, {i, (i + merged_in.size()) / 2}), merged_want) ==
          merged_want);
  }
}

}  // namespace

TEST_CASE("framing vectors: lsp", "[framing]") { run_vectors(Framing::Lsp, "lsp.txt"); }
TEST_CASE("framing vectors: ndjson", "[framing]") { run_vectors(Framing::Ndjson, "ndjson.txt"); }
TEST_CASE("framing vectors: len32be", "[framing]") { run_vectors(Framing::Len32Be, "len32be.txt"); }
TEST_CASE("framing vectors: len32le", "[framing]") { run_vectors(Framing::Len32Le, "len32le.txt"); }

TEST_CASE("vector_text parses the golden format", "[framing]") {
  std::vector<test::Case> cs;
  std::string err;
  REQUIRE(test::parse_vectors("# c\n## one\nlimit max_frame=16\nin \"a\\r\\n\"\nin \"\\x41\\\"\"\n"
                              "frame \"x\"\nerror -32600 reply=false at=3\neof\n## two\n",
                              cs, err));
  REQUIRE(cs.size() == 2);
  CHECK(cs[0].name == "one");
  CHECK(cs[0].limits.at("max_frame") == 16);
  CHECK(cs[0].input == "a\r\nA\"");
  REQUIRE(cs[0].expect.size() == 3);
  CHECK(cs[0].expect[1].number == -32600);
  CHECK(cs[0].expect[1].attrs.at("reply") == "false");
  CHECK(cs[0].expect[2].kind == "eof");
  cs.clear();
  CHECK_FALSE(test::parse_vectors("## x\nin \"unterminated\n", cs, err));
  cs.clear();
  CHECK_FALSE(test::parse_vectors("frame \"before any case\"\n", cs, err));
}

TEST_CASE("oversized payloads stream past without being buffered", "[framing]") {
  const std::size_t declared = 20'000'000;
  const std::string chunk(64 * 1024, 'x');
  for (Framing f : kAll) {
    INFO(framing_name(f));
    FramingLimits l;  // max_frame 10 MB (docs/framing.md F2)
    auto dec = make_decoder(f, l);
    Recorder r;
    std::string head;
    if (f == Framing::Lsp) head = "Content-Length: 20000000\r\n\r\n";
    if (f == Framing::Len32Be) head = std::string("\x01\x31\x2d\x00", 4);  // 20'000'000
    if (f == Framing::Len32Le) head = std::string("\x00\x2d\x31\x01", 4);
    dec->feed(head, 0, r);
    std::size_t peak = 0;
    for (std::size_t sent = 0; sent < declared; sent += chunk.size()) {
      dec->feed(std::string_view(chunk).substr(0, std::min(chunk.size(), declared - sent)), 0, r);
      peak = std::max(peak, detail::decoder_memory(*dec));
    }
    // Ndjson cannot know a line is too long before max_frame bytes of it have
    // arrived; from then on the rest of the line is skipped, not buffered.
    if (f == Framing::Ndjson) {
      CHECK(peak <= 2 * l.max_frame);
      dec->feed("\n", 0, r);
    } else {
      CHECK(peak <= 1024);
    }
    CHECK(detail::decoder_memory(*dec) <= 1024);
    REQUIRE(r.events.size() == 1);
    CHECK(r.events[0].kind == Event::Err);
    CHECK(r.events[0].error.error.code == code::kInvalidRequest);
    CHECK(r.events[0].error.reply);
    if (f != Framing::Ndjson) {  // the message gives the size and the limit
      CHECK_THAT(r.events[0].error.error.message, Catch::Contains("20000000") && Catch::Contains("10000000"));
      CHECK(r.events[0].error.offset == head.size() - 1);
    } else {
      CHECK_THAT(r.events[0].error.error.message, Catch::Contains("10000000"));
      CHECK(r.events[0].error.offset == l.max_frame);
    }
    dec->feed(framed(f, "{\"ok\":true}"), 0, r);
    REQUIRE(r.events.size() == 2);
    CHECK(r.events[1].bytes == "{\"ok\":true}");
  }
}

TEST_CASE("frames inside one chunk are delivered without copying", "[framing]") {
  for (Framing f : kAll) {
    INFO(framing_name(f));
    std::string in;
    for (int i = 0; i < 3; ++i) encode_frame(f, "{\"id\":" + std::to_string(i) + "}", in);
    struct InChunk : FrameHandler {
      std::string_view chunk;
      int frames = 0, copied = 0;
      void on_frame(std::string_view p) override {
        ++frames;
        if (p.data() < chunk.data() || p.data() + p.size() > chunk.data() + chunk.size()) ++copied;
      }
      void on_frame_error(const FrameError&) override { ++copied; }
    } h;
    h.chunk = in;
    auto dec = make_decoder(f);
    dec->feed(in, 0, h);
    CHECK(h.frames == 3);
    CHECK(h.copied == 0);
  }
}

TEST_CASE("frame_in_place writes the bytes encode_frame writes", "[framing]") {
  // Payload sizes around every change in the header's length (LSP digits).
  for (Framing f : kAll) {
    for (std::size_t n : {0u, 1u, 9u, 10u, 99u, 100u, 65536u, 1000000u}) {
      if (n == 0 && (f == Framing::Ndjson)) continue;  // ndjson payloads are non-empty
      INFO(framing_name(f) << ", payload of " << n << " bytes");
      const std::string payload(n, 'p');
      std::string want;
      encode_frame(f, payload, want);
      std::string buf(kFrameHeadroom, '?');
      buf += payload;
      CHECK(frame_in_place(f, buf) == want);
    }
  }
}

TEST_CASE("encode_frame then decode gives the payloads back", "[framing]") {
  std::vector<std::string> payloads = {
      "{}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}",
      "[1,2,3]", "\"Content-Length: 3\\r\\n\\r\\n\"", "{\"unicode\":\"\xc3\xa9\xe2\x82\xac\"}"};
  payloads.push_back("{\"big\":\"" + std::string(100000, 'z') + "\"}");
  for (Framing f : kAll) {
    INFO(framing_name(f));
    std::vector<std::string> ps = payloads;
    if (f == Framing::Len32Be || f == Framing::Len32Le) {  // any bytes at all
      ps.push_back(std::string("\0\n\r\n\r\n\xff", 7));
      ps.push_back("");
    }
    std::string wire;
    for (const auto& p : ps) encode_frame(f, p, wire);
    for (std::size_t step : {wire.size(), std::size_t{1}, std::size_t{4093}}) {
      INFO("chunk size " << step);
      auto dec = make_decoder(f);
      Recorder r;
      for (std::size_t at = 0; at < wire.size(); at += step)
        dec->feed(std::string_view(wire).substr(at, step), 0, r);
      dec->finish(r);
      REQUIRE(r.events.size() == ps.size());
      for (std::size_t i = 0; i < ps.size(); ++i) {
        CHECK(r.events[i].kind == Event::Frame);
        CHECK(r.events[i].bytes == ps[i]);
      }
    }
  }
  std::string out = "x";
  encode_frame(Framing::Lsp, "{}", out);
  CHECK(out == "xContent-Length: 2\r\n\r\n{}");
  out.clear();
  encode_frame(Framing::Ndjson, "{}", out);
  CHECK(out == "{}\n");
  out.clear();
  encode_frame(Framing::Len32Be, "{}", out);
  CHECK(out == std::string("\0\0\0\x02{}", 6));
  out.clear();
  encode_frame(Framing::Len32Le, "{}", out);
  CHECK(out == std::string("\x02\0\0\0{}", 6));
}

TEST_CASE("length mismatch at EOF names the byte counts", "[framing]") {
  for (Framing f : kAll) {
    if (f == Framing::Ndjson) continue;  // an unterminated line is a frame
    INFO(framing_name(f));
    auto dec = make_decoder(f);
    Recorder r;
    const std::string full = framed(f, "{\"abcdefgh\":1}");  // 14 bytes
    dec->feed(full.substr(0, full.size() - 11), 0, r);
    dec->finish(r);
    REQUIRE(r.events.size() == 1);
    CHECK(r.events[0].error.error.code == code::kParseError);
    CHECK(r.events[0].error.reply);
    CHECK(r.events[0].error.error.message == "length mismatch: EOF after 3 of 14 bytes");
    CHECK(r.events[0].error.offset == full.size() - 11);
    CHECK(dec->idle());
  }
}

TEST_CASE("framing names", "[framing]") {
  for (Framing f : kAll) {
    Framing g = Framing::Lsp;
    REQUIRE(parse_framing_name(framing_name(f), g));
    CHECK(g == f);
    CHECK(make_decoder(f)->framing() == f);
  }
  CHECK(std::string(framing_name(Framing::Len32Le)) == "len32le");
  Framing g = Framing::Lsp;
  CHECK(parse_framing_name("NDJSON", g));
  CHECK(g == Framing::Ndjson);
  CHECK_FALSE(parse_framing_name("json", g));
  CHECK_FALSE(parse_framing_name("", g));
  CHECK_FALSE(parse_framing_name("len32", g));
}

TEST_CASE("random chunking never changes the events", "[framing]") {
  // Streams glued from framing-relevant fragments, so that headers, limits,
  // resyncs and EOF cases all occur; fed whole vs. in random chunks.
  const char* const frags[] = {"Content-Length: ", "content-length:", "2", "9", " ", "\r\n",
                               "\r\n\r\n", "\n", "\r", "{}", "[1,2,3]", "X-A: b",
                               "Content-Type: application/vscode-jsonrpc; charset=utf-8",
                               "Content-Type: text/plain", ":", "<be>", "<le>", "\xff"};
  std::vector<std::string> pieces;
  for (const char* s : frags) pieces.emplace_back(s);
  pieces[15] = std::string("\0\0\0\2", 4);
  pieces[16] = std::string("\2\0\0\0", 4);
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  auto rnd = [&x](std::size_t n) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return static_cast<std::size_t>(x % n);
  };
  for (int round = 0; round < 2000; ++round) {
    std::string in;
    for (std::size_t k = rnd(24); k > 0; --k) in += pieces[rnd(pieces.size())];
    const Framing f = kAll[round % 4];
    FramingLimits l;
    l.max_frame = 1 + rnd(12);
    l.max_header = 4 + rnd(60);
    std::vector<std::size_t> cuts;
    for (std::size_t at = 0; at < in.size(); at += 1 + rnd(6)) cuts.push_back(at);
    INFO(framing_name(f) << " " << escape(in));
    const auto one = replay(f, l, in, {});
    const auto many = replay(f, l, in, cuts);
    REQUIRE(one.size() == many.size());
    for (std::size_t i = 0; i < one.size(); ++i) {
      CHECK(one[i].kind == many[i].kind);
      CHECK(one[i].bytes == many[i].bytes);
      CHECK(one[i].error.offset == many[i].error.offset);
      CHECK(one[i].error.error == many[i].error.error);
      if (one[i].kind == Event::Frame) CHECK(one[i].bytes.size() <= l.max_frame);
    }
  }
}
