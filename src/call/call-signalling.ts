/**
 * A call's signalling: the {@link SignallingTransport} in use (the bundled
 * WebSocket client for `signallingUrl`, or the app's own through
 * `MultipathCallOptions.signalling`), its join, the checks on what it
 * delivers, and the rejoin with backoff and jitter when it closes under a
 * running call ({@link reconnectDelayMs}). The call keeps its sessions;
 * this module only tells it who is in the room and what they signal.
 */
import type { PathId } from '../core/types.js';
import { SignallingClient, type WebSocketCtor } from '../signalling/client.js';
import { isValidId } from '../signalling/protocol.js';
import type { SignallingTransport, SignallingTransportFactory } from '../signalling/transport.js';
import type { PeerSession } from './peer-session.js';
import { reconnectDelayMs } from './reconnect.js';
import { CallError, type MultipathCallOptions, type ReconnectPolicy, type SignallingStateInfo } from './types.js';

/** What the signalling tells its call. */
export interface CallSignallingHost {
  readonly numPaths: number;
  /** Joined (first join or a rejoin): own id and who is in the room now. */
  onJoined(peerId: string, peers: string[]): void;
  onPeerJoined(peerId: string): void;
  onPeerLeft(peerId: string): void;
  onSignal(from: string, pathId: PathId, data: Record<string, unknown>): void;
  /** No more signalling (no reconnect, or every attempt failed): nobody can be announced again. */
  onGiveUp(): void;
  onState(state: 'connected' | 'reconnecting' | 'disconnected', info: SignallingStateInfo): void;
  onError(e: Error): void;
}

/**
 * The roster part of a {@link CallSignallingHost}: who is in the room, as
 * the signalling says, kept in the call's sessions. A participant the
 * signalling no longer announces while a path to it is up may only have lost
 * its signalling: its session is marked absent (the call drops it once no
 * path is up or after its grace time), not closed.
 */
export function rosterHandlers(r: {
  sessions: Map<string, PeerSession>;
  setOwnId(id: string): void;
  add(id: string): PeerSession | undefined;
  remove(id: string): void;
}): Pick<CallSignallingHost, 'onJoined' | 'onPeerJoined' | 'onPeerLeft' | 'onSignal' | 'onGiveUp'> {
  return {
    onJoined: (peerId, peers) => {
      r.setOwnId(peerId);
      const present = new Set(peers);
      // After a reconnect: whoever is not back yet is absent until announced (or gone once its paths are down).
      for (const s of r.sessions.values()) s.setAnnounced(present.has(s.remoteId), Date.now());
      for (const p of peers) r.add(p);
    },
    onPeerJoined: (id) => r.add(id)?.setAnnounced(true, Date.now()),
    onPeerLeft: (id) => {
      const s = r.sessions.get(id);
      // Paths still up: its signalling may only have dropped (it reconnects under the same id); media goes on.
      if (s?.connected) s.setAnnounced(false, Date.now());
      else r.remove(id);
    },
    onSignal: (from, pathId, data) => (r.sessions.get(from) ?? r.add(from))?.onSignal(pathId, data),
    // No signalling for good: nobody can be announced again; sessions go as their paths do (or after the grace time).
    onGiveUp: () => {
      for (const s of r.sessions.values()) s.setAnnounced(false, Date.now());
    },
  };
}

/** Events held while a join is pending (bound). */
const MAX_HELD_EVENTS = 256;

/** See the module comment. */
export class CallSignalling {
  private transport: SignallingTransport | undefined;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** Own id, once joined (a rejoin asks for it again). */
  private peerId: string | undefined;
  /** What the app gave: a URL, a factory, or one instance (which cannot be rejoined). */
  private readonly make: (() => SignallingTransport) | undefined;
  private single: SignallingTransport | undefined;
  /** Signals dropped because their path id or sender id was malformed. */
  badSignals = 0;

  /** @throws CallError 'bad-options' when neither or both of `signallingUrl` and `signalling` are given. */
  constructor(
    private readonly opts: MultipathCallOptions,
    private readonly policy: Required<ReconnectPolicy> | undefined,
    private readonly host: CallSignallingHost,
    WebSocket?: WebSocketCtor,
  ) {
    const { signallingUrl: url, signalling } = opts;
    if ((url === undefined) === (signalling === undefined)) throw CallError.badOptions('give either signallingUrl or signalling');
    if (url !== undefined) {
      if (typeof url !== 'string') throw CallError.badOptions('signallingUrl must be a string');
      this.make = () => new SignallingClient({ url, ...(WebSocket ? { WebSocket } : {}) });
    } else if (typeof signalling === 'function') this.make = signalling as SignallingTransportFactory;
    else if (signalling && typeof signalling.join === 'function' && typeof signalling.on === 'function') this.single = signalling;
    else throw CallError.badOptions('signalling must be a SignallingTransport or a function returning one');
  }

