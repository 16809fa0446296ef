// `weft serve --http`: the MCP Streamable HTTP transport (revision
// 2025-11-25; docs/transports.md, "Streamable HTTP"), driven by the MCP
// TypeScript SDK's client transport and by curl for the raw status codes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WEFT_BIN, runCli, within } from './helpers.mjs';
import { startWeb } from './web-server.mjs';

const T = { timeout: 30000 };
const ACCEPT = 'application/json, text/event-stream';
let srv;
before(async () => { srv = await startWeb(['--http', '127.0.0.1:0', '--demo', '--max-message', '2000', '--allow-origin', 'http://page.example']); });
after(async () => { await srv.stop(); });

// curl → { status, headers (lower-case names), body }.
function curl(args, url = srv.http) {
  const out = execFileSync('curl', ['-s', '-i', '--max-time', '5', ...args, url], { encoding: 'utf8' });
  const [head, ...rest] = out.split('\r\n\r\n');
  const lines = head.split('\r\n');
  const headers = {};
  for (const l of lines.slice(1)) { const i = l.indexOf(':'); headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim(); }
  return { status: Number(lines[0].split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}
const post = (body, headers = {}) => curl(['-X', 'POST', '-H', `Accept: ${ACCEPT}`, '-H', 'Content-Type: application/json',
  ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), '--data-binary', typeof body === 'string' ? body : JSON.stringify(body)]);
// A POST of `body` to server `url`, in session `sid` if given.
const postTo = (url, body, sid) => curl(['-X', 'POST', '-H', `Accept: ${ACCEPT}`, '-H', 'Content-Type: application/json',
  ...(sid ? ['-H', `Mcp-Session-Id: ${sid}`] : []), '--data-binary', JSON.stringify(body)], url);
const PING = { jsonrpc: '2.0', id: 1, method: 'rpc.ping' };
function newSession() {
  const r = post({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' });
  assert.equal(r.status, 200);
  return r.headers['mcp-session-id'];
}

test('the MCP SDK client transport: requests answered (JSON and SSE), notifications accepted, server messages on the GET stream, DELETE', T, async () => {
  const t = new StreamableHTTPClientTransport(new URL(srv.http));
  const inbox = [];
  let wake = () => {};
  t.onmessage = (m) => { inbox.push(m); wake(); };
  const errors = [];
  t.onerror = (e) => errors.push(e);
  const next = (pred) => within(5000, new Promise((resolve) => {
    const check = () => { const i = inbox.findIndex(pred); if (i >= 0) { wake = () => {}; resolve(inbox.splice(i, 1)[0]); } };
    wake = check;
    check();
  }), 'message');
  await t.start();
  // (MCP results are objects: the SDK's schema refuses others.)
  await t.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: { a: 42 } });
  assert.deepEqual(await next((m) => m.id === 1), { jsonrpc: '2.0', result: { a: 42 }, id: 1 });
  assert.match(t.sessionId, /^[0-9a-f]{32}$/);
  // Answered later than the POST: an SSE stream carries the answer.
  await t.send({ jsonrpc: '2.0', id: 2, method: 'slow', params: { ms: 100 } });
  assert.deepEqual((await next((m) => m.id === 2)).result, { where: 'native', slept: 100 });
  // The SDK opens the GET stream after notifications/initialized (202).
  await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await t.send({ jsonrpc: '2.0', method: 'note', params: { text: 'over HTTP' } });
  assert.deepEqual((await next((m) => m.method === 'note.ack')).params, { where: 'native', count: 1, text: 'over HTTP' });
  const sid = t.sessionId;
  await t.terminateSession();
  await t.close();
  assert.equal(post({ jsonrpc: '2.0', id: 3, method: 'rpc.ping' }, { 'Mcp-Session-Id': sid }).status, 404);
  assert.deepEqual(errors.filter((e) => !/abort/i.test(String(e))), []);
});

test('POST of a request without a session: 200, a JSON body and a new Mcp-Session-Id (the curl of docs/transports.md)', T, () => {
  const r = post({ jsonrpc: '2.0', id: 1, method: 'subtract', params: [42, 23] });
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.match(r.headers['mcp-session-id'], /^[0-9a-f]{32}$/);
  assert.deepEqual(JSON.parse(r.body), { jsonrpc: '2.0', result: 19, id: 1 });
});

test('POST of a notification or a response in a session: 202 with no body', T, () => {
  const sid = newSession();
  for (const m of [{ jsonrpc: '2.0', method: 'update', params: [1] }, { jsonrpc: '2.0', id: 99, result: 1 }]) {
    const r = post(m, { 'Mcp-Session-Id': sid });
    assert.equal(r.status, 202);
    assert.equal(r.body, '');
  }
});

test('400: a notification without Mcp-Session-Id, a batch, an invalid message, an unsupported MCP-Protocol-Version', T, () => {
  assert.equal(post({ jsonrpc: '2.0', method: 'update' }).status, 400);
  const batch = post([{ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }]);
  assert.equal(batch.status, 400);
  assert.equal(JSON.parse(batch.body).error.code, -32600);
  const parse = post('{"jsonrpc":');
  assert.equal(parse.status, 400);
  assert.deepEqual([JSON.parse(parse.body).id, JSON.parse(parse.body).error.code], [null, -32700]);
  assert.equal(post({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }, { 'MCP-Protocol-Version': '1999-01-01' }).status, 400);
  assert.equal(post({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }, { 'MCP-Protocol-Version': '2025-11-25' }).status, 200);
  assert.equal(curl(['-H', 'Accept: text/event-stream']).status, 400);  // GET without a session
});

test('403: an Origin not in --allow-origin, with a JSON-RPC error body without id', T, () => {
  const r = post({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }, { Origin: 'http://evil.example' });
  assert.equal(r.status, 403);
  assert.equal(JSON.parse(r.body).id, null);
  assert.equal(post({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }, { Origin: 'http://page.example' }).status, 200);
});

test('CORS: an allowed origin gets a preflight answer and may read Mcp-Session-Id; others get 403', T, () => {
  const pre = curl(['-X', 'OPTIONS', '-H', 'Origin: http://page.example', '-H', 'Access-Control-Request-Method: POST',
    '-H', 'Access-Control-Request-Headers: content-type, mcp-session-id']);
  assert.equal(pre.status, 204);
  assert.equal(pre.headers['access-control-allow-origin'], 'http://page.example');
  assert.match(pre.headers['access-control-allow-methods'], /POST/);
  assert.match(pre.headers['access-control-allow-headers'], /Mcp-Session-Id/);
  const r = post({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }, { Origin: 'http://page.example' });
  assert.equal(r.headers['access-control-allow-origin'], 'http://page.example');
  assert.equal(r.headers['access-control-expose-headers'], 'Mcp-Session-Id');
  assert.equal(curl(['-X', 'OPTIONS', '-H', 'Origin: http://evil.example']).status, 403);
});

test('404: an unknown session id, and any path but the endpoint', T, () => {
  assert.equal(post({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }, { 'Mcp-Session-Id': 'no-such-session' }).status, 404);
  assert.equal(curl(['-X', 'POST', '-d', '{}'], srv.http.replace('/mcp', '/other')).status, 404);
});

test('405: a method other than POST, GET, DELETE; GET and DELETE on a --http-stateless server', T, async () => {
  const r = curl(['-X', 'PUT', '-d', '{}']);
  assert.equal(r.status, 405);
  assert.equal(r.headers.allow, 'GET, POST, DELETE');
  const s = await startWeb(['--http', '0', '--http-stateless']);
  try {
    assert.equal(curl(['-H', 'Accept: text/event-stream'], s.http).status, 405);
    assert.equal(curl(['-X', 'DELETE'], s.http).status, 405);
    const p = postTo(s.http, PING);
    assert.equal(p.status, 200);
    assert.equal(p.headers['mcp-session-id'], undefined);
  } finally {
    await s.stop();
  }
});

test('406 without both media types in Accept; 413 for a body over --max-message', T, () => {
  assert.equal(curl(['-X', 'POST', '-H', 'Accept: application/json', '-H', 'Content-Type: application/json', '-d', '{"jsonrpc":"2.0","id":1,"method":"rpc.ping"}']).status, 406);
  assert.equal(post({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['x'.repeat(3000)] }).status, 413);
});

test('Content-Type: the media type is matched case-insensitively, with OWS before ";" (RFC 9110 §8.3.1)', T, () => {
  for (const type of ['Application/JSON', 'application/json ; charset=utf-8', 'APPLICATION/JSON;charset=utf-8']) {
    const r = curl(['-X', 'POST', '-H', `Accept: ${ACCEPT}`, '-H', `Content-Type: ${type}`, '--data-binary',
      '{"jsonrpc":"2.0","id":1,"method":"rpc.ping"}']);
    assert.equal(r.status, 200, type);
  }
  const wrong = curl(['-X', 'POST', '-H', `Accept: ${ACCEPT}`, '-H', 'Content-Type: application/jsonx', '--data-binary', '{}']);
  assert.equal(wrong.status, 415);
});

test('weft notify over HTTP: a notification the server refuses exits 3 naming the status; one it takes exits 0', T, async () => {
  const notify = (url) => spawnSync(WEFT_BIN, ['notify', '--connect', url, 'update', '[1]'], { encoding: 'utf8', timeout: 20000 });
  const refused = notify(srv.http);  // no session: 400 (the session starts with a request)
  assert.equal(refused.status, 3, refused.stderr);
  assert.match(refused.stderr, /refused a notification: HTTP 400/);
  assert.match(refused.stderr, /Mcp-Session-Id header required \(the session starts with a request\)/);  // README, "Calling"
  assert.match(refused.stderr, /the notification was not delivered/);
  const stateless = await startWeb(['--http', '127.0.0.1:0', '--demo', '--http-stateless']);
  try {
    const taken = notify(stateless.http);
    assert.equal(taken.status, 0, taken.stderr);
    assert.equal(taken.stderr, '');
  } finally { await stateless.stop(); }
});

test('an HTTP/1.0 request\'s event stream is not chunked: it ends with the connection (RFC 9112 §6.1, §6.3)', T, () => {
  // sleep answers later, so the answer comes as server-sent events.
  const r = curl(['--http1.0', '-X', 'POST', '-H', `Accept: ${ACCEPT}`, '-H', 'Content-Type: application/json',
    '--data-binary', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sleep', params: { ms: 50 } })]);
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'text/event-stream');
  assert.equal(r.headers['transfer-encoding'], undefined);
  const events = r.body.split('\n\n').filter((e) => e.includes('data: {'));
  assert.equal(events.length, 1, r.body);
  assert.deepEqual(JSON.parse(events[0].split('data: ')[1]), { jsonrpc: '2.0', result: 50, id: 1 });
  assert.doesNotMatch(r.body, /^[0-9a-f]+\r$/m, 'no chunk-size lines');
});

test('DELETE ends the session: 204, then 404 for it', T, () => {
  const sid = newSession();
  assert.equal(curl(['-X', 'DELETE', '-H', `Mcp-Session-Id: ${sid}`]).status, 204);
  assert.equal(curl(['-X', 'DELETE', '-H', `Mcp-Session-Id: ${sid}`]).status, 404);
});

// Reads SSE events from a fetch response until `until(events)` holds.
async function readEvents(res, until) {
  const events = [];
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const ev = {};
      for (const line of buf.slice(0, i).split('\n')) { const c = line.indexOf(':'); ev[line.slice(0, c)] = line.slice(c + 1).trim(); }
      events.push(ev);
      buf = buf.slice(i + 2);
    }
  }
  return { events, reader };
}
const sse = (sid, lastEventId, signal) => fetch(srv.http, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sid, ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) }, signal });

