// Completes docs/streams.md's C++ snippet (at the SNIPPET line): `peer` is a
// Peer whose messages come back to itself (it serves "count" and calls it),
// and `use`, `on_done` and `now` are given. Afterwards the harness delivers
// the messages and grants credit as chunks are used, then checks that all
// 100 chunks arrived in order, followed by the answer.
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include <weft/weft.h>

int main() {
  std::deque<weft::Outgoing> wire;
  weft::PeerOptions options;
  options.send = [&](weft::Outgoing&& o) { wire.push_back(std::move(o)); };
  weft::Peer peer(std::move(options));
  const weft::Millis now = 0;
  std::vector<weft::json> got;
  auto use = [&](const weft::json& v) { got.push_back(v); };
  std::optional<weft::Result<weft::json>> answer;
  auto on_done = [&](weft::Result<weft::json> r) { answer = std::move(r); };
  {
// SNIPPET
    while (!answer) {
      if (wire.empty()) {
        if (!peer.grant(*id, 16)) return std::fputs("stream ended without an answer\n", stderr), 1;
        continue;
      }
      weft::Outgoing o = std::move(wire.front());
      wire.pop_front();
      weft::json v = weft::json::array();
      for (const auto& m : o.messages) v.push_back(weft::to_json_value(m));
      peer.receive(weft::Document{o.batch ? std::move(v) : std::move(v[0]), {}});
    }
  }
  if (!answer->ok() || answer->value() != weft::json{{"chunks", 100}})
    return std::fputs("wrong answer\n", stderr), 1;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != i) return std::fputs("chunks out of order\n", stderr), 1;
  if (got.size() != 100) return std::fprintf(stderr, "%zu chunks, not 100\n", got.size()), 1;
  return 0;
}
