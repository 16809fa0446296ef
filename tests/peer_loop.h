// A Peer wired to vectors: what it sends (as JSON text) and its diagnostics.
// Shared by the Peer tests that need code rather than a vector.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft::test {

struct Loop {
  std::vector<std::string> sent;
  std::vector<Diagnostic::Kind> diags;
  std::unique_ptr<Peer> peer;
  explicit Loop(PeerLimits limits = {}, std::optional<Millis> default_timeout = std::nullopt)
      : Loop([&](PeerOptions& o) {
          o.limits = limits;
          o.default_timeout = default_timeout;
        }) {}
  // `set` adjusts the options after `send` and `diagnostic` are wired.
  explicit Loop(const std::function<void(PeerOptions&)>& set) {
    PeerOptions o;
    o.send = [this](Outgoing&& m) {
      std::string s;
      write_json(m, s);
      sent.push_back(std::move(s));
    };
    o.diagnostic = [this](const Diagnostic& d) { diags.push_back(d.kind); };
    if (set) set(o);
    peer = std::make_unique<Peer>(std::move(o));
  }
  // One decoded message, received at `now`.
  void in(const std::string& text, Millis now = 0) {
    Document d;
    d.value = json::parse(text);
    peer->receive(std::move(d));
  }
};

}  // namespace weft::test
