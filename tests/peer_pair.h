// Two Peers wired back to back through queues, for tests of what travels
// between them (streams, handshake). Shared by the tests that need it.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft::test {

// Two peers whose messages travel through queues, delivered by run(): what
// each side sends is also kept as JSON text.
struct Pair {
  std::deque<Outgoing> to_server, to_client;
  std::vector<std::string> from_server, from_client;
  std::vector<std::string> discarded;  // by the server
  Millis now = 0;
  bool record = true;  // keep the JSON text of what is sent
  std::unique_ptr<Peer> client, server;

  // `tweak` adjusts each side's options before its Peer is made.
  explicit Pair(PeerLimits server_limits = {},
                std::function<void(PeerOptions&, bool server)> tweak = nullptr) {
    PeerOptions c;
    c.send = [this](Outgoing&& o) {
      std::string t;
      if (record) write_json(o, t);
      from_client.push_back(t);
      to_server.push_back(std::move(o));
    };
    c.clock = [this] { return now; };
    if (tweak) tweak(c, false);
    client = std::make_unique<Peer>(std::move(c));
    PeerOptions s;
    s.limits = server_limits;
    s.send = [this](Outgoing&& o) {
      std::string t;
      if (record) write_json(o, t);
      from_server.push_back(t);
      to_client.push_back(std::move(o));
    };
    s.discard = [this](Outgoing&& o) {
      std::string t;
      write_json(o, t);
      discarded.push_back(t);
    };
    if (tweak) tweak(s, true);
    server = std::make_unique<Peer>(std::move(s));
  }
  static Incoming incoming(Outgoing&& o) {
    Incoming in;
    in.batch = o.batch;
    for (auto& m : o.messages)
      std::visit([&](auto&& v) { in.items.emplace_back(std::move(v)); }, std::move(m));
    return in;
  }
  // Delivers until both queues are empty.
  void run() {
    while (!to_server.empty() || !to_client.empty()) {
      if (!to_server.empty()) {
        auto o = std::move(to_server.front());
        to_server.pop_front();
        server->receive(incoming(std::move(o)));
      }
      if (!to_client.empty()) {
        auto o = std::move(to_client.front());
        to_client.pop_front();
        client->receive(incoming(std::move(o)));
      }
    }
  }
};

}  // namespace weft::test
