/**
 * Overlay routes of the simulator (issue 16, `overlay` scenario): each path
 * (subflow) of a scenario with `relays` can run over its direct links (arm 0)
 * or through one of its relays (arm k + 1), each with its own links. A relay
 * switch costs what an ICE restart costs, `relaySwitchMs` (sim/net/scenario.ts),
 * spent as the scenario's `relayHandover` says: `'break'`, the path carries
 * nothing in either direction meanwhile; `'make-before-break'`, the old route
 * carries it meanwhile (RFC 8445 §9). Then the new route's links carry it and
 * the senders are told (SenderEngine.onPathRouteChanged, as the browser's
 * session does when the new candidate pair is selected); datagrams already on
 * the old route still arrive.
 *
 * Who picks the route, once per decision slot (1 s, as Zhang & Lei §4.2
 * "Path manager makes decision ... on every 1 second"):
 * - `fixed`: the direct route for the whole call (the paper's "default");
 * - `ucb`: {@link RelayUcbSelector} (src/sched/relay-ucb.ts, Eq. 8-13,
 *   Alg. 2-4) fed at each slot end with the bandwidth estimate of the route
 *   in use (stream 0's estimator bandwidth of that path: RTC-BBR's bw_es,
 *   else its target rate);
 * - `oracle`: the route with the most capacity over the coming slot (the
 *   paper's "oracle", which knows the future of every trace).
 * Every slot records the route taken and the best route in hindsight (most
 * capacity over that slot), for the settle time and time-on-best metrics.
 *
 * Probe-based exploration (`ucb` only, our addition, not in Zhang & Lei; on
 * by default, {@link RelayProbeConfig}): {@link RelayProbeConfig.offsetMs}
 * into every slot the sender sends a train of `packets` padding datagrams of
 * `bytes` back to back over every route of every path (the routes not in use
 * through their relays, as probes over a candidate TURN allocation would
 * go); the receiver's arrival times give each route's bandwidth by
 * dispersion (bytes after the first / (last - first arrival); libwebrtc
 * modules/congestion_controller/goog_cc/probe_bitrate_estimator.cc, without
 * its send-rate cap: the train leaves at once). At the slot's end each route
 * not in use gets that sample through {@link RelayUcbSelector.onProbeSample}
 * (N + 1: explored without moving the media), and the route in use gets its
 * own train's sample as its Eq. 11 reward instead of the congestion
 * controller's bw_es (`current`), so that every arm is scored by the same
 * instrument: bw_es in the slot right after a switch measures the switch gap
 * and StartUp, not the route (with bw_es for the route in use and trains for
 * the others, `current: false`, the two instruments disagree and the media
 * moves 36-40 times a call: p95 339/374/491 ms, seeds 1-3). The selector then
 * keeps a route unless another beats it by {@link PROBED_UCB_DEFAULTS}'
 * margin. A train that delivered fewer than 2 packets
 * scores 0. The report of a train is assumed back before the slot ends (it
 * leaves `offsetMs` = 500 ms before; one-way delays here are <= 160 ms plus
 * a 200 ms queue). Probe packets are counted apart (`probe`) and are not
 * in `armPackets`.
 */
import { Rng } from '../src/core/rng.js';
import type { SenderEngine } from '../src/engine/sender.js';
import { type RelayUcbConfig, RelayUcbSelector } from '../src/sched/relay-ucb.js';
import type { Link } from './net/link.js';
import { DEFAULT_RELAY_SWITCH_MS, type Scenario, buildLink } from './net/scenario.js';

export type RelayPolicy = 'fixed' | 'ucb' | 'oracle';

/** Probe-based exploration of the `ucb` policy (our addition; see the module doc). */
export interface RelayProbeConfig {
  /**
   * Packets per train, [2, 100]. Default 5 (libwebrtc's probe clusters send
   * >= 5, probe_controller.cc). The train of the route in use waits in the
   * media's queue and delays the media behind it: `overlay` p95 ms (margin
   * 0.2) with 10 packets 301/320/313 | 313/325/314, with 5 289/305/304 |
   * 330/310/305 (seeds 1-3 | 4-6).
   */
  packets: number;
  /** Bytes per probe packet (link bytes). Default 1200. */
  bytes: number;
  /** When in the slot the trains leave (ms after the decision, in [0, RELAY_SLOT_MS)). Default 500. */
  offsetMs: number;
  /** Score the route in use by its own train (true) or by the congestion controller's bw_es (false, the paper's). Default true. */
  current: boolean;
}

