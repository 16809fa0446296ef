// The bundled module worker's entry.
import * as weft from 'weft-rpc';
import { serveWorker } from './scenario.js';

serveWorker(weft);
