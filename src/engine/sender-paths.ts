/**
 * The sender's paths and their liveness, in one place: the
 * {@link PathManager} (up/down from transport state and receiver-report
 * silence, suspicion), the scheduler's enabled set and the path hysteresis'
 * demotions combine here into the predicates the engine uses: live (up and
 * not suspect), usable (live, enabled, not demoted: carries media and counts
 * in the encoder target), and the snapshot the scheduler sees.
 * I/O-free: times are passed in (µs).
 */
import type { PathId, PathState } from '../core/types.js';
import type { PathHysteresis } from '../sched/path-hysteresis.js';
import type { PathHealth } from './path-health.js';
import { PathManager } from '../sched/path-manager.js';
import type { Scheduler } from '../sched/types.js';
import { encodeControl } from '../wire/encode.js';
import type { PacketBody } from '../wire/types.js';
import { MIN_PATH_RATE_BPS, ROUTE_SWITCH_MAX_US, type SenderPath } from './sender-path.js';
import type { SenderPathStats } from './types.js';

/** Keepalive padding on a path held down for silence: interval (µs) and size (bytes). */
const KEEPALIVE_INTERVAL_US = 100_000;
const KEEPALIVE_BYTES = 32;
/** Padding on a demoted path: interval (µs; its loss and RTT stay measured) and size (bytes). */
const DEMOTED_PADDING_INTERVAL_US = 50_000;
const DEMOTED_PADDING_BYTES = 100;

export class SenderPaths {
  /** A path with no receiver report for 500 ms while data was sent on it is down. */
  readonly manager = new PathManager({ downAfterMs: 500 });
  private readonly map = new Map<PathId, SenderPath>();
  private readonly srtt = (id: PathId): number => this.map.get(id)?.estimator.srttMs() ?? 0;

  private readonly fastFailoverRule: { isEnabled(id: PathId): boolean; silenceThresholdUs(id: PathId, srttMs: number): number } | undefined;

  constructor(
    private readonly scheduler: Scheduler,
    /** Path demotion with hysteresis, undefined when off. */
    readonly hysteresis: PathHysteresis | undefined,
    /** Learned silence thresholds and sustained loss per path (src/engine/path-health.ts). */
    readonly health: PathHealth,
    /** Fast failover: suspicion after the path's learned silence threshold while another path reports. */
    fastFailover: boolean,
    /** See {@link isDemoted} (µs; 0 = any live path is an alternative). */
    private readonly fallbackEstablishUs = 0,
    /** With fallbackEstablishUs > 0: a path gone (true: suspect or down; 'down': down) within that time is benched like a demoted one (see isDemoted). */
    private readonly probation: boolean | 'down' = false,
    /** SenderEngineConfig.probationMinAltFraction (see {@link isDemoted}): with probation, an alternative must be estimated at >= this fraction of the benched path's estimate (0 = any). */
    private readonly altMin = 0,
    /** SenderEngineConfig.gapMinAltFraction (see {@link keptThroughGap}; 0 = off; the engine's default 0.1). */
    private readonly gapAltMin = 0,
    /** SenderEngineConfig.gapKeepMs in µs (see {@link keptThroughGap}; 0 = until the path manager declares the path down). */
    private readonly gapKeepUs = 0,
  ) {
    this.fastFailoverRule = fastFailover ? { isEnabled: (id) => this.scheduler.isEnabled(id), silenceThresholdUs: (id, srttMs) => this.health.silenceThresholdUs(id, srttMs) } : undefined;
  }

  get size(): number {
    return this.map.size;
  }

  has(id: PathId): boolean {
    return this.map.has(id);
  }

  get(id: PathId): SenderPath | undefined {
    return this.map.get(id);
  }

  values(): IterableIterator<SenderPath> {
    return this.map.values();
  }

