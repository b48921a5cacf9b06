/**
 * Keeps every path of a call alive: a path that does not connect within its
 * timeout, or that fails or closes under a running call, is restarted with
 * exponential backoff, and every change is reported with a reason, so a path
 * is never silently down while the call runs.
 *
 * A restart is a new RTCPeerConnection for that path (a new ICE session,
 * DTLS handshake and SCTP association: RFC 8445 §2.4 ICE restart semantics,
 * new ufrag/pwd), not `RTCPeerConnection.restartIce()` on the old one:
 * simple-peer v9 destroys its RTCPeerConnection as soon as ICE reports
 * `failed`, and a path that never connected may already be in that state.
 * Paths carry a generation number in their signals; the initiator of the
 * path (the peer whose id sorts first) starts each new generation, the other
 * side follows when a signal of a newer generation arrives, and signals of
 * older generations are dropped.
 *
 * Timers are injected (`setTimer` / `clearTimer`), so tests drive them by
 * hand. This is transport glue, not core: it does no media work.
 */
import type { PathId } from '../core/types.js';
import type { PathTransport, PathTransportState } from './types.js';

/** Lifecycle of a supervised path. */
export type PathLifecycleState = 'connecting' | 'connected' | 'retrying' | 'closed';

/**
 * Why a path is in its state:
 * - `start`: first connection attempt;
 * - `connected`: ICE, DTLS and the datachannel are up;
 * - `connect-timeout`: not connected within `connectTimeoutMs`;
 * - `transport-failed`: the transport failed (ICE failure, DTLS/SCTP error);
 * - `transport-closed`: the transport closed while the call runs;
 * - `restart`: a new generation was started here (after backoff);
 * - `remote-restart`: the remote peer started a new generation;
 * - `closed`: the call closed the path.
 */
export type PathStateReason = 'start' | 'connected' | 'connect-timeout' | 'transport-failed' | 'transport-closed' | 'restart' | 'remote-restart' | 'closed';

/** What {@link PathSupervisor} reports for one path. */
export interface PathStatus {
  pathId: PathId;
  state: PathLifecycleState;
  reason: PathStateReason;
  /** Restart attempts since the path was last connected (0 while connected or on the first attempt). */
  attempt: number;
  /** Generation of the current RTCPeerConnection (0 = the first). */
  generation: number;
  /** Milliseconds from the path's start to its first connection; undefined until then. */
  connectMs: number | undefined;
  /** Restarts (new generations) over the call. */
  restarts: number;
}

/** Options of {@link PathSupervisor}. */
export interface PathSupervisorOptions {
  /** This peer starts new generations (one side per path; the other follows). */
  initiator: boolean;
  /**
   * Make the transport of one path generation. The supervisor subscribes to
   * its 'state' events and closes it when it is replaced. Exceptions are
   * reported as a `transport-failed` status and retried.
   */
  create: (pathId: PathId, generation: number) => PathTransport;
  /** Every status change. Exceptions are caught. */
  onStatus: (status: PathStatus) => void;
  /** Time to connect before a restart (ms, default 10000). */
  connectTimeoutMs?: number;
  /** First restart delay (ms, default 1000); doubles per attempt. */
  backoffBaseMs?: number;
  /** Cap of the restart delay (ms, default 30000). */
  backoffMaxMs?: number;
  /** Milliseconds clock (default `Date.now`). */
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

interface Supervised {
  status: PathStatus;
  startedAtMs: number;
  transport: PathTransport | undefined;
  unsubscribe: (() => void) | undefined;
  timer: unknown;
}

/** Restart delay (ms) of attempt `n` (1-based): base x 2^(n-1), capped. */
export function backoffMs(n: number, baseMs = 1000, maxMs = 30_000): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(30, n - 1)));
}

/** Supervises the paths of one call with one remote peer. */
export class PathSupervisor {
  private readonly paths = new Map<PathId, Supervised>();
  private readonly o: Required<Omit<PathSupervisorOptions, 'create' | 'onStatus' | 'initiator'>>;
  private closed = false;