export const DEFAULT_RELAY_PROBE_CONFIG: RelayProbeConfig = { packets: 5, bytes: 1200, offsetMs: 500, current: true };

/**
 * The selector's defaults when probe trains score every route (overridable,
 * OverlayOptions.ucb): switch hysteresis 0.2 (RelayUcbConfig.switchMargin).
 * Every route is scored each slot, so two close routes (the `overlay` relays'
 * capacities wander +/-30 % around their means) swap ranks often; each swap
 * would cost a switch gap and a StartUp. `overlay` p95 ms (seeds 1-3 | 4-6;
 * oracle 343/291/297 | 304/293/314), 10-packet trains: margin 0
 * 337/335/343 (11 switches a call), 0.1 302/321/317 (5), 0.2 301/320/313 |
 * 313/325/314 (3), 0.3 as 0.2; 5-packet trains: 0.1 290/322/338 |
 * 330/299/296, 0.15 289/308/306 | 330/314/307, 0.2 289/305/304 |
 * 330/310/305, 0.3 as 0.2. Without probes the margin alone does not do it
 * (0.2: 403/351/322, settling 16/31/0 s).
 */
export const PROBED_UCB_DEFAULTS: Partial<RelayUcbConfig> = { switchMargin: 0.2 };

/** A probe datagram on a route's up link (never handed to the engines). */
export interface RelayProbe {
  probe: { i: number; arm: number; train: number };
}

/** Decision slot (ms). */
export const RELAY_SLOT_MS = 1000;

/** What a run with relays reports (SimResult.overlay). */
export interface OverlayResult {
  policy: RelayPolicy;
  /** Route names per path: [direct, relay names...]. */
  routes: string[][];
  /**
   * Per slot: start (s), the arm each path used, the arm with the most
   * capacity over the slot, and every arm's mean capacity over it (kbps, [path][arm]).
   */
  slots: Array<{ atS: number; arms: number[]; best: number[]; capKbps: number[][] }>;
  /** Per path and arm: packets the route's up link delivered, and dropped (queue, loss, blackhole). */
  armPackets: Array<Array<{ delivered: number; dropped: number }>>;
  switches: number;
  /** Datagrams dropped because their path was in a switch gap (both directions). */
  gapDrops: number;
  switchGapMs: number;
  /** How a switch moved the path (Scenario.relayHandover). */
  handover: 'break' | 'make-before-break';
  /** Probe-based exploration: trains sent, probe packets sent / delivered, probe bytes sent (undefined when off). */
  probe?: { trains: number; packetsSent: number; packetsDelivered: number; bytesSent: number };
}

/** Run options of {@link OverlayRoutes} (SimOptions.relayUcb / relayHandover). */
export interface OverlayOptions {
  /** Overrides of the `ucb` policy's selector (src/sched/relay-ucb.ts RelayUcbConfig). */
  ucb?: Partial<RelayUcbConfig>;
  /** How a switch moves a path; overrides the scenario's `relayHandover`. */
  handover?: 'break' | 'make-before-break';
  /** Probe-based exploration of the `ucb` policy: overrides, or false = off (the paper's: explore by moving the media). Default on. */
  probe?: Partial<RelayProbeConfig> | false;
}

export class OverlayRoutes<T> {
  /** [path][arm] up / down links; arm 0 is the path's direct links (the caller's). */
  readonly armUp: Link<T>[][];
  readonly armDown: Link<T>[][];
  private readonly cur: number[];
  private readonly gapUntilUs: number[];
  /** make-before-break: the route each path moves to, and when (µs); undefined when none is pending. */
  private readonly pending: Array<{ arm: number; atUs: number } | undefined>;
  private readonly makeBeforeBreak: boolean;
  private readonly selector: RelayUcbSelector | undefined;
  private nextSlotUs = 0;
  private readonly res: OverlayResult;
  private readonly probeCfg: RelayProbeConfig | undefined;
  private probeDueUs = Number.POSITIVE_INFINITY;
  private train = 0;
  /** This slot's train per [path][arm]: packets delivered, first / last arrival (µs). */
  private trains: Array<Array<{ n: number; firstUs: number; lastUs: number }>> = [];
  /** Probe packets per [path][arm] sent / delivered (kept out of armPackets). */
  private readonly probeSent: number[][];
  private readonly probeDelivered: number[][];

