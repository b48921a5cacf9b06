/**
 * What a session does with a path while an ICE restart moves it onto
 * another route (a relay switch, issue 16), and the phases it reports
 * (CallEvent.RouteSwitch) on both sides: the offerer that restarts and the
 * answerer that sees a restart offer (`PathTransportEvents.iceRestart`).
 *
 * An ICE restart (RFC 8445 §9; JSEP RFC 8829 §4.1.18) is make-before-break:
 * the old candidate pair carries the path until the new one is selected, on
 * each side separately (the controlling side when its nominated check
 * succeeds, the controlled side on the nomination or on data received over the
 * new pair, RFC 8445 §8.1.1; libwebrtc p2p/base/p2p_transport_channel.cc
 * switches the controlled side on data received). 'switched' is reported when
 * the transport's selected pair has a local candidate other than before the
 * restart (a restart gathers every local candidate anew), 'timed-out' after
 * `maxHoldMs` without one.
 *
 * Measured in the browser (`npm run bench:relays`, 5 switches per call,
 * README "Relays as extra routes"): with the default 'none' the path keeps
 * sending through the switch and the longest frame gap within 3 s after a
 * switch is of the size of the machine's own jitter with the converge
 * scheduler. 'hold' takes the path out of the sender's schedule
 * (`SenderEngine.setPathEnabled(id, false)`: no media, FEC,
 * retransmissions, probes or app data; no fault for the path hysteresis)
 * while another path is up, until the new pair is selected; it did not
 * shorten the gaps: with nothing sent on the held path the remote side sends
 * no feedback on it either, so the controlled side, which switches on data
 * received, waits for the nomination (0.7-1.3 s instead of 0.1-0.5 s), and
 * the other path carries the whole rate meanwhile. It stays an option
 * (`MultipathCallOptions.relayHandover: 'hold'`).
 *
 * Why not make-before-break with a second RTCPeerConnection on the new
 * relay: a second DTLS and SCTP association per switch (own handshakes, own
 * congestion window from scratch), a second TURN allocation per path, and a
 * swap of the datachannel under the engines; the ICE restart already keeps
 * the old pair until the new one works.
 *
 * Browser I/O (timers, getStats polling) lives here in src/call; the engine
 * only sees setPathEnabled / onPathRouteChanged.
 */
import type { PathId } from '../core/types.js';
import type { SelectedPair } from '../transport/types.js';

/** Phases reported by {@link RouteHandover} (CallEvent.RouteSwitch). */
export type RouteSwitchPhase = 'started' | 'switched' | 'timed-out';

/** What {@link RouteHandover} reports on every phase. */
export interface RouteSwitchInfo {
  phase: RouteSwitchPhase;
  /** True when this side started the ICE restart, false when the remote offer did. */
  local: boolean;
  /** Whether the path was held out of the sender's schedule (another path was up). */
  held: boolean;
  /** Time since the restart began (ms; 0 for 'started'). */
  elapsedMs: number;
  /** The selected pair once switched. */
  pair?: SelectedPair;
}

/** Defaults of {@link RouteHandoverOptions}. */
export const ROUTE_HANDOVER_DEFAULTS = { pollMs: 100, maxHoldMs: 5000 } as const;

export interface RouteHandoverOptions {
  /** The path's transport selected pair (getStats); never rejects. */
  selectedPair(id: PathId): Promise<SelectedPair | undefined>;
  /** The last selected pair known before the restart (may be undefined). */
  knownPair(id: PathId): SelectedPair | undefined;
  /** Another path of this participant is up and enabled, so this one can be held. */
  othersUp(id: PathId): boolean;
  /** Hold (true) or release (false) the path in the sender's schedule. */
  hold(id: PathId, held: boolean): void;
  /** The route changed (the new pair is selected). */
  onSwitched(id: PathId, pair: SelectedPair): void;
  report(id: PathId, info: RouteSwitchInfo): void;
  /** Hold the path while it switches ('hold'); false (default): only report the phases. */
  enabled?: boolean;
  pollMs?: number;
  /** Longest hold (ms): after it the path is released whatever ICE did. */
  maxHoldMs?: number;
  /** ms clock for elapsed times (default performance.now). */
  nowMs?: () => number;
}