  /** @throws RangeError on a non-positive timeout or backoff. */
  constructor(private readonly opts: PathSupervisorOptions) {
    this.o = {
      connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
      backoffBaseMs: opts.backoffBaseMs ?? 1000,
      backoffMaxMs: opts.backoffMaxMs ?? 30_000,
      now: opts.now ?? (() => Date.now()),
      setTimer: opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms)),
      clearTimer: opts.clearTimer ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>)),
    };
    for (const k of ['connectTimeoutMs', 'backoffBaseMs', 'backoffMaxMs'] as const) {
      if (!(this.o[k] > 0)) throw new RangeError(`PathSupervisor: ${k} must be > 0, got ${this.o[k]}`);
    }
  }

  /** Start supervising `pathId` (generation 0). No-op if it is already supervised. */
  start(pathId: PathId): void {
    if (this.closed || this.paths.has(pathId)) return;
    const p: Supervised = {
      status: { pathId, state: 'connecting', reason: 'start', attempt: 0, generation: 0, connectMs: undefined, restarts: 0 },
      startedAtMs: this.o.now(),
      transport: undefined,
      unsubscribe: undefined,
      timer: undefined,
    };
    this.paths.set(pathId, p);
    this.open(p, 'start');
  }

  /** The current transport of a path (undefined while between generations or unknown). */
  transport(pathId: PathId): PathTransport | undefined {
    return this.paths.get(pathId)?.transport;
  }

  /** Status of one path, or undefined for a path not supervised. */
  status(pathId: PathId): PathStatus | undefined {
    const p = this.paths.get(pathId);
    return p ? { ...p.status } : undefined;
  }

  /** Status of every path, by id. */
  statuses(): PathStatus[] {
    return [...this.paths.values()].map((p) => ({ ...p.status })).sort((a, b) => a.pathId - b.pathId);
  }

  /**
   * A signal for `pathId` arrived from the remote peer, tagged with its
   * generation. A newer generation restarts the local side first (reason
   * `remote-restart`). Returns whether the signal belongs to the current
   * generation (feed it to {@link transport}); older ones are stale.
   */
  acceptRemoteGeneration(pathId: PathId, generation: number): boolean {
    const p = this.paths.get(pathId);
    if (!p || this.closed || !Number.isInteger(generation) || generation < 0) return false;
    if (generation < p.status.generation) return false;
    if (generation > p.status.generation) {
      p.status.generation = generation;
      p.status.restarts++;
      this.open(p, 'remote-restart');
    }
    return true;
  }

  /** Stop supervising one path and close its transport. */
  remove(pathId: PathId): void {
    const p = this.paths.get(pathId);
    if (!p) return;
    this.dispose(p);
    this.paths.delete(pathId);
    this.set(p, 'closed', 'closed');
  }

  /** Close every path and cancel every timer. Idempotent. */
  close(): void {
    if (this.closed) return;
    for (const id of [...this.paths.keys()]) this.remove(id);
    this.closed = true;
  }

  private open(p: Supervised, reason: PathStateReason): void {
    this.dispose(p);
    this.set(p, 'connecting', reason);
    const id = p.status.pathId;
    const gen = p.status.generation;
    let t: PathTransport;
    try {
      t = this.opts.create(id, gen);
    } catch {
      this.fail(p, 'transport-failed');
      return;
    }
    p.transport = t;
    p.unsubscribe = t.on('state', (s: PathTransportState) => {
      // Only the current generation's transport speaks for the path.
      if (p.transport !== t || p.status.generation !== gen) return;
      if (s === 'connected') this.onConnected(p);
      else if (s === 'failed') this.fail(p, 'transport-failed');
      else if (s === 'closed') this.fail(p, 'transport-closed');
    });
    if (t.state === 'connected') this.onConnected(p);
    else p.timer = this.o.setTimer(() => this.fail(p, 'connect-timeout'), this.o.connectTimeoutMs);
  }

  private onConnected(p: Supervised): void {
    this.clearTimer(p);
    if (p.status.connectMs === undefined) p.status.connectMs = Math.max(0, this.o.now() - p.startedAtMs);
    p.status.attempt = 0;
    this.set(p, 'connected', 'connected');
  }

  /** The path is down: report it, and (initiator) start a new generation after the backoff. */
  private fail(p: Supervised, reason: PathStateReason): void {
    if (this.closed || !this.paths.has(p.status.pathId)) return;
    this.clearTimer(p);
    p.status.attempt++;
    this.set(p, 'retrying', reason);
    if (this.opts.initiator) {
      p.timer = this.o.setTimer(
        () => {
          p.timer = undefined;
          p.status.generation++;
          p.status.restarts++;
          this.open(p, 'restart');
        },
        backoffMs(p.status.attempt, this.o.backoffBaseMs, this.o.backoffMaxMs),
      );
    } else {
      // The other side restarts; if it never does (e.g. it lost this path too), check again later.
      p.timer = this.o.setTimer(
        () => {
          p.timer = undefined;
          if (p.status.state === 'retrying') this.fail(p, reason);
        },
        Math.max(this.o.connectTimeoutMs, backoffMs(p.status.attempt, this.o.backoffBaseMs, this.o.backoffMaxMs)),
      );
    }
  }

  private dispose(p: Supervised): void {
    this.clearTimer(p);
    p.unsubscribe?.();
    p.unsubscribe = undefined;
    const t = p.transport;
    p.transport = undefined;
    try {
      t?.close();
    } catch {
      /* already closed */
    }
  }

  private clearTimer(p: Supervised): void {
    if (p.timer !== undefined) this.o.clearTimer(p.timer);
    p.timer = undefined;
  }

  private set(p: Supervised, state: PathLifecycleState, reason: PathStateReason): void {
    p.status.state = state;
    p.status.reason = reason;
    try {
      this.opts.onStatus({ ...p.status });
    } catch {
      /* a listener's problem */
    }
  }
}
