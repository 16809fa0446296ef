// The dedicated Worker boundary: a module worker serving the demo methods.
import { Peer, selfTransport } from '/js/index.js';
import { serveDemo } from './methods.js';

const peer = new Peer(selfTransport(), { timeout: 0 });
serveDemo(peer, 'worker');
peer.ready.then(() => peer.notify('boundary.ready', { where: 'worker' }));