  /** Register a path in its transport state. */
  add(p: SenderPath, nowUs: number): void {
    this.map.set(p.id, p);
    this.manager.addPath(p.id, nowUs);
    this.manager.onTransportState(p.id, p.linkState, nowUs);
  }

  /** Forget a path; false when unknown. */
  remove(id: PathId, nowUs: number): boolean {
    if (!this.map.delete(id)) return false;
    this.hysteresis?.remove(id);
    this.health.remove(id);
    this.manager.removePath(id, nowUs);
    return true;
  }

  /** Up (path manager) right now. */
  isUp(p: SenderPath): boolean {
    return this.manager.isUp(p.id);
  }

  /** Suspect: reports stopped ({@link PathManager.isSuspect}). */
  isSuspect(p: SenderPath, nowUs: number): boolean {
    return this.manager.isSuspect(p.id, nowUs, this.srtt, this.fastFailoverRule);
  }

  /** Up and reporting (not suspect). */
  isLive(p: SenderPath, nowUs: number): boolean {
    return this.manager.isUp(p.id) && !this.isSuspect(p, nowUs);
  }

  /**
   * Kept through a feedback gap (SenderEngineConfig.gapMinAltFraction > 0):
   * the path is silent (suspect: no report for its learned threshold) or
   * on probation after such a silence, but still up (not silent for the path
   * manager's downAfterMs; with SenderEngineConfig.gapKeepMs, silent for
   * less than that while its transport is connected), enabled, not demoted by the hysteresis, no
   * packet it sent after what its last report could cover (the report's arrival less one SRTT) was NACKed (the receiver, over
   * another path, saw it lose: a blackhole of both directions, not a
   * feedback gap), and the live alternatives (at least one) are estimated at less than that
   * fraction of its rate in sum. Such a path keeps carrying media and counts
   * in the encoder target: moving the call to the alternatives would cut
   * the target below the fraction, and frames already encoded for it wait
   * in the weak path's pacer, while the silence is first of all one of the
   * reverse direction (an LTE downlink dead for 150-750 ms while its uplink
   * delivers, mm:tmobile+att). A single path's call keeps a silent path the
   * same way (see {@link lastResort}); libwebrtc keeps sending on a silent
   * path until ICE consent fails (RFC 7675 §5.1: 30 s), its rate held by the
   * congestion window (here: the congestion-window pushback). With no live
   * alternative the multipath rule stands (nothing is kept).
   */
  keptThroughGap(p: SenderPath, nowUs: number): boolean {
    // A NACK of a packet sent during the silence: the forward direction loses too (a blackhole, not a feedback gap).
    if (
      !(this.gapAltMin > 0) ||
      !(this.manager.isUp(p.id) || this.keptDown(p, nowUs)) ||
      !this.scheduler.isEnabled(p.id) ||
      this.hysteresis?.isDemoted(p.id) === true ||
      !(p.nackedInGapUs < (p.estimator.lastReportUs() ?? -Infinity))
    )
      return false;
    const alt = this.liveAlts(p, nowUs);
    return alt.n > 0 && alt.bps < this.gapAltMin * p.rateBps();
  }

  /**
   * Down for silence only (its transport connected) for less than
   * {@link gapKeepUs} of silence: with gapKeepMs, a path kept through a
   * feedback gap stays kept past the path manager's downAfterMs.
   */
  private keptDown(p: SenderPath, nowUs: number): boolean {
    const since = this.manager.unreportedSinceUs(p.id);
    return this.gapKeepUs > 0 && this.manager.transportState(p.id) === 'connected' && since !== undefined && nowUs - since < this.gapKeepUs;
  }

  /** The live, enabled, not demoted paths other than `p`: how many, and the sum of their rates (bps). */
  private liveAlts(p: SenderPath, nowUs: number): { n: number; bps: number } {
    let bps = 0;
    let n = 0;
    for (const q of this.map.values()) {
      if (q === p || this.hysteresis?.isDemoted(q.id) === true || !this.scheduler.isEnabled(q.id) || !this.isLive(q, nowUs)) continue;
      bps += q.rateBps();
      n++;
    }
    return { n, bps };
  }

