/**
 * I/O-free path lifecycle: which paths exist, which are up, and the events to
 * tell the application. Converge keeps WebRTC's connection monitoring in sync
 * with its multipath management (Converge §5 "Connections management") and
 * disables / re-enables paths from QoE feedback (§4.2); this class turns both
 * into one event stream.
 *
 * Up/down rule:
 * - A path becomes up when its transport reports 'connected', and down at once
 *   on 'connecting' (ICE restart), 'failed' or 'closed'.
 * - A connected path is declared down when data was sent on it and no
 *   receiver report arrived for `downAfterMs` (default 800 ms) since the first
 *   send that is still unreported. Receivers report every 50-100 ms, so a dead
 *   path is detected within ~0.9 s of its last report (< 1 s). An idle path
 *   (nothing sent) is never declared down for silence.
 * - It is up again as soon as a report arrives while the transport is still
 *   connected. A down-but-connected path carries no media (schedulers skip it),
 *   so the engine should send small keepalives on it ({@link needsKeepalive})
 *   for reports to resume; the sender engine's exceptions are a path kept
 *   through a feedback gap (src/engine/sender-paths.ts keptThroughGap, with
 *   SenderEngineConfig.gapKeepMs past downAfterMs) and the only enabled
 *   path of a call (SenderPaths.lastResort).
 * - 'path-disabled' / 'path-enabled' come from diffing `scheduler.isEnabled`
 *   at each {@link tick}.
 *
 * Time is passed in (µs). Bounded: at most MAX_PATHS paths and `maxEvents`
 * queued events (oldest dropped and counted).
 */
import type { PathId, PathTransportState } from '../core/types.js';
import { MAX_PATHS } from '../core/types.js';
import { SchedError } from './errors.js';
import { isValidPathId } from './path-util.js';
import type { PathEvent, PathEventType, Scheduler } from './types.js';

export type { PathEvent, PathEventType } from './types.js';

export interface PathManagerConfig {
  /** Silence (no receiver report while sending) after which a path is down (ms). Default 800. */
  downAfterMs: number;
  /** Bound of the pending event queue. Default 64. */
  maxEvents: number;
}

export const DEFAULT_PATH_MANAGER_CONFIG: Readonly<PathManagerConfig> = Object.freeze({
  downAfterMs: 800,
  maxEvents: 64,
});

export interface PathManagerStats {
  /** Events dropped because the queue was full. */
  droppedEvents: number;
  /** Calls naming a path that was never added (or was removed). */
  unknownPathCalls: number;
  /** Calls with a non-finite time or an unknown transport state. */
  invalidCalls: number;
}

interface PathEntry {
  transport: PathTransportState;
  up: boolean;
  lastReportUs: number;
  /** First onDataSent after the last report (µs); -1 = nothing unreported. */
  firstUnreportedSendUs: number;
  /** scheduler.isEnabled at the last tick. */
  enabled: boolean;
}

/** Suspicion (see PathManager.isSuspect): silence floor and margin over 2 x SRTT (µs). */
const SUSPECT_MIN_SILENCE_US = 250_000;
const SUSPECT_MARGIN_US = 100_000;

/** The fixed suspicion rule's silence (µs) for a path with SRTT `srttMs`: max(250 ms, 2 x SRTT + 100 ms). */
export function suspectSilenceUs(srttMs: number): number {
  return Math.max(SUSPECT_MIN_SILENCE_US, 2 * srttMs * 1000 + SUSPECT_MARGIN_US);
}

const TRANSPORT_STATES: readonly string[] = ['new', 'connecting', 'connected', 'failed', 'closed'];

export class PathManager {
  readonly config: Readonly<PathManagerConfig>;
  private readonly entries: (PathEntry | undefined)[] = new Array(MAX_PATHS).fill(undefined);
  private events: PathEvent[] = [];
  private readonly counters: PathManagerStats = { droppedEvents: 0, unknownPathCalls: 0, invalidCalls: 0 };

