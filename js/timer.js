// One timer per endpoint, for the core's next deadline (the core has no
// clock: the host supplies time). A timer that fires no later than the
// deadline is kept rather than replaced (the core's advance() decides what
// is due, and the timer is re-armed from its answer), and one left over when
// nothing is pending is kept too — unref'd in Node, so that it does not keep
// the process alive: calls that come and go would otherwise set and clear a
// timer each (a tenth of a sequential call's time in Chromium). A kept timer
// fires at most once more, finds nothing due, and is not re-armed.

/** The system clock; Endpoint option `clock` replaces it (e.g. simulated time). */
export const systemClock = {
  now: typeof performance === 'object' ? () => performance.now() : () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
};

// A call's deadline counts from here. performance.now() costs 170-400 ns in
// Chromium (Date.now() ~50); deadlines are whole ms, so it is read once per
// wall-clock ms: while Date.now() is unchanged, less than 1 ms has passed
// since the reading, and reading + 1 is never earlier than now. A fake
// Date.now (tests) gets a reading per call.
const nativeDateNow = Date.now;
const dateIsNative = typeof performance === 'object' &&
  /\[native code\]/.test(Function.prototype.toString.call(nativeDateNow));
let readAtMs = NaN;
let reading = 0;
function systemCallNow() {
  if (!dateIsNative || Date.now !== nativeDateNow) return systemClock.now();
  const ms = nativeDateNow();
  if (ms !== readAtMs) {
    readAtMs = ms;
    reading = performance.now();
  }
  return reading + 1;
}

/** `clock`'s time for call deadlines (see systemCallNow; any other clock: its now()). */
export function callClock(clock) {
  return clock === systemClock ? systemCallNow : () => clock.now();
}

// The longest delay setTimeout takes: a longer one fires at once (Node, and
// browsers, read it as 1 ms). A later deadline fires early, finds nothing
// due, and is armed again.
const MAX_DELAY = 2 ** 31 - 1;

export class DeadlineTimer {
  /** `fire(now)` runs when the armed deadline passes; it re-arms as needed. */
  constructor(clock, fire) {
    this.clock = clock;
    this.fire = fire;
    this.timer = null;
    this.armedAt = -1;
    this.idle = false;  // left running with nothing pending (unref'd)
  }
  /** Arms for `deadline` (< 0: none), as seen at time `t`. */
  arm(deadline, t) {
    if (deadline < 0) return this.disarm();
    if (this.timer !== null) {
      if (this.armedAt <= deadline) {
        if (this.idle) { this.idle = false; this.timer.ref?.(); }
        return;
      }
      this.clock.clearTimeout(this.timer);
    }
    this.idle = false;
    this.armedAt = deadline;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.armedAt = -1;
      this.idle = false;
      this.fire(this.clock.now());
    }, Math.min(MAX_DELAY, Math.max(0, Math.ceil(deadline - (t ?? this.clock.now())))));
  }
  /** Nothing is pending: keep the timer but let the process exit. */
  rest() {
    if (this.timer === null || this.idle) return;
    this.idle = true;
    this.timer.unref?.();
  }
  disarm() {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.armedAt = -1;
    this.idle = false;
  }
}