  /** Live, or silent but {@link keptThroughGap}. */
  private carries(p: SenderPath, nowUs: number): boolean {
    return this.isLive(p, nowUs) || this.keptThroughGap(p, nowUs);
  }

  /**
   * Benched: demoted by the hysteresis, or (with probation) not established,
   * i.e. gone within {@link fallbackEstablishUs}, while another path can
   * carry the call: live, enabled, not demoted and, with
   * fallbackEstablishUs > 0, established too, with an SRTT at most the
   * hysteresis' `promoteMaxRttExcessMs` above this path's. A path whose
   * reports trickle in after a long silence (a downlink at a packet a
   * second: it is live for a few hundred ms after each) or that only
   * delivers far later is no alternative: benching a reporting path for it
   * moved the whole call, and the encoder target, onto it for those
   * moments (SenderEngineConfig.fallbackEstablishMs). When no path is
   * established (both just came back) nobody is benched for it. With
   * `probationMinAltFraction` > 0 (SenderEngineConfig) a path on probation
   * only (not demoted) yields only to a path whose estimate is at least that
   * fraction of its own: a backup at 0.1 Mbps is no alternative to a path
   * that carried 5 Mbps and reports again after a feedback gap. A path
   * whose reports showed a clean return after its last silence
   * (SenderEngineConfig.cleanReturn, SenderPath.cleanReturnUs) is not on
   * probation; as an alternative it still needs fallbackEstablishUs.
   */
  isDemoted(p: SenderPath, nowUs: number): boolean {
    const h = this.hysteresis;
    const est = this.fallbackEstablishUs;
    // A clean return (SenderEngineConfig.cleanReturn) after the last silence ends the probation of a path
    // estimated at least at its live alternatives' sum: benching it would move the call onto weaker paths.
    const goneUs = this.probation === 'down' ? p.lastDownUs : p.lastGoneUs;
    const probation = est > 0 && this.probation !== false && nowUs - goneUs < est && !(p.cleanReturnUs >= goneUs && this.liveAlts(p, nowUs).bps <= p.rateBps());
    if (!h?.isDemoted(p.id) && !probation) return false;
    // Probation only, next to alternatives too weak to carry the call (SenderEngineConfig.gapMinAltFraction).
    if (!h?.isDemoted(p.id) && this.keptThroughGap(p, nowUs)) return false;
    const excessMs = h?.config.promoteMaxRttExcessMs ?? 100;
    // Probation only (probationMinAltFraction > 0): an alternative whose estimate is a small fraction of this path's cannot carry the call.
    const minBps = h?.isDemoted(p.id) ? 0 : this.altMin * p.estimator.targetRateBps();
    for (const q of this.map.values()) {
      if (q === p || h?.isDemoted(q.id) || !this.scheduler.isEnabled(q.id) || !this.isLive(q, nowUs)) continue;
      if (est > 0 && (nowUs - q.lastGoneUs < est || q.estimator.srttMs() > p.estimator.srttMs() + excessMs)) continue;
      if (!(q.estimator.targetRateBps() < minBps)) return true; // NaN (a bad fraction): any alternative, as 0
    }
    return false;
  }

  /**
   * Switching relays: the path's route changed (SenderEngine.onPathRouteChanged)
   * and the new route has not acknowledged a packet yet (at most
   * ROUTE_SWITCH_MAX_US). Media waits for the new route (an ICE restart
   * that breaks before it makes would lose it); keepalives find it.
   */
  isSwitching(p: SenderPath, nowUs: number): boolean {
    return p.routeGraceUntilUs === Number.POSITIVE_INFINITY && nowUs - p.routeChangeUs <= ROUTE_SWITCH_MAX_US;
  }

