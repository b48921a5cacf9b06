/**
 * Signalling client for the browser and Node 20+ (pass a WebSocket
 * implementation, e.g. `ws`, when `globalThis.WebSocket` is missing).
 * Speaks {@link ./protocol.ts}. Listener exceptions are caught (counted in
 * `listenerErrors`, reported as 'error') so application code cannot break the client.
 *
 * Register listeners before {@link SignallingClient.connect}: `signal`
 * messages may arrive right after `joined`.
 *
 * Only peers the server vouches for are listened to: a `signal` whose sender
 * the server has not announced in this room (`joined.peers` / `peer-joined`,
 * and not since `peer-left`) is dropped and counted in `unvouchedSignals`.
 */
import { Emitter } from '../core/emitter.js';
import {
  MAX_SIGNALLING_MESSAGE_BYTES,
  MAX_TOKEN_CHARS,
  encodeMessage,
  isValidId,
  isValidPathId,
  parseServerMessage,
  utf8Length,
  type ClientMessage,
  type SignalData,
  type SignallingErrorCode,
} from './protocol.js';
import type { SignallingTransport, SignallingTransportEvents } from './transport.js';

/** Event names of {@link SignallingClient}. */
export enum SignallingEvent {
  Joined = 'joined',
  PeerJoined = 'peer-joined',
  PeerLeft = 'peer-left',
  Signal = 'signal',
  Error = 'error',
  Closed = 'closed',
}

/** An error reported by the server, or a local one (bad server frame, socket failure). */
export interface SignallingClientError {
  /** Server error codes, plus 'socket' (transport failure) and 'not-connected'. */
  code: SignallingErrorCode | 'socket' | 'not-connected';
  message: string;
}

/** Typed callbacks map. Each listener gets one payload object (extensible without breaking listeners). */
export interface SignallingClientEvents {
  /** Joined: own id and the peers already in the room. */
  joined: (ev: { peerId: string; peers: string[] }) => void;
  'peer-joined': (ev: { peerId: string }) => void;
  'peer-left': (ev: { peerId: string }) => void;
  /** A signal for path `pathId` from peer `from`. */
  signal: (ev: { from: string; pathId: number; data: SignalData }) => void;
  error: (err: SignallingClientError) => void;
  /** The socket closed (`code`/`reason` from the close frame when known). */
  closed: (ev: { code: number; reason: string }) => void;
}

/** Event names: the enum members or their string values ('joined', 'signal', ...). */
export type SignallingEventName = SignallingEvent | `${SignallingEvent}`;

/** Event handler slot, bivariant in its argument so both DOM and `ws` sockets fit. */
type Handler<E> = { bivarianceHack(ev: E): void }['bivarianceHack'] | null;

/** Minimal WebSocket surface used (the browser's and `ws`'s both fit). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: Handler<unknown>;
  onmessage: Handler<{ data: unknown }>;
  onerror: Handler<unknown>;
  onclose: Handler<{ code?: number; reason?: string }>;
}

export type WebSocketCtor = new (url: string) => WebSocketLike;

export interface SignallingClientOptions {
  /** WebSocket implementation (default `globalThis.WebSocket`). */
  WebSocket?: WebSocketCtor;
  /** ws:// or wss:// URL of the server, for {@link SignallingClient.join} (the {@link SignallingTransport} entry point). */
  url?: string;
}

/** Lifecycle of a client. */
export type SignallingClientState = 'idle' | 'connecting' | 'joined' | 'closed';

const OPEN = 1;
/** The event names `on` accepts. */
const EVENT_NAMES: ReadonlySet<string> = new Set(Object.values(SignallingEvent));
/** Bound on the tracked peer set (rooms hold at most 8). */
const MAX_KNOWN_PEERS = 64;

/**
 * One signalling connection in one room.
 *
 * ```ts
 * const c = new SignallingClient({ WebSocket: WsFromNode });
 * c.on('signal', ({ from, pathId, data }) => paths[pathId].signal(data));
 * const { peerId, peers } = await c.connect('ws://127.0.0.1:8080', 'room1');
 * c.sendSignal(peers[0], 0, offer);
 * ```
 */
export class SignallingClient implements SignallingTransport {
  private ws: WebSocketLike | undefined;
  private readonly Ws: WebSocketCtor | undefined;
  private readonly url: string | undefined;
  /** Listener exceptions are counted and reported as 'error' (those of 'error' listeners are only counted). */
  private readonly events = new Emitter<SignallingClientEvents>({
    onListenerError: (err, event) => {
      this.listenerErrors++;
      if (event !== SignallingEvent.Error) {
        this.safeEmit(SignallingEvent.Error, { code: 'bad-message', message: `listener for '${event}' threw: ${String(err)}` });
      }
    },
  });
  private _state: SignallingClientState = 'idle';
  private _peerId: string | undefined;
  private readonly _peers = new Set<string>();
  /** Frames from the server that failed validation (dropped). */
  badFrames = 0;
  /** Exceptions thrown by listeners (caught). */
  listenerErrors = 0;
  /** Signals dropped because the server had not announced their sender in this room. */
  unvouchedSignals = 0;

