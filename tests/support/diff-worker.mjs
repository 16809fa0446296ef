// The JS server of the differential test inside a node:worker_threads Worker:
// a JSONRPCServer on selfTransport() (parentPort) with the diff methods.
import { parentPort, workerData } from 'node:worker_threads';
import { JSONRPCServer, selfTransport, ready } from '../../js/index.js';
import { registerDiffMethods } from './diff-methods.mjs';

const server = new JSONRPCServer(selfTransport(workerData?.pack ? { pack: true } : undefined), { onDiagnostic: () => {} });
registerDiffMethods(server);
await ready;
// Not JSON-RPC: the endpoint ignores it; the test waits for it before sending.
parentPort.postMessage({ diffWorkerReady: true });