test('the GET stream resumes with Last-Event-ID: what was sent while disconnected is replayed', T, async () => {
  const sid = newSession();
  const ac = new AbortController();
  const first = await sse(sid, undefined, ac.signal);
  assert.equal(first.headers.get('content-type'), 'text/event-stream');
  const { events: primed } = await readEvents(first, (e) => e.length >= 1);
  assert.deepEqual(primed[0], { id: '0-0', data: '' });  // priming event: id, empty data
  ac.abort();
  // Sent while nobody listens: kept for the stream.
  assert.equal(post({ jsonrpc: '2.0', method: 'note', params: { text: 'while away' } }, { 'Mcp-Session-Id': sid }).status, 202);
  const again = await sse(sid, '0-0');
  const { events, reader } = await readEvents(again, (e) => e.length >= 1);
  assert.equal(events[0].id, '0-1');
  assert.equal(JSON.parse(events[0].data).params.text, 'while away');
  await reader.cancel();
  assert.equal((await sse(sid, '77-1')).status, 400);  // no such stream
  assert.equal((await sse(sid, '0-99')).status, 400);  // no such event yet
});

test('a POST stream cut before its answer resumes with GET and Last-Event-ID, and the answer is delivered there', T, async () => {
  const sid = newSession();
  const ac = new AbortController();
  const res = await fetch(srv.http, { method: 'POST', signal: ac.signal, headers: { Accept: ACCEPT, 'Content-Type': 'application/json', 'Mcp-Session-Id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'slow', method: 'sleep', params: { ms: 300 } }) });
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const { events: primed } = await readEvents(res, (e) => e.length >= 1);
  assert.equal(primed[0].data, '');
  ac.abort();  // the connection drops; the stream does not end
  const resumed = await sse(sid, primed[0].id);
  const { events } = await readEvents(resumed, () => false);  // until the server ends it
  assert.equal(events.length, 1);
  assert.deepEqual(JSON.parse(events[0].data), { jsonrpc: '2.0', result: 300, id: 'slow' });
  assert.equal(events[0].id.split('-')[0], primed[0].id.split('-')[0]);  // same stream
});

test('SIGTERM: a request in flight is answered on its stream, the GET stream is ended, the server exits 0', T, async () => {
  const s = await startWeb(['--http', '0', '--demo']);
  const init = await fetch(s.http, { method: 'POST', headers: { Accept: ACCEPT, 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }) });
  const sid = init.headers.get('mcp-session-id');
  await init.text();
  const get = await fetch(s.http, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sid } });
  const getDone = readEvents(get, () => false);
  const slow = await fetch(s.http, { method: 'POST', headers: { Accept: ACCEPT, 'Content-Type': 'application/json', 'Mcp-Session-Id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'slow', params: { ms: 300 } }) });
  const slowDone = readEvents(slow, () => false);
  const exit = s.stop('SIGTERM');
  const { events } = await within(5000, slowDone, 'answer on the POST stream');
  assert.deepEqual(JSON.parse(events.at(-1).data).result, { where: 'native', slept: 300 });
  await within(5000, getDone, 'GET stream ended');
  assert.deepEqual(await exit, { code: 0, signal: null });
});

test('beyond --max-connections a connection is answered 503', T, async () => {
  const s = await startWeb(['--http', '0', '--max-connections', '1']);
  try {
    const init = postTo(s.http, PING);
    const ac = new AbortController();
    const held = await fetch(s.http, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': init.headers['mcp-session-id'] }, signal: ac.signal });
    assert.equal(held.status, 200);  // this stream holds the one connection
    assert.equal(curl(['-H', 'Accept: text/event-stream'], s.http).status, 503);
    ac.abort();
  } finally {
    await s.stop();
  }
});

test('--sse-replay-bytes bounds what a session keeps for replay: the latest events resume, a resumption past a dropped one is 400', T, async () => {
  const s = await startWeb(['--http', '0', '--demo', '--sse-replay-bytes', '3000']);
  try {
    const init = postTo(s.http, PING);
    const sid = init.headers['mcp-session-id'];
    // Ten acknowledgements of ~1,000 bytes each for the GET stream, which is
    // not open: the session keeps only what fits in 3,000 bytes.
    for (let i = 1; i <= 10; i++) {
      const note = postTo(s.http, { jsonrpc: '2.0', method: 'note', params: { text: String(i).padStart(2, '0').repeat(500) } }, sid);
      assert.equal(note.status, 202);
    }
    const gone = await fetch(s.http, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sid, 'Last-Event-ID': '0-0' } });
    assert.equal(gone.status, 400);
    assert.match(await gone.text(), /no longer kept/);
    const res = await fetch(s.http, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sid, 'Last-Event-ID': '0-8' } });
    assert.equal(res.status, 200);
    const { events, reader } = await readEvents(res, (e) => e.length >= 2);
    await reader.cancel();
    assert.deepEqual(events.map((e) => [e.id, JSON.parse(e.data).params.text]), [['0-9', '09'.repeat(500)], ['0-10', '10'.repeat(500)]]);
  } finally {
    await s.stop();
  }
});

