// The time a call's deadline counts from (js/timer.js callClock): the system
// clock read at most once per wall-clock millisecond, never earlier than a
// fresh reading; a fake Date or another clock read as they are. And the
// endpoint's one timer (DeadlineTimer) with a deadline beyond setTimeout's reach.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeadlineTimer, callClock, systemClock } from '../../js/timer.js';

// Clock rates may differ by a few parts per million (NTP): a little slack.
const SLACK = 0.05;

function spin(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test('system clock: a call starts no earlier than now and at most 1 ms later', () => {
  const now = callClock(systemClock);
  for (let i = 0; i < 20000; i++) {
    const before = performance.now();
    const t = now();
    const after = performance.now();
    assert.ok(t >= before - SLACK, `call time ${t} is before the time now ${before}`);
    assert.ok(t <= after + 1 + SLACK, `call time ${t} is more than 1 ms after ${after}`);
  }
});

test('system clock: the time moves on with the wall clock', () => {
  const now = callClock(systemClock);
  const t1 = now();
  spin(5);
  const t2 = now();
  assert.ok(t2 - t1 >= 4, `moved ${t2 - t1} ms in 5`);
});

test('system clock: a replaced Date.now (a test\'s fake timers) gets a reading per call', () => {
  const now = callClock(systemClock);
  const real = Date.now;
  Date.now = () => 0;  // frozen
  try {
    const t1 = now();
    spin(3);
    const t2 = now();
    assert.ok(t2 - t1 >= 2.9, `a frozen Date.now froze the call time (moved ${t2 - t1} ms in 3)`);
  } finally {
    Date.now = real;
  }
});

test('another clock (simulated time) is read as it is', () => {
  let t = 42;
  const now = callClock({ now: () => t, setTimeout, clearTimeout });
  assert.equal(now(), 42);
  t = 43.5;
  assert.equal(now(), 43.5);
});

test('a deadline further off than setTimeout can wait is armed at its longest delay, and fires once due', () => {
  let now = 0;
  const armed = [];
  const clock = {
    now: () => now,
    setTimeout: (fn, ms) => { armed.push({ fn, ms }); return armed.length; },
    clearTimeout: () => {},
  };
  const fired = [];
  const days30 = 30 * 24 * 3600 * 1000;
  const timer = new DeadlineTimer(clock, (t) => {
    fired.push(t);
    if (t < days30) timer.arm(days30, t);  // as the endpoint re-arms from advance()'s answer
  });
  timer.arm(days30, 0);
  assert.deepEqual(armed.map((a) => a.ms), [2 ** 31 - 1]);
  now = 2 ** 31 - 1;
  armed[0].fn();
  assert.deepEqual(armed.map((a) => a.ms), [2 ** 31 - 1, days30 - (2 ** 31 - 1)]);
  now = days30;
  armed[1].fn();
  assert.deepEqual(fired, [2 ** 31 - 1, days30]);
});
