export * from './transports/index.js';