  /** Live, enabled by the scheduler, not demoted and not switching relays (or the last resort): a path that carries media and counts in the encoder target. */
  isUsable(p: SenderPath, nowUs: number): boolean {
    return (this.carries(p, nowUs) && this.scheduler.isEnabled(p.id) && !this.isDemoted(p, nowUs) && !this.isSwitching(p, nowUs)) || p === this.lastResort(nowUs);
  }

  /**
   * When the scheduler's only path is not live (its receiver reports
   * stopped), it still carries media while connected: silence of the reports is a
   * feedback outage first (a cellular downlink fades while the uplink
   * works), and stopping the media then turned every feedback gap into a
   * freeze plus a key frame. libwebrtc likewise keeps sending on a silent
   * path until ICE consent fails, its rate held by the congestion window
   * (here: the GCC feedback timeout and the congestion-window pushback).
   * Only in a single-path call (see the loop for why not with several).
   */
  lastResort(nowUs: number): SenderPath | undefined {
    let only: SenderPath | undefined;
    for (const p of this.map.values()) {
      if (!this.scheduler.isEnabled(p.id)) continue;
      // With several paths failover is the rule; sending on when all of them are
      // silent (short gaps, mostly while the path reported last dips) cost converge
      // ~1 s of freeze per 120 s on mm:tmobile+att (3 seeds).
      if (only !== undefined || this.isLive(p, nowUs)) return undefined;
      only = p;
    }
    // A path never heard from is not known to carry anything (at the start of a call a slow
    // first report then kept the start rate on a 0.4 Mbps path: wc:21_2 +1.7 s frozen).
    // A stalled sink is refused: a datachannel holding a backlog (SCTP waits for SACKs on the
    // silent reverse link), where more data only backs its retransmission timer off and lengthens
    // the stall; a sink with a second pipe (src/transport/stall-fallback.ts) answers for itself.
    // The path manager's transport state, not the link's: a path the app disabled (SenderEngine.setPathEnabled) is 'closed' there.
    if (!only || this.manager.transportState(only.id) !== 'connected' || only.estimator.lastReportUs() === undefined || only.sink.stalled?.()) return undefined;
    return only;
  }

  /**
   * Sum of S_i over the usable paths (bps): the encoder target before caps.
   * Each path counts less the share of its send rate over the last second
   * that was retransmissions and FEC, capped at `overheadMax` (0..1;
   * SenderEngineConfig.protectionOverheadMax, default 0.5; 0 = S_i as is).
   */
  usableRateBps(nowUs: number, overheadMax: number): number {
    let sum = 0;
    for (const p of this.map.values()) {
      // Less the path's protection overhead: libwebrtc FecControllerDefault::UpdateFecRates
      // (modules/video_coding/fec_controller_default.cc) gives the encoder estimate x
      // (1 - (NACK + FEC sent rate) / total sent rate), the share capped at 0.5.
      if (this.isUsable(p, nowUs)) sum += p.rateBps() * (1 - Math.min(overheadMax, p.protection.rateBps(nowUs) / (p.sendRate.rateBps(nowUs) || 1)));
    }
    return sum;
  }

  /**
   * Congestion window over the usable paths (bytes): sum of S_i x (SRTT_i +
   * `queueMs`), and the bytes outstanding on them (in flight + queued at the sender).
   */
  congestionWindow(nowUs: number, queueMs: number): { windowBytes: number; outstandingBytes: number } {
    let windowBytes = 0;
    let outstandingBytes = 0;
    for (const p of this.map.values()) {
      if (!this.isUsable(p, nowUs)) continue;
      windowBytes += (p.rateBps() * (p.estimator.srttMs() + queueMs)) / 8000;
      outstandingBytes += p.estimator.inflightBytes() + p.pacer.queuedBytes() + p.sink.bufferedAmount();
    }
    return { windowBytes, outstandingBytes };
  }

