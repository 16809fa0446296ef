// Streamed results and progress across the boundary (docs/streams.md): the
// exports a JS handler writes chunks and progress through, the caller's
// credit grants, and the hooks that hand chunks and progress values to JS.
// The core keeps the credit, the order and the queue; this only moves values.
#include <emscripten.h>

#include <algorithm>

#include "abi.h"
#include "calls.h"
#include "host.h"
#include "payloads.h"

// clang-format off
EM_JS(void, js_chunk, (int h, int token, double seq, int final, double total, double slot, const char* p, size_t n),
      { Module.weft.chunk(h, token, seq, final, total, slot, p, n); });
EM_JS(void, js_progress, (int h, int token, double slot, const char* p, size_t n),
      { Module.weft.progress(h, token, slot, p, n); });
EM_JS(void, js_writable, (int h, int token), { Module.weft.writable(h, token); });
// clang-format on

namespace weft::wasm {

ChunkHandler chunks_to(int h, int token) {
  return [h, token](Chunk&& c) {
    Host* x = host(h);
    if (!x) return;
    const double slot = x->payload(c.value);
    js_chunk(h, token, static_cast<double>(c.seq), c.final ? 1 : 0,
             c.total ? static_cast<double>(*c.total) : abi::TOTAL_NONE, slot, x->tmp.data(),
             slot == abi::kPAY_TEXT ? x->tmp.size() : 0);
  };
}

ProgressHandler progress_to(int h, int token) {
  return [h, token](json v) {
    Host* x = host(h);
    if (!x) return;
    const double slot = x->payload(v);
    js_progress(h, token, slot, x->tmp.data(), slot == abi::kPAY_TEXT ? x->tmp.size() : 0);
  };
}

}  // namespace weft::wasm

using namespace weft;
using namespace weft::wasm;

extern "C" {

// Lets the other side send `n` more chunks of streamed call `id`. 1 if it
// is a stream still pending.
EMSCRIPTEN_KEEPALIVE int weft_grant(int h, double id, double n) {
  Host* x = host(h);
  if (!x || !(n >= 0)) return 0;
  const auto credit = static_cast<std::uint32_t>(std::min(n, 4294967295.0));
  return x->peer->grant(Id::integer(static_cast<std::int64_t>(id)), credit) ? 1 : 0;
}

// What the caller of request `token` opened: REPLY_STREAMING | REPLY_PROGRESS.
EMSCRIPTEN_KEEPALIVE int weft_reply_state(int h, int token) {
  Host* x = host(h);
  if (!x || !x->has(token)) return 0;
  const Reply& r = x->replies[token];
  return (r.streaming() ? abi::REPLY_STREAMING : 0) | (r.wants_progress() ? abi::REPLY_PROGRESS : 0);
}

// Writes payload `handle` as the next chunk of request `token`: WRITE_MORE,
// WRITE_WAIT (then js_writable once weft_reply_on_writable was asked), or
// WRITE_REFUSED with the error at weft_error(). The handle is the core's
// either way. total: TOTAL_NONE or the count.
EMSCRIPTEN_KEEPALIVE int weft_reply_write(int h, int token, double handle, int final, double total) {
  Host* x = host(h);
  if (!x) return abi::WRITE_REFUSED;
  if (!x->has(token)) {
    std::optional<json> v = value_marker(handle);
    give_back(h, v);
    set_error(Error(code::kClosed, "stream: the request is answered or cancelled"));
    return abi::WRITE_REFUSED;
  }
  std::optional<std::uint64_t> t;
  if (total >= 0) t = static_cast<std::uint64_t>(total);
  Result<bool> r = x->replies[token].write(value_marker(handle), final != 0, t);
  if (!r.ok()) {
    set_error(r.error());
    return abi::WRITE_REFUSED;
  }
  return *r ? abi::WRITE_MORE : abi::WRITE_WAIT;
}

// js_writable(h, token) once the caller has room again.
EMSCRIPTEN_KEEPALIVE void weft_reply_on_writable(int h, int token) {
  Host* x = host(h);
  if (!x || !x->has(token)) return;
  x->replies[token].on_writable([h, token] { js_writable(h, token); });
}

// $/progress with payload `handle` for request `token` (dropped, and the
// handle released, when the caller did not ask for progress).
EMSCRIPTEN_KEEPALIVE void weft_reply_progress(int h, int token, double handle) {
  Host* x = host(h);
  if (!x) return;
  if (!x->has(token)) {
    std::optional<json> v = value_marker(handle);
    give_back(h, v);
    return;
  }
  x->replies[token].progress(value_marker(handle));
}

}  // extern "C"