  /** For messages: the URL, or that the app's signalling is used. */
  get label(): string {
    return this.opts.signallingUrl ?? 'app signalling';
  }

  /**
   * The first join.
   * @throws CallError 'join-refused' | 'signalling-failed'.
   */
  async connect(): Promise<void> {
    try {
      await this.join(this.opts.peerId);
    } catch (e) {
      const msg = (e as Error)?.message ?? String(e);
      throw new CallError(/join refused/.test(msg) ? 'join-refused' : 'signalling-failed', `${this.label} room ${this.opts.room}: ${msg}`);
    }
    this.host.onState('connected', { attempt: 0 });
  }

  /** Send a signal on the current transport (false when there is none or it refused). */
  sendSignal(to: string, pathId: PathId, data: Record<string, unknown>): boolean {
    try {
      return this.transport?.sendSignal(to, pathId, data) ?? false;
    } catch (e) {
      this.host.onError(new Error(`signalling: sendSignal threw: ${(e as Error)?.message ?? String(e)}`));
      return false;
    }
  }

  /** Leave and stop reconnecting; idempotent. */
  close(): void {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.closeTransport(this.transport);
    this.transport = undefined;
  }

  private closeTransport(t: SignallingTransport | undefined): void {
    try {
      t?.close();
    } catch {
      /* the app's transport failed to close: nothing more to do */
    }
  }

  /** A transport wired to this call, joined; events before the join result are held, then replayed in order. */
  private async join(peerId: string | undefined): Promise<boolean> {
    let t: SignallingTransport;
    if (this.make) t = this.make();
    else if (this.single) {
      t = this.single;
      this.single = undefined;
    } else throw new Error('signalling instance already used (pass a factory or a URL to rejoin)');
    this.transport = t;
    let joined = false;
    const held: Array<() => void> = [];
    const deliver = (f: () => void): void => {
      if (this.transport !== t || this.closed) return;
      if (joined) f();
      else if (held.length < MAX_HELD_EVENTS) held.push(f);
    };
    t.on('peer-joined', ({ peerId: id }) => deliver(() => this.host.onPeerJoined(id)));
    t.on('peer-left', ({ peerId: id }) => deliver(() => this.host.onPeerLeft(id)));
    t.on('signal', ({ from, pathId, data }) => {
      // Checked here too: an app's transport may pass anything.
      if (typeof from !== 'string' || !isValidId(from) || !Number.isInteger(pathId) || pathId < 0 || pathId >= this.host.numPaths || typeof data !== 'object' || data === null) {
        this.badSignals++;
        return;
      }
      deliver(() => this.host.onSignal(from, pathId, data));
    });
    t.on('error', (e) => {
      if (this.transport === t && !this.closed) this.host.onError(new Error(`signalling: ${e.code}: ${e.message}`));
    });
    t.on('closed', ({ code }) => {
      if (this.closed || this.transport !== t || !joined) return;
      this.lost(`socket closed (code ${code})`);
    });
    let res: { peerId: string; peers: string[] };
    try {
      res = await t.join(this.opts.room, peerId, this.opts.token !== undefined ? { token: this.opts.token } : {});
    } catch (e) {
      if (this.transport === t) this.transport = undefined;
      this.closeTransport(t);
      throw e;
    }
    if (this.closed || this.transport !== t) {
      this.closeTransport(t);
      return false;
    }
    joined = true;
    this.peerId = res.peerId;
    this.host.onJoined(res.peerId, res.peers);
    for (const f of held.splice(0)) f();
    return true;
  }

  /**
   * The transport closed under a running call: rejoin under our own id with
   * backoff and jitter (a URL or a factory), else give up at once.
   */
  private lost(reason: string): void {
    const policy = this.make ? this.policy : undefined;
    if (!policy) {
      this.host.onGiveUp();
      this.host.onState('disconnected', { attempt: 0, reason });
      return;
    }
    let attempt = 0;
    const next = (why: string): void => {
      if (this.closed) return;
      attempt++;
      if (attempt > policy.maxAttempts) {
        this.host.onGiveUp();
        this.host.onState('disconnected', { attempt: attempt - 1, reason: why });
        this.host.onError(new CallError('signalling-lost', `${this.label}: no signalling after ${policy.maxAttempts} reconnect attempts (${why}); media goes on over the paths that are up`));
        return;
      }
      const delayMs = reconnectDelayMs(attempt, policy.baseDelayMs, policy.maxDelayMs, Math.random());
      this.host.onState('reconnecting', { attempt, reason: why, delayMs });
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = undefined;
        if (this.closed) return;
        this.join(this.peerId ?? this.opts.peerId).then(
          (ok) => {
            if (ok && !this.closed) this.host.onState('connected', { attempt });
          },
          (e: unknown) => next((e as Error)?.message ?? String(e)),
        );
      }, delayMs);
    };
    next(reason);
  }
}
