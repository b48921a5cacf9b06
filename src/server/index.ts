/** Node entry point: the signalling server (`ws`) and room tokens (`jose`). */
export {
  startSignallingServer,
  createTokenAuthorizer,
  signRoomToken,
  type SignallingServerOptions,
  type SignallingServer,
  type SignallingServerStats,
  type AuthorizeContext,
  type AuthorizeResult,
  type SignallingAuthorizer,
  type SignRoomTokenOptions,
  type TokenAuthorizerOptions,
} from '../signalling/node.js';
