// Test-only exports (the weft_wasm_test target, never shipped): the demo
// methods of core/demo served through the production object path, so the
// shared vectors run on the WebAssembly build with the same C++ handlers as
// natively. Each demo method is bridged: the host's Peer validates the
// request (with the method's own ParamSpec), the params are materialized
// from JS, and a private native Peer with the demo methods answers it.
#include <emscripten.h>

#include <map>
#include <memory>

#include "demo.h"
#include "host.h"
#include "payloads.h"

using namespace weft;
using namespace weft::wasm;

namespace {

std::map<int, std::unique_ptr<Peer>> g_demo;  // host handle → demo peer

}  // namespace

extern "C" {

EMSCRIPTEN_KEEPALIVE int weft_test_register_demo(int h) {
  Host* x = host(h);
  if (!x) return 0;
  auto answers = std::make_shared<std::vector<Response>>();
  PeerOptions o;
  o.send = [answers](Outgoing&& out) {
    for (Message& m : out.messages)
      if (auto* r = std::get_if<Response>(&m)) answers->push_back(std::move(*r));
  };
  auto demo = std::make_unique<Peer>(std::move(o));
  register_demo_methods(*demo);
  Peer* inner = demo.get();
  for (const MethodInfo& m : inner->methods()) {
    x->peer->method(
        m.name,
        MethodHandler([h, inner, answers, name = m.name](json params, Reply reply, const CallInfo&) {
          materialize(h, params);
          Incoming in;
          std::optional<json> p;
          if (!params.is_null()) p = std::move(params);
          in.items.emplace_back(Request{Id::integer(1), name, std::move(p)});
          answers->clear();
          inner->receive(std::move(in));
          if (answers->empty()) return reply.error(Error(code::kInternalError, "demo gave no answer"));
          Response r = std::move(answers->front());
          if (r.is_error()) reply.error(std::get<Error>(std::move(r.outcome)));
          else reply.ok(std::get<json>(std::move(r.outcome)));
        }),
        m.spec, m.description);
  }
  g_demo[h] = std::move(demo);
  return 1;
}

// weft::chunk_size of the JSON text in the input buffer [0, n): what
// js/size.js must agree with (tests/js/streams.test.mjs). -1: not JSON.
EMSCRIPTEN_KEEPALIVE double weft_test_chunk_size(std::size_t n) {
  json v = json::parse(input().data(), input().data() + n, nullptr, false);
  return v.is_discarded() ? -1 : static_cast<double>(chunk_size(v));
}

}  // extern "C"
