// PolicyLoop: the test Loop (peer_loop.h) with the PeerOptions a host sets
// for its policies, shared by the policy tests.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "peer_loop.h"
#include "weft/weft.h"

namespace weft::test {

inline std::string text_of(const Outgoing& o) {
  std::string s;
  write_json(o, s);
  return s;
}

// Loop (peer_loop.h) rebuilt with the PeerOptions it leaves unset (role,
// ignore_foreign, discard, inspect): also keeps the full diagnostics, what
// was discarded (as JSON text) and the last Outgoing sent (for undelivered()).
struct PolicyLoop : Loop {
  std::vector<Diagnostic> full;
  std::vector<std::string> discarded;
  std::vector<Outgoing> out;
  explicit PolicyLoop(const std::function<void(PeerOptions&)>& set = {}) {
    PeerOptions o;
    o.send = [this](Outgoing&& m) {
      sent.push_back(text_of(m));
      out.push_back(std::move(m));
    };
    o.diagnostic = [this](const Diagnostic& d) {
      diags.push_back(d.kind);
      full.push_back(d);
    };
    o.discard = [this](Outgoing&& m) { discarded.push_back(text_of(m)); };
    if (set) set(o);
    peer = std::make_unique<Peer>(std::move(o));
  }
  // The peer may call discard/diagnostic while closing: it goes before our members.
  ~PolicyLoop() { peer.reset(); }
  std::size_t count(Diagnostic::Kind k) const { return std::count(diags.begin(), diags.end(), k); }
};

// Registers "echo" (sync: returns params) and counts how often it ran.
inline void add_echo(Peer& p, int& runs) {
  p.method("echo", SyncHandler([&runs](const json& params) -> Result<json> {
             ++runs;
             return params;
           }));
}

}  // namespace weft::test