test('--max-sessions: a new session ends the one idle longest (then 404 for it), or is refused 503 while every session is busy', T, async () => {
  const s = await startWeb(['--http', '0', '--max-sessions', '2']);
  try {
    const ping = (sid) => postTo(s.http, PING, sid);
    const [a, b] = [ping(), ping()].map((r) => r.headers['mcp-session-id']);
    // Both idle: a third ends a, the one idle longest (b was used since).
    assert.equal(ping(b).status, 200);
    const c = ping();
    assert.equal(c.status, 200);
    assert.equal(ping(a).status, 404);
    assert.equal(ping(b).status, 200);
    // Both busy (a GET stream open on each): no room, 503.
    const streams = [b, c.headers['mcp-session-id']].map((sid) => {
      const ac = new AbortController();
      return { ac, res: fetch(s.http, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sid }, signal: ac.signal }) };
    });
    for (const st of streams) assert.equal((await st.res).status, 200);
    assert.equal(ping().status, 503);
    for (const st of streams) st.ac.abort();
  } finally {
    await s.stop();
  }
});

test('--session-idle-timeout ends a session idle that long (then 404)', T, async () => {
  const s = await startWeb(['--http', '0', '--session-idle-timeout', '300']);
  try {
    const first = postTo(s.http, PING);
    assert.equal(first.status, 200);
    const sid = first.headers['mcp-session-id'];
    // Idle past its timeout: the session ends, and its slot is free again.
    await within(5000, s.waitLog(new RegExp(`session ${sid} ended: idle for 300 ms`)), 'the session to end');
    assert.equal(postTo(s.http, PING, sid).status, 404);
  } finally {
    await s.stop();
  }
});

