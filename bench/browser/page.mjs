// The bench page: window.benchOne(transport, lib, cfg) opens a fresh channel,
// Worker or iframe for `lib`, measures the small and large calls, closes it.
import { serve, connect, portLink, workerLink, windowLink } from './contenders.mjs';
import { measureCall } from '/bench/lib/measure.mjs';

const BIG = 'x'.repeat(64 * 1024);

function readyFrom(target, source) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('server did not start')), 15000);
    const l = (ev) => {
      if (ev.data === '__ready__' && (!source || ev.source === source)) {
        clearTimeout(t); target.removeEventListener('message', l); resolve();
      }
    };
    target.addEventListener('message', l);
  });
}

async function open(transport, lib) {
  if (transport === 'messagechannel') {
    const { port1, port2 } = new MessageChannel();
    const stop = await serve(lib, portLink(port2));
    return { link: portLink(port1), close: () => { stop(); port1.close(); port2.close(); } };
  }
  if (transport === 'worker') {
    const w = new Worker(new URL(`./worker.mjs?lib=${lib}`, import.meta.url), { type: 'module' });
    await readyFrom(w);
    return { link: workerLink(w), close: () => w.terminate() };
  }
  if (transport === 'iframe') {
    const f = document.createElement('iframe');
    f.src = new URL(`./frame.html?lib=${lib}`, import.meta.url).href;
    document.body.append(f);
    // contentWindow (a WindowProxy) is stable across the frame's navigation: wait for its signal.
    await readyFrom(window, f.contentWindow);
    return { link: windowLink(f.contentWindow), close: () => f.remove() };
  }
  throw new Error('unknown transport ' + transport);
}

window.benchOne = async (transport, lib, cfg) => {
  const ch = await open(transport, lib);
  const c = await connect(lib, ch.link, BIG);
  try {
    const small = await measureCall(c.small, cfg.small);
    const large = await measureCall(c.large, cfg.large);
    return { small, large };
  } finally { c.close(); ch.close(); }
};
window.benchIsolated = globalThis.crossOriginIsolated === true;
window.benchReady = true;
