// Drain and retry across the boundary (docs/protocol.md): a JS endpoint
// starting a graceful drain, and the one retry rule (weft::retry_delay) that
// JS asks before trying a call again.
#include <algorithm>
#include <emscripten.h>

#include "calls.h"
#include "host.h"

using namespace weft;
using namespace weft::wasm;

extern "C" {

// Starts a drain: the reason in the input buffer [0, rlen), times in ms.
EMSCRIPTEN_KEEPALIVE void weft_drain(int h, std::size_t rlen, double downtime, double reconnect_after) {
  Host* x = host(h);
  if (!x) return;
  DrainNotice n;
  n.reason.assign(input().data(), rlen);
  n.downtime = downtime > 0 ? static_cast<Millis>(downtime) : 0;
  n.reconnect_after = reconnect_after > 0 ? static_cast<Millis>(reconnect_after) : 0;
  x->peer->drain(std::move(n));
}

// The delay (ms) before retrying a call whose attempt `attempt` failed with
// `code` (retry_after: the error data's, or < 0), or -1: do not retry.
EMSCRIPTEN_KEEPALIVE double weft_retry_delay(double code, int attempt, double retry_after, double jitter) {
  const std::optional<int> c = error_code_from(code);
  if (!c) return -1;
  Error e(*c, std::string());
  if (retry_after >= 0) e.data = json{{"retry_after", retry_after}};
  const auto d = retry_delay(e, attempt, jitter);
  return d ? static_cast<double>(*d) : -1;
}

}  // extern "C"

extern "C" {

// Sends rpc.handshake with the offer as JSON in the input buffer [0, hlen);
// call `token` settles with the agreement as JSON, or the error. Returns
// the id, or 0 with the error at weft_error().
EMSCRIPTEN_KEEPALIVE double weft_handshake(int h, int token, std::size_t hlen, double timeout, double now) {
  Host* x = host(h);
  if (!x) return 0;
  auto offer = parse_handshake(json::parse(input().data(), input().data() + hlen, nullptr, false));
  if (!offer) {
    set_error(offer.error());
    return 0;
  }
  // The JavaScript build does not compress (docs/protocol.md "Compression"):
  // it never offers it. "metrics" it offers when asked (docs/protocol.md "Metrics").
  auto& caps = offer->capabilities;
  caps.erase(std::remove(caps.begin(), caps.end(), "compression"), caps.end());
  offer->compression_preference.clear();
  CallCallback settle = settle_to(h, token);
  const bool outer = x->calling;
  x->calling = false;  // its request is not a weft_call's to post (host.cpp)
  auto r = x->peer->handshake(
      std::move(*offer),
      [settle](Result<Handshake> a) { settle(a ? Result<json>(handshake_json(*a)) : Result<json>(a.error())); },
      call_options(timeout), to_ms(now));
  if ((x = host(h))) x->calling = outer;
  if (!r.ok()) {
    set_error(r.error());
    return 0;
  }
  if (x) note_deadline(x);
  return static_cast<double>(r->as_int());
}

}  // extern "C"
