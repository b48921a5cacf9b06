/**
 * Public types of the app data channel (src/engine/app-data.ts): options,
 * delivery info, errors and statistics.
 */
import type { Clock } from '../core/clock.js';
import type { PathId } from '../core/types.js';

/** Why {@link AppDataChannel.send} refused a message. */
export type AppDataErrorCode = 'too-large' | 'window-full' | 'no-path' | 'bad-data';

/** Thrown by {@link AppDataChannel.send}; `code` is stable, the message names the limit. */
export class AppDataError extends Error {
  constructor(
    readonly code: AppDataErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AppDataError';
  }
}

/** Where a delivered message came from. */
export interface AppDataInfo {
  reliable: boolean;
  /** Path the (first accepted copy of the) message arrived on. */
  pathId: PathId;
}

export interface AppDataOptions {
  clock: Clock;
  /** Puts one encoded Packet on a path; false when the path cannot take it now. */
  transmit: (pathId: PathId, bytes: Uint8Array) => boolean;
  /** A message for the app: a string when the sender sent a string. */
  deliver: (data: Uint8Array | string, info: AppDataInfo) => void;
  /**
   * The sender gave up on a reliable message after `maxAttempts` (its bytes
   * are gone). Its delivery is unconfirmed, not necessarily failed: the
   * message may have arrived and only its acks been lost (as in PR-SCTP).
   */
  onAbandon?: (seq: number, bytes: number) => void;
  /** Largest message (bytes of payload, default and at most {@link MAX_APP_DATA_BYTES}). */
  maxMessageBytes?: number;
  /** Reliable payload bytes sent and not yet acknowledged (default 262144). */
  maxInFlightBytes?: number;
  /** Reliable messages not yet acknowledged, skip markers included (default 1024). */
  maxInFlightMessages?: number;
  /** Transmissions of one reliable message before the sender gives up (default 12). */
  maxAttempts?: number;
  /** RTO before the first RTT sample of a path (ms, default 1000, RFC 6298 §2.1). */
  initialRtoMs?: number;
  /**
   * Lower bound of the RTO (ms, default 200). RFC 6298 §2.4 says 1 s; like
   * Linux TCP and QUIC (RFC 9002 §6.2.1 has no minimum beyond the timer
   * granularity) we use less, since a real-time call cannot wait a second.
   */
  minRtoMs?: number;
  /** Upper bound of the RTO after backoff (ms, default 10000; RFC 6298 §2.5 allows 60 s). */
  maxRtoMs?: number;
  /** Reorder window of the receiver: messages ahead of the next in-order one (default 2048). */
  reorderWindow?: number;
  /** Payload bytes the receiver holds out of order (default 1 MiB). */
  maxReorderBytes?: number;
}

/** Counters of {@link AppDataChannel.stats} (messages and payload bytes). */
export interface AppDataStats {
  /** Messages the app sent (first transmissions), reliable and unreliable. */
  sent: number;
  sentBytes: number;
  /** Retransmissions of reliable messages (and of skip markers). */
  retransmitted: number;
  retransmittedBytes: number;
  /** Messages delivered to the app. */
  received: number;
  receivedBytes: number;
  /** Reliable copies that arrived twice or more (dropped, acknowledged again). */
  duplicates: number;
  /** Reliable messages the sender gave up on after maxAttempts. */
  abandoned: number;
  /** Reliable seqs the receiver skipped on a skip marker. */
  skipped: number;
  /** Counted drops by reason. */
  dropped: {
    /** Reliable message too far ahead of the next in-order one (beyond the reorder window). */
    outOfWindow: number;
    /** Reorder buffer full (bytes). */
    bufferFull: number;
    /** Ack naming a seq never sent. */
    badAck: number;
    /** Unreliable message with no up path, or a transmit the path refused. */
    notSent: number;
  };
  acksSent: number;
  acksReceived: number;
  /** Reliable messages and payload bytes awaiting an ack. */
  inFlight: number;
  inFlightBytes: number;
  /** Messages and payload bytes held out of order by the receiver. */
  reorderBuffered: number;
  reorderBufferedBytes: number;
  /** Smoothed RTT per path measured by app data acks (ms; absent before the first sample). */
  srttMs: Record<number, number>;
}

/** The counters of {@link AppDataStats} (those a channel accumulates), all at zero. */
export type AppDataCounters = Omit<AppDataStats, 'inFlight' | 'inFlightBytes' | 'reorderBuffered' | 'reorderBufferedBytes' | 'srttMs'>;

/** Fresh {@link AppDataCounters} at zero (a channel that has sent and received nothing yet). */
export function zeroAppDataCounters(): AppDataCounters {
  return {
    sent: 0,
    sentBytes: 0,
    retransmitted: 0,
    retransmittedBytes: 0,
    received: 0,
    receivedBytes: 0,
    duplicates: 0,
    abandoned: 0,
    skipped: 0,
    dropped: { outOfWindow: 0, bufferFull: 0, badAck: 0, notSent: 0 },
    acksSent: 0,
    acksReceived: 0,
  };
}
