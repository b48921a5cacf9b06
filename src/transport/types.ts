/**
 * Contract between the engine and one network path's datagram transport.
 * Implementations: {@link ./simple-peer-path.ts} (browser, one
 * RTCPeerConnection + one unordered, maxRetransmits:0 RTCDataChannel per
 * path) and {@link ./fake.ts} (in-memory, for unit tests and Node).
 */
import type { PathId, PathTransportState } from '../core/types.js';

export type { PathTransportState } from '../core/types.js';

/** One ICE candidate as seen in getStats / the candidate line. */
export interface CandidateInfo {
  /** IP address (or mDNS name / hostname when that is all the browser reveals). */
  address: string;
  port: number;
  /** 'udp' | 'tcp' (lowercase). */
  protocol: string;
  /** 'host' | 'srflx' | 'prflx' | 'relay'. */
  type: string;
  /**
   * libwebrtc's `network-id` of the local interface, when the candidate line
   * carried one (Chromium 156 omits it: observed in the browser check).
   */
  networkId?: number;
  /** getStats `networkType` of a local candidate ('ethernet', 'wifi', 'cellular', 'vpn', 'unknown'), when given. */
  networkType?: string;
}

/** The ICE candidate pair a path currently sends on. */
export interface SelectedPair {
  local: CandidateInfo;
  remote: CandidateInfo;
  /** getStats id of the candidate-pair report. */
  id: string;
  /** The pair's `currentRoundTripTime` in ms (STUN connectivity / consent checks, W3C webrtc-stats RTCIceCandidatePairStats), when reported. */
  rttMs?: number;
  /** The pair's `responsesReceived` (STUN check responses so far): a new RTT sample when it grew. */
  rttResponses?: number;
  /** The pair's `availableOutgoingBitrate` (bps): the browser's own GCC estimate for its RTP (W3C webrtc-stats), when reported. */
  availableOutgoingBps?: number;
}

/** Error surfaced by a transport; `code` is stable (e.g. simple-peer's 'ERR_ICE_CONNECTION_FAILURE'). */
export interface PathTransportErrorInfo {
  code: string;
  message: string;
}

/**
 * Datagram transport of one path. Unreliable and unordered: `send` either
 * hands the bytes to the channel or returns false; nothing is retried.
 * Listeners are called synchronously; exceptions in them are caught.
 */
export interface PathTransport {
  readonly pathId: PathId;
  readonly state: PathTransportState;
  /**
   * Send one message (bytes are copied or handed to the browser before return).
   * @returns false if the channel is not open or the send failed; never throws.
   */
  send(bytes: Uint8Array): boolean;
  /** Bytes accepted by `send` and not yet handed to the network (RTCDataChannel.bufferedAmount). */
  bufferedAmount(): number;
  /** Subscribe; returns an unsubscribe function. */
  on(event: 'message', cb: (bytes: Uint8Array, ageUs?: number) => void): () => void;
  on(event: 'state', cb: (s: PathTransportState) => void): () => void;
  on(event: 'error', cb: (err: PathTransportErrorInfo) => void): () => void;
  on(event: 'iceRestart', cb: (info: IceRestartInfo) => void): () => void;
  /** Currently selected ICE candidate pair, undefined if not connected or unknown. Never rejects. */
  selectedPair(): Promise<SelectedPair | undefined>;
  /** Close; state becomes 'closed' (idempotent). */
  close(): void;
}

/** Event name -> listener signature, for implementations. */
export interface PathTransportEvents {
  /** One datagram; `ageUs`, when the transport knows it, is how long before this call it arrived (µs, >= 0). */
  message: (bytes: Uint8Array, ageUs?: number) => void;
  state: (s: PathTransportState) => void;
  error: (err: PathTransportErrorInfo) => void;
  /**
   * An ICE restart of a connected path began (RFC 8445 §9: new ICE
   * credentials in an offer): this side started it, or the remote offerer's
   * offer carried a new `ice-ufrag`. The old candidate pair may carry the
   * path until the new one is selected. Optional: transports without ICE never emit it.
   */
  iceRestart: (info: IceRestartInfo) => void;
}

/** See {@link PathTransportEvents.iceRestart}. */
export interface IceRestartInfo {
  /** True when this side started it (its offer), false when the remote offer carried new credentials. */
  local: boolean;
}
