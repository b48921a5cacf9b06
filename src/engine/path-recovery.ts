/**
 * What the sender does when a path fails and when it comes back:
 * - failover probes: the surviving paths' estimates sit at the rate they
 *   were app-limited to; probe them at once so the encoder target recovers
 *   within an RTT;
 * - fast failover (SenderEngineConfig.fastFailover): duplicate a silent
 *   path's unreported media onto the best other path;
 * - outage memory (SenderEngineConfig.outageRestore): a path back from a
 *   total outage gets the rate it had, as far as a probe confirms;
 * - the path hysteresis' inputs (silence, recent loss, RTT excess).
 * I/O-free: times are passed in (µs).
 */
import { type PathReport, Priority } from '../core/types.js';
import { MAX_RTX_AGE_US, type NackResponder } from '../feedback/nack-responder.js';
import type { ResolvedSenderConfig } from './sender-config.js';
import { MIN_PATH_RATE_BPS, ROUTE_SWITCH_MAX_US, type SenderPath } from './sender-path.js';
import type { SenderPaths } from './sender-paths.js';

/** A single-path call's silence (µs) after which the first report decides on a key frame (see learnGap). */
const LAST_RESORT_KEY_SILENCE_US = 500_000;
/** SenderEngineConfig.blackholeKeyframe: media packets a path must have had queued since its previous report for its silence to ask for a key frame. */
export const BLACKHOLE_KEY_MIN_MEDIA = 10;
/** Hysteresis: a silence this long (µs) is a fault even before its packets are known lost. */
const FAILURE_SILENCE_US = 2_000_000;
/** Fast failover: the duplicates (with the surviving path's queue) must drain at its rate within this (ms). */
const FAILOVER_DUPLICATE_BUDGET_MS = 150;
/** Loss window of the hysteresis: at least this long (µs) and this many resolved packets. */
const LOSS_WINDOW_US = 250_000;
const LOSS_WINDOW_PACKETS = 20;
/**
 * Only a silence this long (µs, from turning suspect to reports resuming) is
 * an outage whose losses are not congestion: GCC's feedback timeout cuts
 * after 1 s. Shorter gaps on a lossy or fading path are its congestion signal.
 */
const OUTAGE_MIN_US = 700_000;
/** A path silent for longer than this (µs) has forgotten its rate: it restarts from its current estimate. */
const OUTAGE_RATE_MEMORY_US = 10_000_000;
/** After an outage, loss is not congestion for max(this, 2 x SRTT + 200 ms) after reports resume (µs). */
const OUTAGE_LOSS_GRACE_US = 500_000;
/** Rate floor (see recentLoss): a path is at its floor while its target is at most this factor of its estimator's minRateBps (ratio). */
const RATE_FLOOR_MARGIN = 1.1;
/** Rate floor: another usable path must have lost less than this fraction of the floored path's loss (ratio). */
const RATE_FLOOR_OTHER_LOSS = 0.5;
/**
 * Rate floor: the path must have sat at its floor this long (µs), counted
 * from the end of an outage's loss grace. A path that collapses takes GCC
 * to its floor within a few hundred ms and recovers from there (wc:8_5's
 * cellular uplink at 43 s); a link that cannot carry the floor stays at it.
 * Also how fresh (µs) the other path's loss window must be.
 */
const RATE_FLOOR_HOLD_US = 2_000_000;
/** A clean return (SenderEngineConfig.cleanReturn): a report of the silence's backlog resolves at least this many packets, and loses less than this fraction of them. */
const CLEAN_RETURN_PACKETS = 20;
const CLEAN_RETURN_MAX_LOSS = 0.05;

/** What path recovery needs from the engine. */
export interface RecoveryHost {
  readonly paths: SenderPaths;
  readonly history: NackResponder;
  readonly streamId: number;
  readonly cfg: Pick<ResolvedSenderConfig, 'fastFailover' | 'outageRestore' | 'cleanReturn' | 'blackholeKeyframe'>;
  /** Frame id of the newest key frame sent. */
  lastKeyFrameId(): number;
  /** True when a key frame was sent at or after `us` (µs). */
  keyFrameSentSince(us: number): boolean;
  /** Ceiling of one path's estimate (bps). */
  pathMaxBps(): number;
  /** Ask the encoder for a key frame. */
  requestKeyframe(reason: string): void;
}

