// The `count` fixture (tests/vectors/peer/README.md): a streaming handler
// that writes the chunks 0 … n−1 (each with total n, the last final), the
// next whenever the caller has room, then answers {"chunks": n}; a failed
// write is its answer. Used by the vectors and the stream tests.
#pragma once

#include <memory>

#include "weft/weft.h"

namespace weft::test {

inline void serve_count(Peer& peer) {
  struct Producer : std::enable_shared_from_this<Producer> {
    Reply reply;
    std::uint64_t n = 0, next = 0;
    void go() {
      while (next < n) {
        auto w = reply.write(next, next + 1 == n, n);
        if (!w) return reply.error(w.error());
        ++next;
        if (!*w) return reply.on_writable([self = shared_from_this()] { self->go(); });
      }
      reply.ok(json{{"chunks", n}});
    }
  };
  ParamSpec spec;
  spec.params = {{"n", ParamType::Integer}};
  peer.method(
      "count",
      MethodHandler([](json params, Reply r, const CallInfo&) {
        auto p = std::make_shared<Producer>();
        p->n = params["n"].get<std::uint64_t>();
        p->reply = std::move(r);
        p->go();
      }),
      spec);
}

}  // namespace weft::test
