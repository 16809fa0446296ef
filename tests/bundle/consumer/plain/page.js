// No bundler: the installed package's own files, served as they are.
import * as weft from '../node_modules/weft-rpc/js/index.js';
import { runPage } from '../src/scenario.js';

runPage(weft, new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }));
