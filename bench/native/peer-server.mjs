// Peer servers for the native rows, run as a separate process like `weft serve`.
//   node peer-server.mjs vscode-stdio       vscode-jsonrpc over stdin/stdout (LSP framing)
//   node peer-server.mjs jsonrpc-net PATH   npm json-rpc-2.0 over a Unix socket, newline framing
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
} else {
  console.error('usage: peer-server.mjs vscode-stdio | jsonrpc-net PATH');
  process.exit(2);
}