  constructor(
    scenario: Scenario,
    seed: number,
    readonly policy: RelayPolicy,
    direct: { up: Link<T>[]; down: Link<T>[] },
    options: OverlayOptions = {},
  ) {
    this.armUp = scenario.paths.map((p, i) => [direct.up[i], ...(p.relays ?? []).map((r, k) => buildLink<T>(r.up, new Rng((seed * 6151 + 97 * i + 2 * k + 1) >>> 0)))]);
    this.armDown = scenario.paths.map((p, i) => [direct.down[i], ...(p.relays ?? []).map((r, k) => buildLink<T>(r.down, new Rng((seed * 6151 + 97 * i + 2 * k + 2) >>> 0)))]);
    this.cur = scenario.paths.map(() => 0);
    this.gapUntilUs = scenario.paths.map(() => 0);
    this.pending = scenario.paths.map(() => undefined);
    const handover = options.handover ?? scenario.relayHandover ?? 'break';
    this.makeBeforeBreak = handover === 'make-before-break';
    const probing = policy === 'ucb' && options.probe !== false;
    this.selector =
      policy === 'ucb'
        ? new RelayUcbSelector(
            this.armUp.map((a) => a.length),
            { ...(probing ? PROBED_UCB_DEFAULTS : {}), ...(options.ucb ?? {}) },
          )
        : undefined;
    if (probing) {
      const pc = { ...DEFAULT_RELAY_PROBE_CONFIG, ...(options.probe ?? {}) };
      if (!(Number.isInteger(pc.packets) && pc.packets >= 2 && pc.packets <= 100)) throw new RangeError(`OverlayRoutes: probe packets must be an integer in [2, 100], got ${pc.packets}`);
      if (!(Number.isFinite(pc.bytes) && pc.bytes >= 100 && pc.bytes <= 1500)) throw new RangeError(`OverlayRoutes: probe bytes must be in [100, 1500], got ${pc.bytes}`);
      if (!(Number.isFinite(pc.offsetMs) && pc.offsetMs >= 0 && pc.offsetMs < RELAY_SLOT_MS))
        throw new RangeError(`OverlayRoutes: probe offsetMs must be in [0, ${RELAY_SLOT_MS}), got ${pc.offsetMs}`);
      this.probeCfg = pc;
    }
    this.probeSent = this.armUp.map((a) => a.map(() => 0));
    this.probeDelivered = this.armUp.map((a) => a.map(() => 0));
    this.res = {
      policy,
      routes: scenario.paths.map((p) => [`${p.name}:direct`, ...(p.relays ?? []).map((r) => r.name)]),
      slots: [],
      armPackets: [],
      switches: 0,
      gapDrops: 0,
      switchGapMs: scenario.relaySwitchMs ?? DEFAULT_RELAY_SWITCH_MS,
      handover,
      ...(this.probeCfg ? { probe: { trains: 0, packetsSent: 0, packetsDelivered: 0, bytesSent: 0 } } : {}),
    };
  }

  /** A probe datagram arrived at the receiver at `nowUs` (the run loop hands every {@link RelayProbe} here). */
  onProbeArrival(p: RelayProbe, nowUs: number): void {
    const { i, arm, train } = p.probe;
    if (this.probeDelivered[i]?.[arm] === undefined) return;
    this.probeDelivered[i][arm]++;
    if (this.res.probe) this.res.probe.packetsDelivered++;
    const t = this.trains[i]?.[arm];
    if (!t || train !== this.train) return; // a train of an earlier slot
    if (t.n === 0) t.firstUs = nowUs;
    t.lastUs = nowUs;
    t.n++;
  }

