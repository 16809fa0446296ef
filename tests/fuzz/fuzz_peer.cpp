// Arbitrary bytes into a whole Connection (framer → codec → Peer), with the
// demo methods served and calls of its own in flight, so validation, batch
// collection, correlation and timeouts all meet hostile input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "demo.h"
#include "weft/weft.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace weft;
  if (size < 2) return 0;
  const std::uint8_t sel = data[0], chunk = data[1];
  data += 2;
  size -= 2;

  ConnectionOptions o;
  o.framing = static_cast<Framing>(sel & 3);
  o.codec = (sel & 4) ? CodecKind::MessagePack : CodecKind::Json;
  o.framing_limits.max_frame = 4096;
  o.codec_limits.max_depth = 16;
  o.peer_limits.max_batch = 64;
  o.peer_limits.max_in_flight = 8;
  std::size_t written = 0;
  o.write = [&](std::string_view b) { written += b.size(); };
  Connection conn(std::move(o));
  register_demo_methods(conn.peer());
  std::vector<Reply> parked;  // async handler whose answers come at the end
  conn.peer().method("park", MethodHandler([&](json, Reply r, const CallInfo&) { parked.push_back(std::move(r)); }));

  // Our own calls, so incoming responses have something to match.
  for (int i = 0; i < 4; ++i)
    (void)conn.peer().call("remote", json::array({i}), [](Result<json>) {}, CallOptions{i * 10}, 0);

  const std::size_t step = 1 + (chunk % 64);
  Millis now = 0;
  for (std::size_t off = 0; off < size; off += step) {
    const std::size_t n = std::min(step, size - off);
    conn.feed(std::string_view(reinterpret_cast<const char*>(data + off), n), now);
    now += 7;
    conn.advance(now);
  }
  conn.finish(now);
  for (auto& r : parked) r.ok(1);
  conn.advance(now + 100000);
  conn.close();
  return 0;
}