interface Pending {
  local: boolean;
  held: boolean;
  startMs: number;
  beforeId: string | undefined;
  poll: ReturnType<typeof setInterval>;
  deadline: ReturnType<typeof setTimeout>;
}

/**
 * The route of a selected pair, as far as a restart changes it: the local
 * candidate. An ICE restart gathers every local candidate anew (new host
 * ports, a new TURN allocation), while the stats id and the remote
 * candidate's form (peer-reflexive, then the signalled one) change without the
 * route changing.
 */
const pairKey = (p: SelectedPair | undefined): string | undefined => (p ? `${p.local.protocol}:${p.local.address}:${p.local.port}` : undefined);

/** See the module comment. One per {@link PeerSession}. */
export class RouteHandover {
  private readonly pending = new Map<PathId, Pending>();
  private readonly o: RouteHandoverOptions;
  private readonly pollMs: number;
  private readonly maxHoldMs: number;
  private readonly now: () => number;
  private closed = false;

  constructor(o: RouteHandoverOptions) {
    this.o = o;
    this.pollMs = o.pollMs ?? ROUTE_HANDOVER_DEFAULTS.pollMs;
    this.maxHoldMs = o.maxHoldMs ?? ROUTE_HANDOVER_DEFAULTS.maxHoldMs;
    this.now = o.nowMs ?? (() => performance.now());
  }

  /** Whether path `id` is held out of the schedule now. */
  isHeld(id: PathId): boolean {
    return this.pending.get(id)?.held === true;
  }

  /** Whether an ICE restart of path `id` is under way. */
  isSwitching(id: PathId): boolean {
    return this.pending.has(id);
  }

  /**
   * An ICE restart of path `id` began. A second restart during one restarts
   * the wait (same hold, new deadline, same pair to leave).
   */
  begin(id: PathId, local: boolean): void {
    if (this.closed) return;
    const prev = this.pending.get(id);
    if (prev) this.clearTimers(prev);
    const held = prev?.held ?? (this.o.enabled === true && this.o.othersUp(id));
    const p: Pending = {
      local,
      held,
      startMs: prev?.startMs ?? this.now(),
      beforeId: prev ? prev.beforeId : pairKey(this.o.knownPair(id)),
      poll: setInterval(() => void this.check(id, p), this.pollMs),
      deadline: setTimeout(() => this.finish(id, p, 'timed-out', undefined), this.maxHoldMs),
    };
    this.pending.set(id, p);
    if (held && !prev?.held) this.o.hold(id, true);
    if (!prev) this.o.report(id, { phase: 'started', local, held, elapsedMs: 0 });
  }

  /**
   * Another path went down while `id` may be held: release every held path
   * that is now the only way to the participant (the restart goes on).
   */
  onOthersChanged(): void {
    for (const [id, p] of this.pending) {
      if (p.held && !this.o.othersUp(id)) {
        p.held = false;
        this.o.hold(id, false);
      }
    }
  }

  /** Path `id` is gone (closed or replaced by a new generation): drop its restart without callbacks. */
  forget(id: PathId): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.clearTimers(p);
    this.pending.delete(id);
    if (p.held) this.o.hold(id, false);
  }

  close(): void {
    this.closed = true;
    for (const p of this.pending.values()) this.clearTimers(p);
    this.pending.clear();
  }

  private async check(id: PathId, p: Pending): Promise<void> {
    const pair = await this.o.selectedPair(id);
    if (this.pending.get(id) !== p) return;
    const key = pairKey(pair);
    if (key === undefined) return;
    // Pair before the restart unknown (no stats read yet): the first one read is the old one.
    if (p.beforeId === undefined) p.beforeId = key;
    else if (pair && key !== p.beforeId) this.finish(id, p, 'switched', pair);
  }

  private finish(id: PathId, p: Pending, phase: 'switched' | 'timed-out', pair: SelectedPair | undefined): void {
    if (this.pending.get(id) !== p) return;
    this.clearTimers(p);
    this.pending.delete(id);
    if (p.held) this.o.hold(id, false);
    if (pair) this.o.onSwitched(id, pair);
    this.o.report(id, { phase, local: p.local, held: p.held, elapsedMs: Math.round(this.now() - p.startMs), ...(pair ? { pair } : {}) });
  }

  private clearTimers(p: Pending): void {
    clearInterval(p.poll);
    clearTimeout(p.deadline);
  }
}
