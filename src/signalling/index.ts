/**
 * Browser-safe signalling API: wire protocol and client. The Node server is
 * exported separately from `./node.js` (it imports `ws` and `node:crypto`).
 */
export * from './protocol.js';
export * from './client.js';
export type { SignallingTransport, SignallingTransportEvents, SignallingTransportFactory } from './transport.js';
export type { AuthorizeContext, AuthorizeResult, SignallingAuthorizer } from './authorize.js';