  /** Send this slot's probe trains over every route of every path. */
  private sendProbes(nowUs: number): void {
    const pc = this.probeCfg;
    if (!pc || !this.res.probe) return;
    this.train++;
    this.trains = this.armUp.map((arms) => arms.map(() => ({ n: 0, firstUs: 0, lastUs: 0 })));
    this.armUp.forEach((arms, i) => {
      arms.forEach((link, arm) => {
        const item = { probe: { i, arm, train: this.train } } as RelayProbe as unknown as T;
        for (let k = 0; k < pc.packets; k++) link.send(item, pc.bytes, nowUs);
        this.probeSent[i][arm] += pc.packets;
      });
    });
    const n = this.armUp.reduce((a, arms) => a + arms.length, 0);
    this.res.probe.trains += n;
    this.res.probe.packetsSent += n * pc.packets;
    this.res.probe.bytesSent += n * pc.packets * pc.bytes;
  }

  /** The bandwidth (bps) this slot's train measured on path `i`'s arm `arm`: 0 when fewer than 2 packets arrived, undefined when no train went out or its arrivals span no time. */
  private probeEstimate(i: number, arm: number): number | undefined {
    const t = this.trains[i]?.[arm];
    const pc = this.probeCfg;
    if (!t || !pc) return undefined;
    if (t.n < 2) return 0;
    const spanUs = t.lastUs - t.firstUs;
    return spanUs > 0 ? ((t.n - 1) * pc.bytes * 8 * 1e6) / spanUs : undefined;
  }

  /** Does any path of `scenario` have relays? */
  static wanted(scenario: Scenario): boolean {
    return scenario.paths.some((p) => (p.relays?.length ?? 0) > 0);
  }

  /** The link path `i` sends on now in this direction, undefined in a switch gap (the datagram is lost, counted). */
  link(i: number, up: boolean, nowUs: number): Link<T> | undefined {
    if (nowUs < this.gapUntilUs[i]) {
      this.res.gapDrops++;
      return undefined;
    }
    return (up ? this.armUp : this.armDown)[i][this.cur[i]];
  }

  /** The up link of path `i`'s current route (for capacity samples). */
  currentUp(i: number): Link<T> {
    return this.armUp[i][this.cur[i]];
  }

  /** Every relay link (arm >= 1) to poll: path index, direction, link. */
  relayLinks(): Array<{ i: number; up: boolean; link: Link<T> }> {
    const out: Array<{ i: number; up: boolean; link: Link<T> }> = [];
    this.armUp.forEach((arms, i) => {
      for (let k = 1; k < arms.length; k++) out.push({ i, up: true, link: arms[k] }, { i, up: false, link: this.armDown[i][k] });
    });
    return out;
  }

  /** When the next decision or pending make-before-break move is due (µs). */
  nextEventUs(): number {
    let t = Math.min(this.nextSlotUs, this.probeDueUs);
    for (const p of this.pending) if (p && p.atUs < t) t = p.atUs;
    return t;
  }

  /** Move path `i` onto arm `arm` now and tell the senders. */
  private move(i: number, arm: number, nowUs: number, senders: readonly SenderEngine[]): void {
    this.cur[i] = arm;
    this.res.switches++;
    for (const s of senders) s.onPathRouteChanged(i);
    if (!this.makeBeforeBreak) this.gapUntilUs[i] = nowUs + this.res.switchGapMs * 1000;
  }