  /** Shortest time (ms) a usable path needs to drain its sender queue at its rate; Infinity when none is usable. */
  minDrainMs(nowUs: number): number {
    let minDrainMs = Infinity;
    for (const p of this.map.values()) {
      if (!this.isUsable(p, nowUs)) continue;
      const rate = Math.max(MIN_PATH_RATE_BPS, p.rateBps());
      const drainMs = (p.queuedBytes() * 8000) / rate;
      if (drainMs < minDrainMs) minDrainMs = drainMs;
    }
    return minDrainMs;
  }

  /** Snapshot of the paths as the scheduler sees them. */
  states(nowUs: number): PathState[] {
    const out: PathState[] = [];
    for (const p of this.map.values()) {
      const e = p.estimator;
      out.push({
        id: p.id,
        up: (this.carries(p, nowUs) && !this.isDemoted(p, nowUs) && !this.isSwitching(p, nowUs)) || p === this.lastResort(nowUs),
        rateBps: p.rateBps(),
        goodputBps: e.ackedRateBps() ?? 0,
        srttMs: e.srttMs(),
        minRttMs: e.minRttMs(),
        lossRate: e.lossRate(),
        inflightBytes: e.inflightBytes(),
        queuedBytes: p.queuedBytes(),
      });
    }
    return out;
  }

  /**
   * {@link states} for retransmissions: a path whose oldest unreported packet
   * is older than its learned silence threshold ({@link PathHealth.silenceThresholdUs},
   * ms-scale: max(100 ms, 2 x SRTT, the tail of its own report gaps)) is
   * marked not up, as long as another path is up and not silent. Its recent
   * packets are probably lost with it (a blackhole before the path is
   * declared suspect), so a retransmission sent there would be lost too and
   * the receiver would NACK again one RTT later. A retransmission costs the
   * same bytes on any path, so a false alarm (a bursty LTE uplink) costs
   * nothing but the choice of path. Multipath TCP reinjects a stalled
   * subflow's data on the other subflows the same way (Raiciu et al., "How
   * Hard Can It Be? Designing and Implementing a Deployable Multipath TCP",
   * NSDI 2012, §4.2 opportunistic retransmission; RFC 6182 §3.3.1).
   */
  retransmissionStates(nowUs: number): PathState[] {
    const states = this.states(nowUs);
    const silent = new Set<PathId>();
    for (const p of this.map.values()) {
      const since = this.manager.unreportedSinceUs(p.id);
      if (since !== undefined && nowUs - since > this.health.silenceThresholdUs(p.id, p.estimator.srttMs())) silent.add(p.id);
    }
    if (silent.size === 0 || !states.some((s) => s.up && !silent.has(s.id))) return states;
    for (const s of states) if (silent.has(s.id)) s.up = false;
    return states;
  }

  /** Lowest SRTT over up paths (ms), 100 when none. */
  minSrttMs(): number {
    let m = Infinity;
    for (const p of this.map.values()) if (this.manager.isUp(p.id)) m = Math.min(m, p.estimator.srttMs());
    return Number.isFinite(m) ? m : 100;
  }

  /** True when at least one path the scheduler uses can carry packets now (the last resort counts). */
  hasUpPath(nowUs: number): boolean {
    for (const p of this.map.values()) if (this.manager.isUp(p.id) && this.scheduler.isEnabled(p.id)) return true;
    return this.lastResort(nowUs) !== undefined;
  }

