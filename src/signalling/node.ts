/**
 * Node-only signalling entry point: the WebSocket server, the room-token
 * helpers (jose) and everything browser-safe from `./index.js`. Never import
 * this from browser code.
 */
export * from './index.js';
export {
  startSignallingServer,
  type SignallingServer,
  type SignallingServerOptions,
  type SignallingServerStats,
  type RewriteSignalContext,
} from './server.js';
export {
  createTokenAuthorizer,
  signRoomToken,
  MIN_SECRET_BYTES,
  type SignRoomTokenOptions,
  type TokenAuthorizerOptions,
} from './token.js';
