/**
 * Messages between the extension's pages (chrome.runtime messaging) and what
 * the injected script posts to an opted-in page. No SDK import here: the popup
 * bundles this file and must stay small.
 */

/** Popup -> call page: "send me a stats snapshot". */
export const STATS_REQUEST = 'mprtc:stats' as const;

/** One path of the running call, as the popup shows it. */
export interface PathSnapshot {
  id: number;
  /** Path lifecycle state: connecting, connected, retrying, closed. */
  state: string;
  /** Smoothed RTT (ms) of the sender's estimate; undefined before the first feedback or when not sending. */
  rttMs: number | undefined;
  /** Media + FEC + retransmissions actually sent on the path (bps). */
  sendRateBps: number | undefined;
  /** The path's congestion controller estimate (bps). */
  estimateBps: number | undefined;
  /** Loss seen by the sender's feedback on this path (%); falls back to the receiver's view. */
  lossPct: number | undefined;
  /** Packets this side received on the path. */
  packetsReceived: number;
}

/** The call page's answer to {@link STATS_REQUEST}. */
export interface CallSnapshot {
  /** idle (not joined), connecting, waiting (joined, no peer yet), connected, peer-left, error, closed. */
  phase: string;
  room: string;
  /** Last error message, if any. */
  error?: string;
  /** Wall-clock time of the snapshot (ms since the epoch). */
  timestamp: number;
  paths: PathSnapshot[];
  /** Received video: frames decoded over the last second (getStats() inbound-rtp `framesPerSecond`). */
  fps: number;
  framesDecoded: number;
  /** Freezes by the project's one definition (src/feedback/qoe-metrics.ts). */
  freezeCount: number;
  freezeTotalMs: number;
  /** Frames this side's encoder produced (0 when not sending). */
  framesEncoded: number;
}

/** What the injected script posts to an opted-in page (`window.postMessage`). */
export interface PresenceMessage {
  source: 'multipath-rtc-extension';
  type: 'present';
  version: string;
}

/** The opt-in a page declares: `<meta name="multipath-rtc" content="allow">`. */
export const OPT_IN_META = { name: 'multipath-rtc', content: 'allow' } as const;
