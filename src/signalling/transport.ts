/**
 * The signalling a call needs, as an interface an app can implement over its
 * own backend (its WebSocket, a Firebase / Supabase channel, a SIP or XMPP
 * gateway, an in-memory hub in tests). `MultipathCall` takes one through
 * `MultipathCallOptions.signalling`; without it, the bundled WebSocket client
 * ({@link import('./client.js').SignallingClient}, speaking ./protocol.ts to
 * the bundled server) is used with `signallingUrl`.
 *
 * What a call does with it: `join` once (a room id, an optional own id and
 * credential), then `sendSignal` to named participants (simple-peer offers,
 * answers and ICE candidates, one path at a time: JSON objects under 64 KiB)
 * and listens for participants joining and leaving and for their signals.
 * Nothing here carries media: signalling only sets up the paths, and media
 * keeps flowing over paths already up while signalling is down.
 */
import type { SignalData } from './protocol.js';

/** Events a {@link SignallingTransport} emits (each listener gets one payload object). */
export interface SignallingTransportEvents {
  /** A participant entered the room (after our join). */
  'peer-joined': (ev: { peerId: string }) => void;
  /** A participant left the room (or its connection to the backend closed). */
  'peer-left': (ev: { peerId: string }) => void;
  /** A signal for path `pathId` (0..7) from participant `from`, as it gave it to its `sendSignal`. */
  signal: (ev: { from: string; pathId: number; data: SignalData }) => void;
  /** Something went wrong that does not end the session (a refused message, a bad frame): reported as the call's `error` event. */
  error: (err: { code: string; message: string }) => void;
  /**
   * The session with the backend ended (after a successful join). The call
   * then rejoins through a new transport when it can make one (a URL or a
   * factory), else it reports signalling lost; media goes on either way.
   */
  closed: (ev: { code: number; reason: string }) => void;
}

/**
 * Signalling over an app's own backend; see the module comment.
 *
 * Contract:
 * - `join` resolves with the id the backend gives us (it may differ from
 *   the one asked for) and the participants already in the room; it rejects
 *   when the backend refuses or cannot be reached (put 'join refused' in the
 *   message when it refused, so the call reports CallError 'join-refused'
 *   rather than 'signalling-failed'). It is called once per instance.
 * - Events may start during `join` (they are held until it resolves) and
 *   must stop after `close`.
 * - Deliver only signals from participants the backend vouches for in this
 *   room: the call opens paths to whoever signals it.
 * - `sendSignal` never throws: it returns false when the signal could not be
 *   sent (the path's setup then times out and is retried).
 * - Listener exceptions are the call's problem (it catches its own).
 */
export interface SignallingTransport {
  join(room: string, peerId: string | undefined, opts: { token?: string }): Promise<{ peerId: string; peers: string[] }>;
  sendSignal(to: string, pathId: number, data: SignalData): boolean;
  /** Add a listener; returns a function that removes it. */
  on<K extends keyof SignallingTransportEvents>(event: K, listener: SignallingTransportEvents[K]): () => void;
  /** Leave the room and release the backend session; idempotent. */
  close(): void;
}

/** Makes a fresh transport for each join (the first and every reconnect). */
export type SignallingTransportFactory = () => SignallingTransport;
