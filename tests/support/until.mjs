// Waits, turn by turn of the event loop, until `cond()` holds: tests wait on
// the state they need, never on a fixed time. Fails naming `what` when the
// condition is still false after `turns` turns (far more than any pending
// timer or message needs).
export async function until(cond, what, turns = 200000) {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`${what}: still not the case after ${turns} event-loop turns`);
}