/** Counters of {@link PathRecovery}. */
export interface PathRecoveryStats {
  pathRestores: number;
  failoverDuplicates: number;
  /** Silences whose unreported media did not fit the duplicate budget (left to NACK). */
  failoverSkipped: number;
  /** Retransmissions sent as failover duplicates (also counted as retransmissions). */
  retransmissionsSent: number;
}

export class PathRecovery {
  /** Last tick (µs) at which no path was up and reporting (see onReportResumed). */
  private lastTotalOutageUs = -Infinity;
  readonly c: PathRecoveryStats = { pathRestores: 0, failoverDuplicates: 0, failoverSkipped: 0, retransmissionsSent: 0 };

  constructor(private readonly host: RecoveryHost) {}

  /** Periodic work: failover probes and duplicates, total-outage tracking, the hysteresis. */
  tick(nowUs: number): void {
    this.probeOnFailover(nowUs);
    const { paths } = this.host;
    const h = paths.hysteresis;
    if (!h) return;
    for (const p of paths.values()) {
      // A path the app switched off is no fault: its hysteresis state waits as it was.
      if (!p.adminEnabled) {
        p.rateFloorSinceUs = undefined;
        continue;
      }
      // A relay switch's gap (silence, lost packets) is the switch's, not the new route's fault.
      if (this.inRouteGrace(p, nowUs)) {
        p.rateFloorSinceUs = undefined;
        paths.health.takeFailure(p.id);
        continue;
      }
      let bestRtt = Infinity;
      let otherLossRate: number | undefined;
      for (const q of paths.values()) {
        if (q === p || !paths.isUsable(q, nowUs)) continue;
        bestRtt = Math.min(bestRtt, q.estimator.srttMs());
        // Its last loss window (recentLoss): a demoted path's promotion may compare with it (promoteRelative).
        otherLossRate = Math.min(otherLossRate ?? 1, q.lossWindow.rate);
      }
      const rttExcessMs = Number.isFinite(bestRtt) ? p.estimator.srttMs() - bestRtt : undefined;
      // A fault: a failure (a silence that lost its packets, a dead transport, a silence past
      // FAILURE_SILENCE_US), or loss sustained over several windows. A delay stall (an LTE
      // uplink's report gap, packets delivered late) is not a fault.
      const lossRate = this.recentLoss(p, nowUs);
      const since = paths.manager.unreportedSinceUs(p.id);
      const silent = paths.health.takeFailure(p.id) || p.linkState !== 'connected' || (since !== undefined && nowUs - since > FAILURE_SILENCE_US);
      h.update(p.id, nowUs, { silent, lossRate, sustainedLossRate: paths.health.sustainedLoss(p.id), rttExcessMs, otherLossRate });
    }
  }

