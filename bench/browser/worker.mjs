// Dedicated module Worker: serves ?lib= on its own scope, then says ready.
import { serve, selfLink } from './contenders.mjs';

await serve(new URL(location.href).searchParams.get('lib'), selfLink());
self.postMessage('__ready__');