  /**
   * At a slot boundary: feed the finished slot's bandwidth estimates (ucb),
   * pick each path's route for the next slot and switch (the sender's
   * estimators are told, SenderEngine.onPathRouteChanged).
   * @param capacityBps mean capacity (bps) of a link over [fromMs, toMs)
   */
  tick(nowUs: number, senders: readonly SenderEngine[], capacityBps: (link: Link<T>, fromMs: number, toMs: number) => number): void {
    this.pending.forEach((p, i) => {
      if (p && nowUs >= p.atUs) {
        this.pending[i] = undefined;
        if (p.arm !== this.cur[i]) this.move(i, p.arm, nowUs, senders);
      }
    });
    if (nowUs >= this.probeDueUs) {
      this.probeDueUs = Number.POSITIVE_INFINITY;
      this.sendProbes(nowUs);
    }
    if (nowUs < this.nextSlotUs) return;
    const nowMs = nowUs / 1000;
    const n = this.cur.length;
    if (this.res.slots.length > 0) {
      // Best route in hindsight for the slot that just ended.
      this.closeSlot(this.res.slots[this.res.slots.length - 1], nowMs, capacityBps);
    }
    let next: number[];
    if (this.policy === 'ucb' && this.selector) {
      if (this.res.slots.length > 0) {
        const est = senders[0].estimatorStats();
        for (let i = 0; i < n; i++) {
          // Probe-based exploration (our addition): the routes not in use are scored by their trains.
          for (let k = 0; k < this.armUp[i].length; k++) {
            if (k === this.cur[i]) continue;
            const pb = this.probeEstimate(i, k);
            if (pb !== undefined) this.selector.onProbeSample(i, k, pb, nowMs);
          }
          const own = this.probeCfg?.current ? this.probeEstimate(i, this.cur[i]) : undefined;
          if (own !== undefined) {
            this.selector.onBandwidthSample(i, this.cur[i], own, nowMs);
            continue;
          }
          const e = est.find((s) => s.id === i);
          // Eq. 11's bw is the congestion controller's bandwidth estimate (RTC-BBR's bw_es, the windowed max
          // delivery rate), not its pacing rate: a probe-up or drain gain must not move the reward.
          if (!e) continue;
          const bw = 'bwBps' in e && typeof e.bwBps === 'number' && e.bwBps > 0 ? e.bwBps : e.targetRateBps;
          this.selector.onBandwidthSample(i, this.cur[i], bw, nowMs);
        }
      }
      next = this.selector.decide(nowMs);
      if (this.probeCfg) this.probeDueUs = nowUs + this.probeCfg.offsetMs * 1000;
    } else if (this.policy === 'oracle') {
      next = this.armUp.map((arms) => argmax(arms.map((l) => capacityBps(l, nowMs, nowMs + RELAY_SLOT_MS))));
    } else next = this.cur.map(() => 0);
    for (let i = 0; i < n; i++) {
      if (!this.makeBeforeBreak) {
        if (next[i] !== this.cur[i]) this.move(i, next[i], nowUs, senders);
        continue;
      }
      // make-before-break: the old route carries the path until the new one is set up (a decision
      // back to the current route cancels a pending move).
      this.pending[i] = next[i] === this.cur[i] ? undefined : { arm: next[i], atUs: nowUs + this.res.switchGapMs * 1000 };
    }
    // The slot's route is the one decided (with make-before-break the path moves relaySwitchMs into the slot).
    this.res.slots.push({ atS: nowMs / 1000, arms: [...next], best: [], capKbps: [] });
    this.nextSlotUs = nowUs + RELAY_SLOT_MS * 1000;
  }

  /** Fill a finished slot's capacities and best routes in hindsight. */
  private closeSlot(slot: OverlayResult['slots'][number], endMs: number, capacityBps: (link: Link<T>, fromMs: number, toMs: number) => number): void {
    const to = Math.max(slot.atS * 1000 + 1, endMs);
    slot.capKbps = this.armUp.map((arms) => arms.map((l) => Math.round(capacityBps(l, slot.atS * 1000, to) / 1000)));
    slot.best = slot.capKbps.map((caps) => argmax(caps));
  }

  /** The result (the last slot's best route filled in at `endUs`, every route's packet counts). */
  result(endUs: number, capacityBps: (link: Link<T>, fromMs: number, toMs: number) => number): OverlayResult {
    const last = this.res.slots[this.res.slots.length - 1];
    if (last && last.best.length === 0) this.closeSlot(last, endUs / 1000, capacityBps);
    // Media only: probe packets are taken out (a probe still in flight at the end counts as dropped).
    this.res.armPackets = this.armUp.map((arms, i) =>
      arms.map((l, k) => {
        const st = l.stats();
        const pd = this.probeDelivered[i][k];
        return { delivered: st.delivered - pd, dropped: Math.max(0, st.dropped.queue + st.dropped.loss + st.dropped.blackhole - (this.probeSent[i][k] - pd)) };
      }),
    );
    return this.res;
  }
}

function argmax(xs: number[]): number {
  let b = 0;
  for (let k = 1; k < xs.length; k++) if (xs[k] > xs[b]) b = k;
  return b;
}