  /**
   * When a path turns suspect (or down) the others must carry its load, but
   * their GCC estimates sit at the rate they were app-limited to. Probe each
   * remaining path at 2 x its estimate plus the lost path's rate, once per
   * failover, so the encoder target recovers within an RTT. A path the
   * hysteresis had demoted sets off no probe: while another path carries
   * the call it is benched (no media, not in the encoder target), so its
   * silence moves no load (else a weak path that flaps, e.g. AT&T's 0.1
   * Mbps uplink at `--rate-scale 0.1`, probes the path carrying the call at
   * 2x its estimate on every flap). A path benched only by probation
   * (SenderPaths.isDemoted) still does: skipping those too was worse
   * (docs/results.md, stop 47).
   */
  private probeOnFailover(nowUs: number): void {
    const { paths } = this.host;
    let lostBps = 0;
    const silent: SenderPath[] = [];
    for (const p of paths.values()) {
      const gone = !paths.isUp(p) || paths.isSuspect(p, nowUs);
      if (gone && !p.failedOver) {
        if (paths.hysteresis?.isDemoted(p.id) !== true) lostBps += p.estimator.targetRateBps();
        p.rateAtFailure = { bps: p.estimator.targetRateBps(), atUs: nowUs };
      }
      p.failedOver = gone;
      // A path the app switched off is no fault: back on, it is established at once (SenderEngine.setPathEnabled).
      // Nor is a relay switch's gap (onRouteChange): probation after it would starve the new route.
      const noFault = !p.adminEnabled || this.inRouteGrace(p, nowUs);
      if (gone && !noFault) p.lastGoneUs = nowUs;
      if (!paths.isUp(p) && !noFault) p.lastDownUs = nowUs;
      // Duplicate once per silence, when it outlasts the path's learned threshold
      // (a bursty LTE uplink turns suspect by the fixed rule long before that, and its packets arrive).
      const since = paths.manager.unreportedSinceUs(p.id);
      if (this.host.cfg.fastFailover && since !== undefined && paths.health.detectsEarly(p.id, p.estimator.srttMs()) && paths.health.failoverDue(p.id, since, nowUs, p.estimator.srttMs()))
        silent.push(p);
    }
    for (const p of silent) this.duplicateUnreported(p, nowUs);
    // A total outage: no path is up and reporting (a path the scheduler merely disabled still could carry the call).
    let anyLive = false;
    for (const p of paths.values()) if (paths.isLive(p, nowUs)) anyLive = true;
    if (!anyLive && paths.size > 0) this.lastTotalOutageUs = nowUs;
    if (lostBps <= 0) return;
    for (const p of paths.values()) {
      if (p.failedOver || !p.prober) continue;
      // Probe once the burst of rerouted packets has drained; retry a few times while the estimate stays low.
      p.prober.scheduleFailoverProbe(Math.min(this.host.pathMaxBps(), 2 * p.estimator.targetRateBps() + lostBps), nowUs + 200_000);
    }
  }

  /**
   * Loss fraction of the path over the last window of >= LOSS_WINDOW_US
   * and >= LOSS_WINDOW_PACKETS resolved packets (from the estimator's
   * counters), for the hysteresis: the estimator's own lossRate() is a slow
   * EWMA (a demoted path that carries only padding would need tens of
   * seconds to prove itself) and would count an outage's losses. Windows
   * restart at the end of an outage's loss grace.
   *
   * Each window goes to PathHealth, which does not count loss with a
   * standing queue as a fault (congestion is GCC's business), unless the
   * path is at its rate floor: its congestion controller at its minimum
   * (within RATE_FLOOR_MARGIN, for RATE_FLOOR_HOLD_US) cannot back off further, and another usable
   * path's last window lost less than RATE_FLOOR_OTHER_LOSS x this path's
   * loss, i.e. moving the load there helps. Measured on the cellular suite
   * at a tenth of its rates (`--rate-scale 0.1`, issue 10's slow pairs):
   * AT&T's 0.1 Mbps uplink, pinned at GCC's 100 kbps floor and losing 25-50 %
   * of its packets in its own queue, kept a share of the video beside Verizon.
   */
  private recentLoss(p: SenderPath, nowUs: number): number {
    const min = p.estimator.minRateBps?.();
    if (min !== undefined && p.estimator.targetRateBps() <= RATE_FLOOR_MARGIN * min) p.rateFloorSinceUs ??= nowUs;
    else p.rateFloorSinceUs = undefined;
    const w = p.lossWindow;
    if (nowUs - w.atUs < LOSS_WINDOW_US) return w.rate;
    const st = p.estimator.stats() as { packetsLost?: number; packetsReceived?: number };
    if (st.packetsLost === undefined || st.packetsReceived === undefined) return p.estimator.lossRate();
    const lost = st.packetsLost - w.lost;
    const n = lost + st.packetsReceived - w.received;
    if (nowUs < w.graceUntilUs) {
      w.rate = 0;
    } else if (n < LOSS_WINDOW_PACKETS) {
      return w.rate;
    } else {
      w.rate = Math.min(1, Math.max(0, lost / n));
    }
    this.host.paths.health.onLossWindow(p.id, w.rate, p.estimator.srttMs(), p.estimator.minRttMs(), this.floorLossCounts(p, w.rate, nowUs));
    w.atUs = nowUs;
    w.lost = st.packetsLost;
    w.received = st.packetsReceived;
    return w.rate;
  }

