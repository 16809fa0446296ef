// demo.h — the example methods of the JSON-RPC 2.0 spec (§7), shared by the
// test vectors (native and WebAssembly), `weft serve --demo` and the web demo.
// Not part of the core library: link weft::demo (CMake) to get them.
//
//   subtract   [minuend, subtrahend] or {"minuend","subtrahend"} → number
//   add        [a, b] or {"a","b"} → number (a + b; integers stay integers)
//   sum        [numbers...] → number
//   update, notify_hello, notify_sum
//              sinks for the spec's notifications (any params). §7 only ever
//              notifies them, but they are methods: a request to them is
//              answered with result null (a method that exists is never
//              -32601), a notification is not answered (§4.1).
//   get_data   → ["hello", 5]
//   echo       → params unchanged (null when absent)
//   fail       {"code","message","data"?} → exactly that error; "code" is any
//              integer that fits 32 bits (§5.1: "A Number that indicates the
//              error type"), otherwise -32602
// Wrong parameter types → -32602 from the core's ParamSpec checks.
// `sleep` is not here: it needs a timer, which only a host has.
#pragma once

#include "weft/peer.h"

namespace weft {

void register_demo_methods(Peer& peer);

}  // namespace weft
