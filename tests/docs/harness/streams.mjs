// Completes docs/streams.md's weft-rpc snippet (at the SNIPPET line): the
// `server` and `client` it uses, over a MessageChannel; the `readLines` it
// reads; the `build` method it calls. Afterwards, what it printed is checked.
import assert from 'node:assert/strict';
import { JSONRPCClient, JSONRPCServer, portTransport } from 'weft-rpc';

const { port1, port2 } = new MessageChannel();
const server = new JSONRPCServer(portTransport(port1));
const client = new JSONRPCClient(portTransport(port2));
async function* readLines(path) {
  for (const word of ['one', 'two', 'three']) yield `${path}: ${word}`;
}
server.method('build', async (params, ctx) => {
  ctx.progress({ percent: 40 });
  return 'built';
});
const printed = [];
const print = console.log;
console.log = (...args) => { printed.push(args); print(...args); };

// SNIPPET

assert.deepEqual(printed, [['a.txt: one'], ['a.txt: two'], ['a.txt: three'], [{ lines: 3 }], [{ percent: 40 }]]);
client.destroy();
server.destroy();
