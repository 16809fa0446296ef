// What every transport returns: { send, onMessage, destroy, onClose,
// onSendError, tuples }, built around a packer (../pack.js). Each transport file only
// says how to post, how to listen and how to notice the other side going away.
import { createPacker } from '../pack.js';

/**
 * post(msg, transfer) posts one message (transfer: buffers to transfer, or
 *                    undefined); may throw (e.g. DataCloneError).
 * listen(receive)    starts calling receive(data) with what arrives.
 * unlisten(receive)  stops that, and releases what it must (a port is closed).
 * watchClose(fire)   null, or starts calling fire() once the other side is
 *                    gone, and returns what undoes that.
 * mode as createPacker() takes it.
 * `tuples` is a plain property the packer sets once: the endpoint reads it
 * for every message it sends.
 */
export function makeTransport({ post, listen, unlisten, watchClose, mode }) {
  let destroyed = false;
  // After destroy() nothing is posted: send() drops the message (the
  // endpoint, told by destroy(), fails its calls at once; a window must not
  // hear from a transport that was destroyed).
  const postOpen = (msg, transfer) => {
    if (!destroyed) post(msg, transfer);
  };
  const packer = createPacker(postOpen, mode, () => { transport.tuples = true; });
  let handler = null;
  let closeHandlers = [];
  let closed = false;
  // false once there is no handler: the rest of a pack frame is dropped.
  const deliver = (m) => {
    if (!handler) return false;
    handler(m);
    return true;
  };
  const receive = (data) => packer.unpack(data, deliver);
  const fireClose = () => {
    if (closed) return;
    closed = true;
    for (const h of closeHandlers) h();
  };
  let undoClose = null;
  const transport = {
    send: packer.send,
    // The other side announced it reads tuples (js/pack.js): send them.
    tuples: false,
    // `role`: the endpoint's ('client', 'server' or 'peer'), for the pack
    // announcement and for whose announcement counts (../pack.js).
    onMessage(h, role) { handler = h; if (role !== undefined) packer.setRole(role); },
    onClose(h) { closeHandlers.push(h); if (closed) h(); },
    onSendError: packer.onSendError,
    // Called directly, as by the endpoint's destroy(): the endpoint is told
    // (its close handlers run, once: pending calls reject with -32002 and
    // later ones fail at once), then the channel is released.
    destroy() {
      if (destroyed) return;
      packer.close();  // what is queued still goes out, before detaching
      fireClose();
      destroyed = true;
      handler = null;
      closeHandlers = [];
      unlisten(receive);
      if (undoClose) undoClose();
    },
  };
  listen(receive);
  undoClose = watchClose ? watchClose(fireClose) : null;
  return transport;
}