  /** @throws SchedError `invalid-config` for a non-finite/negative downAfterMs or maxEvents < 1. */
  constructor(config: Partial<PathManagerConfig> = {}) {
    const c = { ...DEFAULT_PATH_MANAGER_CONFIG, ...config };
    if (!Number.isFinite(c.downAfterMs) || c.downAfterMs <= 0) throw SchedError.invalidConfig('downAfterMs', c.downAfterMs, 'finite > 0');
    if (!Number.isInteger(c.maxEvents) || c.maxEvents < 1) throw SchedError.invalidConfig('maxEvents', c.maxEvents, 'integer >= 1');
    this.config = Object.freeze(c);
  }

  /** Copy of the counters. */
  get stats(): PathManagerStats {
    return { ...this.counters };
  }

  /**
   * Register a path (state 'connecting', not up). Queues 'path-added'.
   * @returns false when it already exists (no-op).
   * @throws SchedError `invalid-path-id` when id is not an integer in [0, MAX_PATHS).
   */
  addPath(id: PathId, nowUs: number): boolean {
    if (!isValidPathId(id)) throw SchedError.invalidPathId(id, MAX_PATHS);
    if (this.entries[id] !== undefined) return false;
    this.entries[id] = { transport: 'connecting', up: false, lastReportUs: nowUs, firstUnreportedSendUs: -1, enabled: true };
    this.emit('path-added', id, nowUs, 'path added');
    return true;
  }

  /** Forget a path. Queues 'path-down' (if it was up) and 'path-removed'. Unknown ids are counted. */
  removePath(id: PathId, nowUs: number): void {
    const e = this.entry(id);
    if (e === undefined) return;
    if (e.up) this.emit('path-down', id, nowUs, 'path removed');
    this.entries[id] = undefined;
    this.emit('path-removed', id, nowUs, 'path removed');
  }

  /** Transport (RTCPeerConnection / datachannel) state change of a path. */
  onTransportState(id: PathId, state: PathTransportState, nowUs: number): void {
    const e = this.entry(id);
    if (e === undefined) return;
    if (!TRANSPORT_STATES.includes(state) || !Number.isFinite(nowUs)) {
      this.counters.invalidCalls++;
      return;
    }
    e.transport = state;
    if (state === 'connected') {
      e.lastReportUs = nowUs;
      e.firstUnreportedSendUs = -1;
      if (!e.up) {
        e.up = true;
        this.emit('path-up', id, nowUs, 'transport connected');
      }
    } else if (e.up) {
      e.up = false;
      this.emit('path-down', id, nowUs, `transport ${state}`);
    }
  }

  /** A receiver report for the path arrived: resets the silence timer; brings a silent path back up. */
  onReport(id: PathId, nowUs: number): void {
    const e = this.entry(id);
    if (e === undefined) return;
    if (!Number.isFinite(nowUs)) {
      this.counters.invalidCalls++;
      return;
    }
    e.lastReportUs = nowUs;
    e.firstUnreportedSendUs = -1;
    if (!e.up && e.transport === 'connected') {
      e.up = true;
      this.emit('path-up', id, nowUs, 'receiver reports resumed');
    }
  }

  /** Data (media, FEC, probe or keepalive) was sent on the path. */
  onDataSent(id: PathId, nowUs: number): void {
    const e = this.entry(id);
    if (e === undefined) return;
    if (!Number.isFinite(nowUs)) {
      this.counters.invalidCalls++;
      return;
    }
    if (e.firstUnreportedSendUs < 0) e.firstUnreportedSendUs = nowUs;
  }

  /**
   * Run the silence detector and, with a scheduler, diff its `isEnabled`.
   * Call every 10-100 ms. Returns (and clears) the queued events, oldest first.
   */
  tick(nowUs: number, scheduler?: Scheduler): PathEvent[] {
    if (Number.isFinite(nowUs)) {
      const downUs = this.config.downAfterMs * 1000;
      for (let id = 0; id < MAX_PATHS; id++) {
        const e = this.entries[id];
        if (e === undefined) continue;
        if (e.up && e.transport === 'connected' && e.firstUnreportedSendUs >= 0 && nowUs - e.firstUnreportedSendUs >= downUs) {
          e.up = false;
          this.emit('path-down', id, nowUs, `no receiver report for ${this.config.downAfterMs} ms while sending`);
        }
        if (scheduler !== undefined) {
          const en = scheduler.isEnabled(id);
          if (en !== e.enabled) {
            e.enabled = en;
            this.emit(en ? 'path-enabled' : 'path-disabled', id, nowUs, en ? `re-enabled by ${scheduler.name} scheduler` : `disabled by ${scheduler.name} scheduler`);
          }
        }
      }
    } else {
      this.counters.invalidCalls++;
    }
    const out = this.events;
    this.events = [];
    return out;
  }