test('weft call over http: a call the drain grace cuts off exits 3, closed before the answer, as on every transport', T, async () => {
  const s = await startWeb(['--http', '0', '--demo', '--grace', '200']);
  try {
    const call = runCli(['call', '--connect', s.http, 'sleep', '[10000]']);
    // Until the server serves it (rpc.ping counts what is in flight).
    await within(5000, (async () => {
      for (;;) {
        const ping = postTo(s.http, PING);
        if (JSON.parse(ping.body).result.in_flight > 0) return;
        await new Promise((r) => setImmediate(r));
      }
    })(), 'the call to be served');
    await s.stop('SIGTERM');
    const r = await call;
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /the event stream ended before the answer/);
  } finally {
    await s.stop();
  }
});

// rpc.ping counts the requests in flight on the whole server (asked in
// session `sid`, so that asking starts no session).
function inFlight(url, sid) {
  return JSON.parse(postTo(url, { jsonrpc: '2.0', id: 'ping', method: 'rpc.ping' }, sid).body).result.in_flight;
}

test('--sse-replay-bytes keeps an answer not yet delivered: a POST cut before its answer still resumes after more than the budget went by', T, async () => {
  const s = await startWeb(['--http', '0', '--demo', '--sse-replay-bytes', '3000']);
  try {
    const H = (sid) => ({ Accept: ACCEPT, 'Content-Type': 'application/json', ...(sid ? { 'Mcp-Session-Id': sid } : {}) });
    const init = await fetch(s.http, { method: 'POST', headers: H(), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rpc.ping' }) });
    const sid = init.headers.get('mcp-session-id');
    await init.text();
    const ac = new AbortController();
    const res = await fetch(s.http, { method: 'POST', signal: ac.signal, headers: H(sid), body: JSON.stringify({ jsonrpc: '2.0', id: 'cut', method: 'sleep', params: { ms: 100 } }) });
    const { events: primed } = await readEvents(res, (e) => e.length >= 1);
    ac.abort();  // gone before the answer
    await within(5000, (async () => { while (inFlight(s.http, sid) > 0) await new Promise((r) => setImmediate(r)); })(), 'the answer');
    for (let i = 0; i < 4; i++) {  // 4,000 bytes more for the GET stream, which is not open
      const n = await fetch(s.http, { method: 'POST', headers: H(sid), body: JSON.stringify({ jsonrpc: '2.0', method: 'note', params: { text: 'x'.repeat(1000) } }) });
      await n.text();
    }
    const resumed = await fetch(s.http, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sid, 'Last-Event-ID': primed[0].id } });
    const { events } = await readEvents(resumed, () => false);
    assert.deepEqual(JSON.parse(events.at(-1).data), { jsonrpc: '2.0', result: 100, id: 'cut' });
  } finally {
    await s.stop();
  }
});

test('--max-sessions: "idle longest" counts from when a session stopped being busy, not from its last request', T, async () => {
  const s = await startWeb(['--http', '0', '--demo', '--max-sessions', '2']);
  try {
    const post = (body, sid) => postTo(s.http, body, sid);
    const a = post(PING).headers['mcp-session-id'];
    // a works on a long request; b starts meanwhile and stays idle.
    const slow = fetch(s.http, { method: 'POST', headers: { Accept: ACCEPT, 'Content-Type': 'application/json', 'Mcp-Session-Id': a },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'sleep', params: { ms: 300 } }) }).then((r) => r.text());
    await within(5000, (async () => { while (inFlight(s.http, a) === 0) await new Promise((r) => setImmediate(r)); })(), 'a busy');
    const b = post(PING).headers['mcp-session-id'];
    await slow;
    assert.equal(post(PING).status, 200);  // a third session: b goes
    assert.equal(post({ jsonrpc: '2.0', id: 3, method: 'rpc.ping' }, b).status, 404);
    assert.equal(post({ jsonrpc: '2.0', id: 3, method: 'rpc.ping' }, a).status, 200);
  } finally {
    await s.stop();
  }
});
