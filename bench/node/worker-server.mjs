// worker_threads server: serves workerData.lib on parentPort, then says 'ready'.
import { parentPort, workerData } from 'node:worker_threads';
import { serve } from './contenders.mjs';

await serve(workerData.lib, parentPort, true);
parentPort.postMessage('__ready__');
