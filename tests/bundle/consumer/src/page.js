// The bundled page's entry (esbuild, Vite): weft-rpc by its package name.
import * as weft from 'weft-rpc';
import { runPage } from './scenario.js';

runPage(weft, new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }));