  /**
   * A connected path that the path manager holds down gets no scheduled
   * packets (unless {@link keptThroughGap}: SenderEngineConfig.gapKeepMs);
   * a small padding packet every 100 ms (with its own per-path seq) lets
   * its receiver reports, and so the path, come back. A demoted path
   * gets a larger one every 50 ms so its loss and RTT stay measured.
   */
  sendKeepalives(now: number): void {
    const mgr = this.manager;
    for (const p of this.map.values()) {
      const demoted = !mgr.needsKeepalive(p.id) && mgr.isUp(p.id) && this.isDemoted(p, now);
      if (!demoted && !mgr.needsKeepalive(p.id) && !this.isSwitching(p, now)) continue;
      if (now - p.lastKeepaliveUs < (demoted ? DEMOTED_PADDING_INTERVAL_US : KEEPALIVE_INTERVAL_US)) continue;
      p.lastKeepaliveUs = now;
      const size = demoted ? DEMOTED_PADDING_BYTES : KEEPALIVE_BYTES;
      const sent = p.send((pathSeq) => encodeControl({ pathId: p.id, pathSeq, sendTimeUs: now }, { kind: 'padding', padding: { size } }), now, { rate: false, drain: false });
      // A demoted path must be able to go silent (its hysteresis restarts) like one that carries media.
      if (sent && demoted) mgr.onDataSent(p.id, now);
    }
  }

  /** Per-path statistics (SenderStats.paths). */
  stats(nowUs: number): SenderPathStats[] {
    let totalMedia = 0;
    for (const p of this.map.values()) totalMedia += p.stats.mediaPacketsSent;
    const out: SenderPathStats[] = [];
    for (const p of this.map.values()) {
      const e = p.estimator;
      out.push({
        id: p.id,
        up: this.isUp(p),
        enabled: this.scheduler.isEnabled(p.id),
        demoted: this.isDemoted(p, nowUs),
        ...p.stats,
        sharePct: totalMedia > 0 ? (100 * p.stats.mediaPacketsSent) / totalMedia : 0,
        rateBps: p.rateBps(),
        goodputBps: e.ackedRateBps() ?? 0,
        rttMs: e.srttMs(),
        minRttMs: e.minRttMs(),
        lossPct: 100 * e.lossRate(),
        queuedBytes: p.queuedBytes(),
        sendRateBps: p.sendRate.rateBps(nowUs),
      });
    }
    return out;
  }

  /** Send a control message on every connected path; returns how many took it. */
  broadcast(body: PacketBody, now: number): number {
    let sent = 0;
    for (const p of this.map.values()) {
      if (p.linkState !== 'connected') continue;
      if (p.sink.send(encodeControl({ pathId: p.id, pathSeq: 0, sendTimeUs: now }, body))) sent++;
    }
    return sent;
  }

  /**
   * True while the tail of the latest key frame still waits in the
   * datachannel send buffer of every connected path that `carries` media (and
   * there is at least one): a new key frame could only queue behind it. A path
   * in the pacer stage does not count (the pacer purges stale frames for a new
   * key frame), nor does a path that never took the key frame (it is free to
   * carry a fresh one).
   */
  keyFrameBufferedOnEvery(carries: (id: PathId) => boolean): boolean {
    let held = false;
    for (const p of this.map.values()) {
      if (p.linkState !== 'connected' || !carries(p.id)) continue;
      if (p.keyTailBytes === undefined || p.sink.bufferedAmount() <= p.stats.bytesSent - p.keyTailBytes) return false;
      held = true;
    }
    return held;
  }

  /**
   * True while packets of frame `frameId` of stream `streamId` (the latest key frame) still wait at this sender: in
   * a pacer, or in a datachannel's send buffer (more bytes buffered than were
   * written after the key frame's last packet). A stalled datachannel (SCTP
   * waits for SACKs when the reverse link fades) cannot drop what it holds,
   * so a key frame sent for a request arriving then would only queue behind
   * the one still waiting, and each such key frame lengthened the stall's
   * backlog: the receiver's requests repeat every few hundred ms while
   * nothing arrives.
   */
  holdsFrame(streamId: number, frameId: number): boolean {
    for (const p of this.map.values()) {
      if (p.keyTailBytes !== undefined && p.sink.bufferedAmount() > p.stats.bytesSent - p.keyTailBytes) return true;
      if (p.pacer.has((it) => !it.probe && it.packet.streamId === streamId && it.packet.frameId === frameId)) return true;
    }
    return false;
  }
}
