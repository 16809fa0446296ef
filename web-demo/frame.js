// The iframe boundary, served from a second origin. It answers only its
// parent window, and only when that window is on the app's origin: the
// windowTransport drops everything else. A separate listener counts what was
// dropped, so the page can show that the origin check is real.
import config from './config.js';
import { Peer, windowTransport } from '/js/index.js';
import { serveDemo } from './methods.js';

let rejected = 0;
const $ = (id) => document.getElementById(id);
$('origin').textContent = location.host;
$('origin').title = `this iframe's origin: ${location.origin}`;

addEventListener('message', (ev) => {
  if (ev.source === window.parent && ev.origin === config.app) return;
  rejected++;
  $('rejected').textContent = String(rejected);
  $('rejected').className = 'bad';
});

const peer = new Peer(windowTransport(window.parent, window, config.app), { timeout: 0 });
const stats = serveDemo(peer, 'iframe', () => ({ rejected, origin: location.origin }));
setInterval(() => { $('handled').textContent = String(stats.handled); }, 250);
peer.ready.then(() => {
  $('dot').classList.add('on');
  peer.notify('boundary.ready', { where: 'iframe', origin: location.origin });
});
