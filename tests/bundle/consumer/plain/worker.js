import * as weft from '../node_modules/weft-rpc/js/index.js';
import { serveWorker } from '../src/scenario.js';

serveWorker(weft);