/**
 * Settle time after a change at `changeS` for path `path`: seconds from the
 * change to the start of the first slot from which the route taken equals
 * the best route in hindsight for `holdSlots` slots in a row. Undefined when
 * it never settles before the end.
 */
export function settleTimeS(r: OverlayResult, path: number, changeS: number, holdSlots = 5): number | undefined {
  const s = r.slots.filter((x) => x.atS >= changeS - 1e-9 && x.best.length > 0);
  for (let k = 0; k + holdSlots <= s.length; k++) {
    let ok = true;
    for (let m = k; m < k + holdSlots; m++) if (s[m].arms[path] !== s[m].best[path]) ok = false;
    if (ok) return s[k].atS - changeS;
  }
  return undefined;
}

/** Fraction of slots (from `fromS`) on which path `path` used the best route in hindsight. */
export function timeOnBest(r: OverlayResult, path: number, fromS = 0): number {
  const s = r.slots.filter((x) => x.atS >= fromS && x.best.length > 0);
  if (s.length === 0) return 0;
  return s.filter((x) => x.arms[path] === x.best[path]).length / s.length;
}

/**
 * What the overlay benchmark assumes of a run, checked on the run itself
 * (a broken assumption makes its numbers meaningless):
 * - the degrading route really degrades: path `path`'s arm `arm` has less
 *   than half its capacity over the 10 s after `changeS` than over the 10 s before;
 * - every path carried media: each path's routes delivered packets, and every
 *   route a path used for at least 2 slots delivered some;
 * - an oracle run really switches path `path` at the change (a different
 *   route after it than just before), a `fixed` run never switches;
 * - a run with probe trains sent them and most arrived (>= 90 % of the packets).
 * @returns one line per broken assumption ([] when all hold)
 */
export function overlayChecks(o: OverlayResult, changeS: number, degrading: { path: number; arm: number } = { path: 0, arm: 1 }): string[] {
  const out: string[] = [];
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
  const cap = (from: number, to: number) => mean(o.slots.filter((x) => x.atS >= from && x.atS < to && x.capKbps.length > 0).map((x) => x.capKbps[degrading.path]?.[degrading.arm] ?? Number.NaN));
  const before = cap(changeS - 10, changeS);
  const after = cap(changeS, changeS + 10);
  if (!(after < 0.5 * before)) out.push(`route ${o.routes[degrading.path]?.[degrading.arm] ?? '?'} does not degrade at ${changeS} s (${before.toFixed(0)} -> ${after.toFixed(0)} kbps)`);
  o.armPackets.forEach((arms, i) => {
    if (arms.reduce((a, x) => a + x.delivered, 0) === 0) out.push(`path ${o.routes[i]?.[0]} carried nothing`);
    arms.forEach((x, k) => {
      const used = o.slots.filter((sl) => sl.arms[i] === k).length;
      if (used >= 2 && x.delivered === 0) out.push(`route ${o.routes[i]?.[k]} was used ${used} slots and delivered nothing`);
    });
  });
  if (o.policy === 'oracle') {
    const pre = o.slots.filter((x) => x.atS < changeS).at(-1)?.arms[degrading.path];
    const post = o.slots.find((x) => x.atS >= changeS + 1)?.arms[degrading.path];
    if (pre === undefined || post === undefined || pre === post) out.push(`the oracle does not switch ${o.routes[degrading.path]?.[0]} at the change (${pre} -> ${post})`);
  }
  if (o.policy === 'fixed' && o.switches > 0) out.push(`a fixed run switched ${o.switches} times`);
  if (o.probe && !(o.probe.trains > 0 && o.probe.packetsDelivered >= 0.9 * o.probe.packetsSent))
    out.push(`probe trains: ${o.probe.trains} sent, ${o.probe.packetsDelivered} of ${o.probe.packetsSent} packets delivered`);
  return out;
}

/** Issue 16's acceptance: settle within this many seconds of a change. */
export const OVERLAY_SETTLE_TARGET_S = 10;
/** ... and a p95 latency within this factor of the oracle's. */
export const OVERLAY_P95_FACTOR = 1.1;

