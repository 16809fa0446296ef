// weft/time.h — time as the core sees it: a value the host supplies.
//
// The core has no clock. Hosts pass a monotonic "now" in milliseconds to the
// calls that start or check deadlines (Peer::call/advance, framing read
// timeouts) and ask for the next deadline to arm their one timer.
#pragma once

#include <cstdint>
#include <limits>

namespace weft {

using Millis = std::int64_t;  // host-supplied monotonic time, milliseconds

namespace detail {
// now + t, saturating: a timeout far past any clock (INT64_MAX) is a
// deadline that never comes, not a signed overflow into the past.
inline Millis later(Millis now, Millis t) {
  Millis r;
  if (!__builtin_add_overflow(now, t, &r)) return r;
  return t > 0 ? std::numeric_limits<Millis>::max() : std::numeric_limits<Millis>::min();
}
}  // namespace detail

}  // namespace weft
