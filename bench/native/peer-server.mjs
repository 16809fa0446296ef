// Peer servers for the native rows, run as a separate process like `weft serve`.
//   node peer-server.mjs vscode-stdio       vscode-jsonrpc over stdin/stdout (LSP framing)
//   node peer-server.mjs jsonrpc-net PATH   npm json-rpc-2.0 over a Unix socket, newline framing
//   node peer-server.mjs jsonrpc-ws         npm json-rpc-2.0 over npm ws, one message per text frame
//   node peer-server.mjs raw-ws             the WebSocket floor: npm ws answering every frame with a
//                                           canned response (id and echo params cut out, no JSON parse)
//   (the ws modes listen on 127.0.0.1:0 and print "ws://127.0.0.1:PORT" on stdout)
// Methods: add({a,b}) -> a+b, echo([s]) -> s (the same calls weft's --demo serves).
import net from 'node:net';
import fs from 'node:fs';

const mode = process.argv[2];
const add = ({ a, b }) => a + b;
const echo = (p) => p;

if (mode === 'vscode-stdio') {
  const rpc = await import('vscode-jsonrpc/node.js');
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(process.stdin), new rpc.StreamMessageWriter(process.stdout));
  conn.onRequest('add', add);
  conn.onRequest('echo', echo);
  conn.onClose(() => process.exit(0));
  conn.listen();
} else if (mode === 'jsonrpc-net') {
  const { JSONRPCServer } = await import('json-rpc-2.0');
  const server = new JSONRPCServer();
  server.addMethod('add', add);
  server.addMethod('echo', echo);
  const path = process.argv[3];
  try { fs.unlinkSync(path); } catch { /* none */ }
  net.createServer((sock) => {
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('data', (chunk) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        server.receiveJSON(line).then((r) => { if (r) sock.write(JSON.stringify(r) + '\n'); });
      }
    });
    sock.on('error', () => {});
  }).listen(path);
  process.on('SIGTERM', () => process.exit(0));
} else if (mode === 'jsonrpc-ws' || mode === 'raw-ws') {
  const { WebSocketServer } = await import('ws');
  const { JSONRPCServer } = await import('json-rpc-2.0');
  const server = new JSONRPCServer();
  server.addMethod('add', add);
  server.addMethod('echo', echo);
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const text = data.toString();
      if (mode === 'raw-ws') {
        // json-rpc-2.0's client writes {"jsonrpc","id","method","params"}: the id
        // is found by its key, echo's params run to the last '}'.
        const id = /"id":(\d+)/.exec(text)[1];
        ws.send(text.includes('"method":"echo"') ? `{"jsonrpc":"2.0","result":${text.slice(text.indexOf('"params":') + 9, text.lastIndexOf('}'))},"id":${id}}`
          : `{"jsonrpc":"2.0","result":3,"id":${id}}`);
        return;
      }
      server.receiveJSON(text).then((r) => { if (r) ws.send(JSON.stringify(r)); });
    });
    ws.on('error', () => {});
  });
  wss.on('listening', () => console.log(`ws://127.0.0.1:${wss.address().port}`));
  process.on('SIGTERM', () => process.exit(0));
} else {
  console.error('usage: peer-server.mjs vscode-stdio | jsonrpc-net PATH | jsonrpc-ws | raw-ws');
  process.exit(2);
}