  /** True when the path exists and is up. */
  isUp(id: PathId): boolean {
    return isValidPathId(id) && this.entries[id]?.up === true;
  }

  /** Transport state of the path, or undefined when unknown. */
  transportState(id: PathId): PathTransportState | undefined {
    return isValidPathId(id) ? this.entries[id]?.transport : undefined;
  }

  /**
   * True for a connected path that is down for silence: the engine should send
   * a small keepalive/probe on it now and then so receiver reports can resume.
   */
  needsKeepalive(id: PathId): boolean {
    if (!isValidPathId(id)) return false;
    const e = this.entries[id];
    return e !== undefined && !e.up && e.transport === 'connected';
  }

  /** Send time (µs) of the oldest data not yet covered by a receiver report; undefined when all is (or the path is unknown). */
  unreportedSinceUs(id: PathId): number | undefined {
    const e = isValidPathId(id) ? this.entries[id] : undefined;
    return e !== undefined && e.firstUnreportedSendUs >= 0 ? e.firstUnreportedSendUs : undefined;
  }

  /**
   * Suspect: the path's reports stopped (data sent more than max(250 ms,
   * 2 x SRTT + 100 ms) ago is still unreported). Schedulers stop using a
   * suspect path at once, before {@link tick} declares it down, so a
   * blackhole costs a few hundred ms of media, not a second.
   * With `fastFailover` the silence threshold is the path's own
   * learned one (`fastFailover.silenceThresholdUs`, src/engine/path-health.ts),
   * but only while another up, enabled path is itself reporting within its
   * own threshold: alone, a lossy slow path has report gaps of 2 x SRTT all
   * the time and would only lose its encoder target.
   * @param srttMs smoothed RTT of a path (ms)
   * @param fastFailover the enabled set and the learned silence thresholds (µs), or undefined = off
   */
  isSuspect(id: PathId, nowUs: number, srttMs: (id: PathId) => number, fastFailover?: { isEnabled(id: PathId): boolean; silenceThresholdUs(id: PathId, srttMs: number): number }): boolean {
    const since = this.unreportedSinceUs(id);
    if (since === undefined) return false;
    const age = nowUs - since;
    if (age > suspectSilenceUs(srttMs(id))) return true;
    if (!fastFailover || age <= fastFailover.silenceThresholdUs(id, srttMs(id))) return false;
    for (let q = 0; q < MAX_PATHS; q++) {
      if (q === id || !this.isUp(q) || !fastFailover.isEnabled(q)) continue;
      const qSince = this.unreportedSinceUs(q);
      if (qSince === undefined || nowUs - qSince <= fastFailover.silenceThresholdUs(q, srttMs(q))) return true;
    }
    return false;
  }

  /** Ids of the registered paths, ascending. */
  pathIds(): PathId[] {
    const out: PathId[] = [];
    for (let id = 0; id < MAX_PATHS; id++) if (this.entries[id] !== undefined) out.push(id);
    return out;
  }

  private entry(id: PathId): PathEntry | undefined {
    const e = isValidPathId(id) ? this.entries[id] : undefined;
    if (e === undefined) this.counters.unknownPathCalls++;
    return e;
  }

  private emit(type: PathEventType, pathId: PathId, atUs: number, reason: string): void {
    if (this.events.length >= this.config.maxEvents) {
      this.events.shift();
      this.counters.droppedEvents++;
    }
    this.events.push({ type, pathId, atUs, reason });
  }
}
