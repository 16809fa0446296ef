// Native rows (placeholder until the stdio / Unix socket rows land).
export const NATIVE_TRANSPORTS = {};
export async function runNative() { return { results: {}, notes: ['native rows (stdio, Unix socket) not measured in this run'] }; }