  /**
   * Does the loss window of path `p` (it lost `lossRate`, 0..1) count despite a standing queue?
   * Yes when `p` has sat at its rate floor for RATE_FLOOR_HOLD_US (after its loss grace, if any)
   * and another live path, out of its own grace, closed a loss window within RATE_FLOOR_HOLD_US that
   * lost less than RATE_FLOOR_OTHER_LOSS x `lossRate` (see recentLoss).
   */
  private floorLossCounts(p: SenderPath, lossRate: number, nowUs: number): boolean {
    const since = p.rateFloorSinceUs;
    if (since === undefined || nowUs - Math.max(since, p.lossWindow.graceUntilUs) < RATE_FLOOR_HOLD_US || !(lossRate > 0)) return false;
    const paths = this.host.paths;
    for (const q of paths.values()) {
      const w = q.lossWindow;
      // A window closed (its counters are set), recently, outside q's grace (where rate is forced to 0).
      const fresh = w.lost + w.received > 0 && nowUs - w.atUs <= RATE_FLOOR_HOLD_US && nowUs >= w.graceUntilUs;
      if (q !== p && fresh && paths.isUsable(q, nowUs) && paths.isLive(q, nowUs) && w.rate < RATE_FLOOR_OTHER_LOSS * lossRate) return true;
    }
    return false;
  }

  /**
   * Fast failover (config.fastFailover): path `p` just went silent. Its
   * media sent since shortly before its last report (in flight then, or
   * sent after) is probably stuck in it; duplicate it (frames since the
   * newest key frame, at most MAX_RTX_AGE_US old, oldest first) onto the
   * usable path with the least completion time, if they (with what its
   * queue holds already) drain at its rate within FAILOVER_DUPLICATE_BUDGET_MS;
   * else leave the loss to NACK. The originals stay where they are (a slow path may
   * still deliver them; the receiver drops duplicates). Our addition, in the
   * spirit of MPTCP's opportunistic retransmission (Raiciu et al., "How
   * Hard Can It Be? Designing and Implementing a Deployable Multipath TCP",
   * NSDI 2012, §4.2).
   */
  private duplicateUnreported(p: SenderPath, nowUs: number): void {
    const { paths, history } = this.host;
    let q: SenderPath | undefined;
    let best = Infinity;
    for (const c of paths.values()) {
      if (c === p || !paths.isUsable(c, nowUs)) continue;
      const rate = Math.max(MIN_PATH_RATE_BPS, c.rateBps());
      const cpt = ((c.queuedBytes() + 12_000) * 8e6) / rate + c.estimator.srttMs() * 500;
      if (cpt < best) {
        best = cpt;
        q = c;
      }
    }
    if (!q) return;
    const lastReport = p.estimator.lastReportUs() ?? paths.manager.unreportedSinceUs(p.id) ?? nowUs;
    const from = Math.max(lastReport - p.estimator.srttMs() * 1000, nowUs - MAX_RTX_AGE_US);
    const picked = history.sentOnPathSince(p.id, from, this.host.lastKeyFrameId());
    if (picked.length === 0) return;
    // The duplicates must reach the receiver before the frames behind them expire
    // in q's pacer. If they do not fit, nothing is duplicated: the receiver NACKs
    // what it misses, and those retransmissions avoid the silent path
    // (SenderPaths.retransmissionStates). Neither a key frame (a 75 kB key frame
    // behind the rerouted load: 290-300 ms freezes on `failover`) nor duplicating
    // what fits (the oldest frames first: up to 370 ms) nor duplicating it all
    // (up to 334 ms) beat that (0-193 ms over 6 seeds).
    const total = picked.reduce((a, h) => a + h.sizeBytes, 0);
    const budget = (Math.max(MIN_PATH_RATE_BPS, q.rateBps()) * FAILOVER_DUPLICATE_BUDGET_MS) / 8000 - q.queuedBytes();
    if (total > budget) {
      this.c.failoverSkipped++;
      return;
    }
    for (const h of picked) {
      const packet = history.retransmission(h, nowUs, this.host.streamId);
      if (!q.pacer.enqueue({ priority: Priority.Retransmission, sizeBytes: h.sizeBytes, packet, probe: false }, nowUs)) break;
      q.stats.retransmissionsSent++;
      this.c.retransmissionsSent++;
      this.c.failoverDuplicates++;
    }
  }

