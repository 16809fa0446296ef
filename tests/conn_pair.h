// Two Connections wired back to back through byte strings, for tests of
// what a handshake switches on over a byte stream (metrics, compression).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft::test {

// One end: its options, the bytes it wrote, its diagnostics.
struct ConnEnd {
  std::string wire;
  std::vector<Diagnostic> diags;
  std::unique_ptr<Connection> conn;
  explicit ConnEnd(ConnectionOptions o) {
    o.write = [this](std::string_view b) { wire.append(b); };
    o.diagnostic = [this](const Diagnostic& d) { diags.push_back(d); };
    conn = std::make_unique<Connection>(std::move(o));
  }
  ConnEnd(const ConnEnd&) = delete;  // the callbacks point at this end
  ConnEnd& operator=(const ConnEnd&) = delete;
  std::string take() { return std::exchange(wire, {}); }
  Peer& peer() { return conn->peer(); }
};

// A client and a server end; `pump()` carries bytes both ways until quiet.
struct ConnPair {
  ConnEnd client, server;
  ConnPair(ConnectionOptions c, ConnectionOptions s) : client(std::move(c)), server(std::move(s)) {}
  void pump() {
    while (!client.wire.empty() || !server.wire.empty()) {
      if (!client.wire.empty()) server.conn->feed(client.take(), 0);
      if (!server.wire.empty()) client.conn->feed(server.take(), 0);
    }
  }
  // Runs a handshake offering `caps`; returns what the client agreed on.
  Result<Handshake> handshake(std::vector<std::string> caps) {
    Handshake mine;
    mine.capabilities = std::move(caps);
    std::optional<Result<Handshake>> got;
    auto r = client.conn->handshake(mine, [&](Result<Handshake> h) { got = std::move(h); }, {}, 0);
    if (!r) return r.error();
    pump();
    if (!got) return Error(code::kInternalError, "no handshake answer");
    return std::move(*got);
  }
};

// Options of a server end that serves rpc.handshake with `caps`.
inline ConnectionOptions serving(Framing f, CodecKind c, std::vector<std::string> caps) {
  ConnectionOptions o;
  o.framing = f;
  o.codec = c;
  Handshake h;
  h.capabilities = std::move(caps);
  h.session = "s-1";
  o.handshake = h;
  return o;
}

inline ConnectionOptions plain(Framing f, CodecKind c) {
  ConnectionOptions o;
  o.framing = f;
  o.codec = c;
  return o;
}

}  // namespace weft::test
