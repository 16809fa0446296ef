// The read timeout of weft/framing.h's decoders (docs/framing.md F3): a
// partial frame, or an oversized payload being skipped, is given up when no
// complete frame arrives in time; the time is the caller's (a fake clock
// here: the core has none).
#include <catch2/catch.hpp>

#include <string>

#include "frame_recorder.h"
#include "weft/framing.h"

using namespace weft;
using test::Event;
using test::Recorder;
using test::framed;
using test::kAll;

TEST_CASE("read timeout discards a partial frame and the stream goes on", "[framing]") {
  for (Framing f : kAll) {
    INFO(framing_name(f));
    FramingLimits l;
    l.read_timeout = 30000;  // docs/framing.md F3
    auto dec = make_decoder(f, l);
    Recorder r;
    CHECK(dec->idle());
    CHECK(dec->deadline() == std::nullopt);

    // A whole frame, then the first 5 bytes of the next one at t=1000.
    const std::string whole = framed(f, "{\"a\":1}");
    const std::string part = framed(f, "{\"b\":2}", 5);
    dec->feed(whole + part, 1000, r);
    REQUIRE(r.events.size() == 1);
    CHECK_FALSE(dec->idle());
    CHECK(dec->deadline() == Millis{31000});
    // More bytes of the same frame do not restart its timer.
    dec->feed(framed(f, "{\"b\":2}").substr(5, 1), 20000, r);
    CHECK(dec->deadline() == Millis{31000});

    dec->expire(30999, r);
    CHECK(r.events.size() == 1);
    dec->expire(31000, r);
    REQUIRE(r.events.size() == 2);
    const FrameError& e = r.events[1].error;
    CHECK(r.events[1].kind == Event::Err);
    CHECK_FALSE(e.reply);
    CHECK(e.error.code == code::kParseError);
    CHECK(e.error.message == "read timeout: discarded partial frame after 6 bytes");
    CHECK(e.offset == whole.size() + 6);
    CHECK(dec->idle());
    CHECK(dec->deadline() == std::nullopt);
    dec->expire(99999, r);  // idle: nothing to expire
    CHECK(r.events.size() == 2);

    // The next bytes start a new frame, with a new timer.
    dec->feed(whole, 40000, r);
    REQUIRE(r.events.size() == 3);
    CHECK(r.events[2].bytes == "{\"a\":1}");
    dec->feed(part, 50000, r);
    CHECK(dec->deadline() == Millis{80000});
  }
}

TEST_CASE("read timeout also ends skipping an oversized payload", "[framing]") {
  for (Framing f : kAll) {
    INFO(framing_name(f));
    FramingLimits l;
    l.max_frame = 4;
    auto dec = make_decoder(f, l);
    Recorder r;
    const std::string big = framed(f, "[1,2,3,4,5,6,7,8]");
    dec->feed(big.substr(0, big.size() - 3), 0, r);  // oversize reported, skipping
    REQUIRE(r.events.size() == 1);
    CHECK(r.events[0].error.error.code == code::kInvalidRequest);
    CHECK(dec->deadline() == Millis{30000});
    dec->expire(30000, r);
    REQUIRE(r.events.size() == 2);
    CHECK_FALSE(r.events[1].error.reply);
    dec->feed(framed(f, "{}"), 30001, r);
    REQUIRE(r.events.size() == 3);
    CHECK(r.events[2].bytes == "{}");
  }
}

TEST_CASE("read_timeout 0 disables the deadline", "[framing]") {
  for (Framing f : kAll) {
    FramingLimits l;
    l.read_timeout = 0;
    auto dec = make_decoder(f, l);
    Recorder r;
    dec->feed(framed(f, "{\"x\":1}", 3), 0, r);
    CHECK_FALSE(dec->idle());
    CHECK(dec->deadline() == std::nullopt);
    dec->expire(1'000'000'000, r);
    CHECK(r.events.empty());
  }
}

TEST_CASE("blank Ndjson input does not start a frame or a timer", "[framing]") {
  auto dec = make_decoder(Framing::Ndjson);
  Recorder r;
  dec->feed(" \r\n\t  ", 5, r);
  CHECK(dec->idle());
  CHECK(dec->deadline() == std::nullopt);
  dec->feed(" {", 7, r);
  CHECK(dec->deadline() == Millis{30007});
}
