// weft/time.h — time as the core sees it: a value the host supplies.
//
// The core has no clock. Hosts pass a monotonic "now" in milliseconds to the
// calls that start or check deadlines (Peer::call/advance, framing read
// timeouts) and ask for the next deadline to arm their one timer.
#pragma once

#include <cstdint>

namespace weft {

using Millis = std::int64_t;  // host-supplied monotonic time, milliseconds

}  // namespace weft