  /**
   * Before a report of path `p` is applied: the silence it ends (µs, undefined
   * when nothing was unreported), the estimator's loss counters and SRTT (the
   * threshold the silence was judged by). Pass the result to {@link learnGap}.
   */
  reportGap(p: SenderPath, nowUs: number): ReportGap {
    const since = this.host.paths.manager.unreportedSinceUs(p.id);
    const paths = this.host.paths;
    // A single-path call that sent on through a silence (SenderPaths.lastResort): its first report tells a blackhole from a feedback outage.
    const suspect = paths.isSuspect(p, nowUs);
    const gone = p.failedOver || suspect || !paths.isUp(p);
    const lastReportUs = p.estimator.lastReportUs() ?? nowUs;
    const silent = nowUs - lastReportUs > LAST_RESORT_KEY_SILENCE_US;
    const lastResortSilence = silent && ((suspect && paths.lastResort(nowUs) === p) || (gone && this.blackholeCandidate(p, lastReportUs)));
    return { gapUs: since === undefined ? undefined : nowUs - since, before: p.lossCounters(), srttMs: p.estimator.srttMs(), lastResortSilence, gone, estBps: p.estimator.targetRateBps() };
  }

  /**
   * SenderEngineConfig.blackholeKeyframe: path `p` carried media
   * (BLACKHOLE_KEY_MIN_MEDIA packets) since its previous report (at
   * `lastReportUs`), so its silence, when the report shows it lost more
   * than it delivered, broke the frames sent into it (ours: the
   * single-path rule of learnGap extended to any path that carried the
   * call). Not when a key frame (any: asked for by the receiver over
   * another path, periodic, another path's 'outage') went out since the
   * silence began and none of its packets were queued on `p`: a second key
   * frame only queues behind the first (at 0.1x the suite's rates, wc:8_5:
   * +0.3 s per freeze). One that went partly into the silence is broken too.
   * "Sent" here means queued on the path.
   */
  private blackholeCandidate(p: SenderPath, lastReportUs: number): boolean {
    if (!this.host.cfg.blackholeKeyframe || (this.host.keyFrameSentSince(lastReportUs) && !(p.keyQueuedUs >= lastReportUs))) return false;
    return p.stats.mediaPacketsSent - p.mediaAtReport >= BLACKHOLE_KEY_MIN_MEDIA;
  }

  /**
   * After the report was applied: feed the gap and the share of packets the
   * report declared lost to PathHealth; after a last-resort silence that
   * lost more than it delivered, ask for a key frame ('outage'). With
   * `cleanReturn`, a report that ends a silence (one of the backlog that
   * arrives while the path is still gone) and resolves at least
   * CLEAN_RETURN_PACKETS packets with less than
   * CLEAN_RETURN_MAX_LOSS of them lost, while the estimate did not fall on
   * it (no overuse, no loss cut), marks a clean return
   * (SenderPath.cleanReturnUs): the silence was the feedback's, and the
   * path's probation ends (SenderPaths.isDemoted).
   */
  learnGap(p: SenderPath, nowUs: number, g: ReportGap): void {
    const after = p.lossCounters();
    let lostFraction = 0;
    let n = 0;
    if (g.before && after) {
      const lost = after.lost - g.before.lost;
      n = lost + after.received - g.before.received;
      if (n > 0) lostFraction = lost / n;
    }
    this.host.paths.health.onReport(p.id, nowUs, g.gapUs, lostFraction, g.srttMs);
    if (this.host.cfg.cleanReturn && g.gone && n >= CLEAN_RETURN_PACKETS && lostFraction < CLEAN_RETURN_MAX_LOSS && p.estimator.targetRateBps() >= g.estBps) p.cleanReturnUs = nowUs;
    // More of a last-resort silence lost than received: it was a blackhole, the decoder's references
    // are gone; a key frame now saves the receiver a NACK round and a frame-buffer timeout.
    if (g.lastResortSilence && g.before && after && after.lost - g.before.lost > after.received - g.before.received) this.host.requestKeyframe('outage');
    p.mediaAtReport = p.stats.mediaPacketsSent;
  }

