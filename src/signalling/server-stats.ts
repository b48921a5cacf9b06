/** Counters of the signalling server and how error replies map onto them. */
import type { SignallingErrorCode } from './protocol.js';

/** Counters since start. `drops.*` count messages that got dropped. */
export interface SignallingServerStats {
  connections: number;
  rooms: number;
  peers: number;
  messagesIn: number;
  signalsForwarded: number;
  errorsSent: number;
  connectionsRejected: number;
  /** Distinct clients (remote addresses / keys) connected now. */
  clients: number;
  /** Connections refused at the upgrade: origin not allowed. */
  originRejected: number;
  /** Connections closed for sustained flooding. */
  floodCloses: number;
  drops: {
    badJson: number;
    tooLarge: number;
    badMessage: number;
    notJoined: number;
    unknownPeer: number;
    roomFull: number;
    rateLimited: number;
    rewriteDropped: number;
    backpressure: number;
    internal: number;
    unauthorized: number;
    peerIdTaken: number;
    clientLimit: number;
  };
}

/** All counters at zero. */
export function newServerStats(): SignallingServerStats {
  return {
    connections: 0,
    rooms: 0,
    peers: 0,
    messagesIn: 0,
    signalsForwarded: 0,
    errorsSent: 0,
    connectionsRejected: 0,
    clients: 0,
    originRejected: 0,
    floodCloses: 0,
    drops: {
      badJson: 0,
      tooLarge: 0,
      badMessage: 0,
      notJoined: 0,
      unknownPeer: 0,
      roomFull: 0,
      rateLimited: 0,
      rewriteDropped: 0,
      backpressure: 0,
      internal: 0,
      unauthorized: 0,
      peerIdTaken: 0,
      clientLimit: 0,
    },
  };
}

/** The drop counter each error reply counts in. */
export const DROP_KEY: Record<SignallingErrorCode, keyof SignallingServerStats['drops']> = {
  'bad-json': 'badJson',
  'too-large': 'tooLarge',
  'bad-message': 'badMessage',
  'room-full': 'roomFull',
  'unknown-peer': 'unknownPeer',
  'not-joined': 'notJoined',
  'rate-limited': 'rateLimited',
  unauthorized: 'unauthorized',
  'peer-id-taken': 'peerIdTaken',
  'client-limit': 'clientLimit',
};