  constructor(opts: SignallingClientOptions = {}) {
    this.Ws = opts.WebSocket ?? (globalThis as { WebSocket?: WebSocketCtor }).WebSocket;
    this.url = opts.url;
  }

  /**
   * {@link SignallingTransport.join}: {@link connect} to the `url` given to
   * the constructor. MultipathCall's default signalling.
   * @throws Error (rejects) without a `url`, and as {@link connect}.
   */
  join(room: string, peerId: string | undefined, opts: { token?: string } = {}): Promise<{ peerId: string; peers: string[] }> {
    if (this.url === undefined) return Promise.reject(new Error('SignallingClient: join() needs opts.url (or call connect(url, ...))'));
    return this.connect(this.url, room, peerId, opts);
  }

  get state(): SignallingClientState {
    return this._state;
  }

  /** Own peer id once joined. */
  get peerId(): string | undefined {
    return this._peerId;
  }

  /** Other peers currently in the room (as told by the server). */
  get peers(): string[] {
    return [...this._peers];
  }

  /**
   * Add a listener; returns a function that removes it.
   * @throws TypeError for an unknown event name (programming error).
   */
  on<K extends SignallingEventName>(event: K, cb: SignallingClientEvents[`${K}`]): () => void;
  on<K extends keyof SignallingTransportEvents>(event: K, cb: SignallingTransportEvents[K]): () => void;
  on(event: SignallingEventName, cb: (ev: never) => void): () => void {
    if (!EVENT_NAMES.has(event)) throw new TypeError(`SignallingClient: unknown event '${String(event)}'`);
    return this.events.on(`${event}`, cb as never);
  }

  off<K extends SignallingEventName>(event: K, cb: SignallingClientEvents[`${K}`]): void {
    this.events.off(`${event}`, cb);
  }

  private safeEmit<K extends SignallingEvent>(event: K, payload: Parameters<SignallingClientEvents[`${K}`]>[0]): void {
    this.events.emit(`${event}`, ...([payload] as Parameters<SignallingClientEvents[`${K}`]>));
  }