  /**
   * The route under path `p` changed (an ICE restart onto another TURN
   * relay, SenderEngine.onPathRouteChanged). The path's fault history
   * belongs to the old route: its hysteresis state is forgotten. The
   * switch's own silence and losses are no fault of the new route: the
   * hysteresis skips the path, and its loss windows count nothing, until
   * the new route has carried a packet ({@link onRouteReport}) and an RTT
   * more (as after an outage). A route that never reports is a fault again
   * after ROUTE_SWITCH_MAX_US.
   */
  onRouteChange(p: SenderPath, nowUs: number): void {
    this.host.paths.hysteresis?.remove(p.id);
    p.rateFloorSinceUs = undefined;
    p.routeChangeUs = nowUs;
    p.routeChangeSeq = p.nextPathSeq;
    p.routeGraceUntilUs = Number.POSITIVE_INFINITY;
    p.lossWindow.graceUntilUs = Number.POSITIVE_INFINITY;
  }

  /**
   * A report of path `p` arrived: if it acknowledges a packet sent after
   * the last route change, the new route works; the grace then runs for
   * max(OUTAGE_LOSS_GRACE_US, 2 x SRTT + 200 ms) more, so that the
   * switch's losses (reported by this and the next reports) pass.
   */
  onRouteReport(p: SenderPath, report: PathReport, nowUs: number): void {
    if (p.routeGraceUntilUs !== Number.POSITIVE_INFINITY) return;
    if (!report.arrivals.some((a) => (a.pathSeq - p.routeChangeSeq) >>> 0 < 0x8000_0000)) return;
    p.routeGraceUntilUs = nowUs + Math.max(OUTAGE_LOSS_GRACE_US, 2000 * p.estimator.srttMs() + 200_000);
    p.lossWindow.graceUntilUs = p.routeGraceUntilUs;
  }

  /** Is path `p` inside a relay switch's grace (see {@link onRouteChange})? A new route that reports nothing for ROUTE_SWITCH_MAX_US ends it. */
  private inRouteGrace(p: SenderPath, nowUs: number): boolean {
    if (p.routeGraceUntilUs === Number.POSITIVE_INFINITY && nowUs - p.routeChangeUs > ROUTE_SWITCH_MAX_US) {
      p.routeGraceUntilUs = nowUs;
      p.lossWindow.graceUntilUs = nowUs;
    }
    return nowUs < p.routeGraceUntilUs;
  }

  /**
   * Call when a report of path `p` arrives, before the estimator sees it.
   * If the path was silent (failed over, suspect or down) its reports just
   * resumed (after an outage the rate should be back within 3 s). If it
   * went silent at least {@link OUTAGE_MIN_US} and at most
   * {@link OUTAGE_RATE_MEMORY_US} ago, its estimator is told
   * (GccEstimator.onPathRestored: the silence's losses are not congestion)
   * and a probe cluster at the rate it had is sent first: its result
   * restores the estimate up to that rate, and only as far as the path
   * really carries it now.
   */
  onReport(p: SenderPath, nowUs: number): void {
    const { paths } = this.host;
    if (!(p.failedOver || paths.isSuspect(p, nowUs) || !paths.isUp(p))) return;
    const mem = p.rateAtFailure;
    p.rateAtFailure = undefined;
    if (!mem || nowUs - mem.atUs > OUTAGE_RATE_MEMORY_US || nowUs - mem.atUs < OUTAGE_MIN_US || !p.estimator.onPathRestored) return;
    const mode = this.host.cfg.outageRestore;
    if (mode === 'off') return;
    // 'total': no path could carry the call at some moment of this path's silence.
    if (mode === 'total' && !(this.lastTotalOutageUs >= mem.atUs)) return;
    const graceUs = Math.max(OUTAGE_LOSS_GRACE_US, 2000 * p.estimator.srttMs() + 200_000);
    p.estimator.onPathRestored(mem.bps, nowUs, nowUs + graceUs);
    p.lossWindow.graceUntilUs = nowUs + graceUs;
    this.c.pathRestores++;
    if (p.prober && p.estimator.targetRateBps() < mem.bps) p.prober.probeFirst(nowUs, mem.bps);
  }
}

/** What {@link PathRecovery.reportGap} captures before a report is applied. */
export interface ReportGap {
  gapUs: number | undefined;
  before: { lost: number; received: number } | undefined;
  srttMs: number;
  /** The path carried a single-path call through a silence of > 500 ms as its last resort. */
  lastResortSilence: boolean;
  /** The path was gone (failed over, suspect or down) when the report arrived: the report ends a silence. */
  gone: boolean;
  /** The path's estimate (bps) before the report. */
  estBps: number;
}
