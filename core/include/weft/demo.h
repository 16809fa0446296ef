// weft/demo.h — the example methods of the JSON-RPC 2.0 spec (§7), shared by
// the test vectors (native and WebAssembly), `weft serve --demo` and the web demo.
//
//   subtract   [minuend, subtrahend] or {"minuend","subtrahend"} → number
//   add        [a, b] or {"a","b"} → number (a + b; integers stay integers)
//   sum        [numbers...] → number
//   update     notification sink (any params)
//   notify_hello, notify_sum   notification sinks
//   get_data   → ["hello", 5]
//   echo       → params unchanged (null when absent)
//   fail       {"code","message","data"?} → exactly that error
// Wrong parameter types → -32602 from the core's ParamSpec checks.
// `sleep` is not here: it needs a timer, which only a host has.
#pragma once

#include "weft/peer.h"

namespace weft {

void register_demo_methods(Peer& peer);

}  // namespace weft
