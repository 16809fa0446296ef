// Must NOT compile (tests/js/types.test.mjs checks that tsc rejects it): the
// proof that a wrong call outside `// @ts-expect-error` fails the build, i.e.
// that errors.ts's directives are checked at all.
import { JSONRPCClient, portTransport } from 'weft-rpc';

declare const port: MessagePort;
new JSONRPCClient(portTransport(port)).request('add', 5);