  /**
   * Open the socket and join `room`.
   * @param peerId id to claim (a server with `authorize` may override it with the id it vouches for).
   * @param opts.token credential sent with the join (e.g. a room JWT from the app server), at most 4096 chars.
   * @returns own peer id and the peers already in the room.
   * @throws Error (rejects) when no WebSocket implementation exists, on
   *   invalid room/peerId/token, when already used, or when the server answers
   *   with an error (e.g. `unauthorized`, `peer-id-taken`) or closes before `joined`.
   */
  connect(url: string, room: string, peerId?: string, opts: { token?: string } = {}): Promise<{ peerId: string; peers: string[] }> {
    const token = opts.token;
    if (token !== undefined && (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_CHARS)) {
      return Promise.reject(new Error(`SignallingClient: token must be a string of 1-${MAX_TOKEN_CHARS} chars`));
    }
    if (this._state !== 'idle') return Promise.reject(new Error('SignallingClient: connect() may be called once'));
    if (!this.Ws) return Promise.reject(new Error('SignallingClient: no WebSocket implementation (pass opts.WebSocket)'));
    if (!isValidId(room)) return Promise.reject(new Error('SignallingClient: room must be 1-64 chars [A-Za-z0-9_-]'));
    if (peerId !== undefined && !isValidId(peerId)) {
      return Promise.reject(new Error('SignallingClient: peerId must be 1-64 chars [A-Za-z0-9_-]'));
    }
    this._state = 'connecting';
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (err: Error | undefined, v?: { peerId: string; peers: string[] }): void => {
        if (settled) return;
        settled = true;
        if (err) reject(err);
        else resolve(v!);
      };
      let ws: WebSocketLike;
      try {
        ws = new this.Ws!(url);
      } catch (err) {
        this._state = 'closed';
        settle(err as Error);
        return;
      }
      this.ws = ws;
      ws.onopen = () => {
        const join: ClientMessage = { type: 'join', room };
        if (peerId !== undefined) join.peerId = peerId;
        if (token !== undefined) join.token = token;
        this.rawSend(join);
      };
      ws.onerror = () => {
        this.safeEmit(SignallingEvent.Error, { code: 'socket', message: 'WebSocket error' });
      };
      ws.onclose = (ev) => {
        this._state = 'closed';
        this._peers.clear();
        settle(new Error(`SignallingClient: socket closed before joining (code ${ev?.code ?? 0})`));
        if (this.ws === ws) {
          this.ws = undefined;
          this.safeEmit(SignallingEvent.Closed, { code: ev?.code ?? 0, reason: ev?.reason ?? '' });
        }
      };
      ws.onmessage = (ev) => {
        if (typeof ev.data !== 'string') {
          this.badFrames++;
          return;
        }
        const parsed = parseServerMessage(ev.data);
        if (!parsed.ok) {
          this.badFrames++;
          this.safeEmit(SignallingEvent.Error, { code: parsed.code, message: `bad frame from server: ${parsed.message}` });
          return;
        }
        const msg = parsed.value;
        switch (msg.type) {
          case 'joined':
            if (this._state !== 'connecting') return;
            this._state = 'joined';
            this._peerId = msg.peerId;
            for (const p of msg.peers.slice(0, MAX_KNOWN_PEERS)) this._peers.add(p);
            settle(undefined, { peerId: msg.peerId, peers: [...msg.peers] });
            this.safeEmit(SignallingEvent.Joined, { peerId: msg.peerId, peers: [...msg.peers] });
            return;
          case 'peer-joined':
            // Bound: a room never holds more than 8 peers; a lying server cannot grow this set.
            if (this._peers.size < MAX_KNOWN_PEERS) this._peers.add(msg.peerId);
            this.safeEmit(SignallingEvent.PeerJoined, { peerId: msg.peerId });
            return;
          case 'peer-left':
            this._peers.delete(msg.peerId);
            this.safeEmit(SignallingEvent.PeerLeft, { peerId: msg.peerId });
            return;
          case 'signal':
            if (this._state !== 'joined' || !this._peers.has(msg.from)) {
              this.unvouchedSignals++;
              return;
            }
            this.safeEmit(SignallingEvent.Signal, { from: msg.from, pathId: msg.pathId, data: msg.data });
            return;
          case 'error':
            if (this._state === 'connecting') {
              settle(new Error(`SignallingClient: join refused (${msg.code}): ${msg.message}`));
              this.close();
            }
            this.safeEmit(SignallingEvent.Error, { code: msg.code, message: msg.message });
            return;
        }
      };
    });
  }

  private rawSend(msg: ClientMessage): boolean {
    const ws = this.ws;
    if (!ws || ws.readyState !== OPEN) return false;
    try {
      ws.send(encodeMessage(msg));
      return true;
    } catch (err) {
      this.safeEmit(SignallingEvent.Error, { code: 'socket', message: `send failed: ${String(err)}` });
      return false;
    }
  }

  /**
   * Send a signal (simple-peer offer/answer/candidate object) to peer `to`
   * for path `pathId` (0..7). `data` must be a JSON object. Never throws.
   * @returns false when not joined, arguments are invalid, or the encoded
   *   message would exceed 64 KiB (an 'error' event tells which).
   */
  sendSignal(to: string, pathId: number, data: unknown): boolean {
    if (this._state !== 'joined') {
      this.safeEmit(SignallingEvent.Error, { code: 'not-connected', message: 'sendSignal before joined' });
      return false;
    }
    if (!isValidId(to) || !isValidPathId(pathId) || typeof data !== 'object' || data === null || Array.isArray(data)) {
      this.safeEmit(SignallingEvent.Error, { code: 'bad-message', message: 'sendSignal: invalid to/pathId/data' });
      return false;
    }
    const msg: ClientMessage = { type: 'signal', to, pathId, data: data as SignalData };
    let text: string;
    try {
      text = encodeMessage(msg);
    } catch (err) {
      this.safeEmit(SignallingEvent.Error, { code: 'bad-message', message: `sendSignal: data not serialisable: ${String(err)}` });
      return false;
    }
    if (utf8Length(text, MAX_SIGNALLING_MESSAGE_BYTES) > MAX_SIGNALLING_MESSAGE_BYTES) {
      this.safeEmit(SignallingEvent.Error, { code: 'too-large', message: 'sendSignal: message over 64 KiB' });
      return false;
    }
    const ws = this.ws;
    if (!ws || ws.readyState !== OPEN) return false;
    try {
      ws.send(text);
      return true;
    } catch (err) {
      this.safeEmit(SignallingEvent.Error, { code: 'socket', message: `send failed: ${String(err)}` });
      return false;
    }
  }

  /** Leave the room and close the socket. Idempotent; 'closed' fires once the socket closes. */
  close(): void {
    const ws = this.ws;
    if (this._state === 'joined') this.rawSend({ type: 'leave' });
    if (this._state !== 'closed') this._state = 'closed';
    this._peers.clear();
    if (ws) {
      try {
        ws.close(1000, 'bye');
      } catch {
        /* already closing */
      }
    }
  }
}