/**
 * The overlay section of summary.md (`npm run bench -- --scenario overlay`):
 * per configuration the p95 latency, freezes, goodput, relay switches, time
 * on the best route and the settle time after each path's worst change, and
 * issue 16's acceptance for every `X` that has an `X+oracle` twin (its
 * worst seed). Empty when no run had relays.
 * @param changeS when the scenario's relay degrades (s)
 */
export function renderOverlay(
  entries: ReadonlyArray<{ config: string; result: { seed: number; latencyMs: { p95: number }; freezes: { count: number; totalMs: number }; goodputBps: number; overlay?: OverlayResult } }>,
  changeS = 40,
): string {
  const runs = entries.filter((e) => e.result.overlay);
  if (runs.length === 0) return '';
  const lines = [
    '',
    '## Overlay: relay selection',
    '',
    `Relay of subflow 0 degrades at ${changeS} s. Settle = seconds from the change until the route taken equals the best route in hindsight (most capacity over the 1 s slot) for 5 slots in a row.`,
    '',
  ];
  lines.push(
    '| config | seed | p95 latency ms | freezes (total ms) | goodput kbps | switches | on best route (path 0 / 1) | settle s (path 0 / 1) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const e of runs) {
    const o = e.result.overlay as OverlayResult;
    const settle = [0, 1].map((p) => (p < o.routes.length ? (settleTimeS(o, p, changeS)?.toFixed(0) ?? 'never') : '-')).join(' / ');
    const best = [0, 1].map((p) => (p < o.routes.length ? `${Math.round(100 * timeOnBest(o, p))} %` : '-')).join(' / ');
    lines.push(
      `| ${e.config} | ${e.result.seed} | ${e.result.latencyMs.p95.toFixed(0)} | ${e.result.freezes.count} (${e.result.freezes.totalMs.toFixed(0)}) | ${Math.round(e.result.goodputBps / 1000)} | ${o.switches} | ${best} | ${settle} |`,
    );
  }
  const probed = runs.filter((e) => e.result.overlay?.probe);
  if (probed.length > 0) {
    const kbps = probed.map((e) => {
      const o = e.result.overlay as OverlayResult;
      const s = Math.max(1, o.slots.length) * (RELAY_SLOT_MS / 1000);
      return `${e.config} seed ${e.result.seed} ${Math.round(((o.probe?.bytesSent ?? 0) * 8) / s / 1000)}`;
    });
    lines.push('', `Probe trains (probe-based exploration, sim/overlay.ts), kbps over all routes: ${kbps.join(', ')}.`);
  }
  lines.push('', '### Assumptions (checked on every run: sim/overlay.ts overlayChecks)', '');
  const broken = runs.flatMap((e) => overlayChecks(e.result.overlay as OverlayResult, changeS).map((m) => `- BROKEN: ${e.config} seed ${e.result.seed}: ${m}`));
  lines.push(...(broken.length > 0 ? broken : [`- all hold on ${runs.length} runs: the degrading relay degrades, every path and every route used carried media, the oracle switches at the change`]));
  lines.push('', '### Acceptance (issue 16)', '');
  for (const e of runs) {
    const oracle = runs.find((x) => x.config === `${e.config}+oracle` && x.result.seed === e.result.seed);
    if (!oracle) continue;
    const o = e.result.overlay as OverlayResult;
    const settle = settleTimeS(o, 0, changeS);
    const p95 = e.result.latencyMs.p95;
    const op95 = oracle.result.latencyMs.p95;
    const okSettle = settle !== undefined && settle <= OVERLAY_SETTLE_TARGET_S;
    const okP95 = p95 <= OVERLAY_P95_FACTOR * op95;
    lines.push(
      `- ${e.config} seed ${e.result.seed}: settles on the best relay ${settle === undefined ? 'never' : `${settle.toFixed(0)} s`} after the change (target <= ${OVERLAY_SETTLE_TARGET_S} s): ${okSettle ? 'PASS' : 'FAIL'}; p95 latency ${p95.toFixed(0)} ms vs oracle ${op95.toFixed(0)} ms = ${(p95 / op95).toFixed(2)}x (target <= ${OVERLAY_P95_FACTOR}x): ${okP95 ? 'PASS' : 'FAIL'}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
