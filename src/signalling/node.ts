/**
 * Node-only signalling entry point: the WebSocket server plus everything
 * browser-safe from `./index.js`. Never import this from browser code.
 */
export * from './index.js';
export {
  startSignallingServer,
  type SignallingServer,
  type SignallingServerOptions,
  type SignallingServerStats,
  type RewriteSignalContext,
} from './server.js';
