/**
 * RTC-BBR: BBR adapted to real-time video, per path, rate-based.
 *
 * SOURCE: Zhang & Lei, "An Online Learning Based Path Selection for Multipath
 * Video Telephony Service in Overlay", §3.1.1: delivery-rate samples
 * (Eq. 1), pacing rate = max bandwidth over 10 rounds x pacing gain (Eq. 2),
 * and ProbeBW's gain cycle replaced by Algorithm 1 (probe up with gain 1.1,
 * probe down with 0.85 until the bytes in flight match the BDP, cycle length
 * randomized over 2..8 min RTTs). The states StartUp / Drain / ProbeBW /
 * ProbeRTT and their constants come from BBR (Cardwell et al., "BBR:
 * Congestion-Based Congestion Control", ACM Queue 2016;
 * draft-cardwell-iccrg-bbr-congestion-control-02 §4.3); the delivery-rate
 * sample is draft-cheng-iccrg-delivery-rate-estimation-02 §3 (interval =
 * max(send elapsed, ack elapsed)).
 *
 * Adaptations to a rate-based media sender whose "acks" are the receiver's
 * per-path reports (every 50-100 ms), each documented where it is made:
 * - the target rate (what the sender paces and the encoder follows) is the
 *   pacing rate of Eq. 2; before the first delivery sample it is the start rate;
 * - BBR's cwnd becomes a cap: while the bytes in flight exceed cwndGain x BDP
 *   (1.25, not BBR's 2: see {@link RtcBbrConfig.cwndGain}) the target is the
 *   latest delivery rate (when lower than the max) x the probe-down gain 0.85;
 * - ProbeRTT does not collapse to 4 packets (that would freeze the video): it
 *   paces at 0.5 x the bandwidth for max(200 ms, one min RTT), enough to drain
 *   the bottleneck queue once every 10 s when the min RTT went stale;
 * - the pacer sends at the target as is ({@link RtcBbrEstimator.pacingFactor} = 1,
 *   Eq. 3), not at the 1.5 x margin the engine gives other estimators: with
 *   the margin a path the min-latency scheduler favours was sent up to 1.5 x
 *   its pacing rate, and the excess waited in the bottleneck queue;
 * - the max filter runs over 10 rounds and at most 10 min RTTs of time (a
 *   queue that builds after a capacity drop stretches rounds), and restarts on a route change ({@link RtcBbrEstimator.onRouteChange}:
 *   an ICE restart onto another relay); packets sent before the change give
 *   no delivery-rate or RTT sample (they measured the old route or died in
 *   the switch gap), and StartUp never lowers the rate (draft §4.6.2);
 * - with bytes in flight and no report for 1 s the target is cut by 20 % once
 *   per second (as GccEstimator's feedback timeout).
 *
 * I/O-free: times are the sender's clock (µs), randomness is a seeded Rng.
 */
import { Rng } from '../core/rng.js';
import type { PathReport } from '../core/types.js';
import { RttEstimator, rttFromReport } from './rtt.js';
import { SentPacketHistory } from './sent-history.js';
import type { BandwidthEstimator, EstimatorStats, SentPacketInfo } from './types.js';

/** Configuration of {@link RtcBbrEstimator}; rates in bps, times in ms. */
export interface RtcBbrConfig {
  /** Target before the first delivery-rate sample (bps). Default 1_000_000. */
  startBps: number;
  /** Floor of the target (bps). Default 100_000. */
  minBps: number;
  /** Ceiling of the target (bps). Default 50_000_000. */
  maxBps: number;
  /** Probe-up gain of Algorithm 1 (BBR: 1.25; RTC-BBR §3.1.1: 1.1). */
  probeUpGain: number;
  /** Probe-down gain of Algorithm 1 (BBR: 0.75; RTC-BBR: 0.85). */
  probeDownGain: number;
  /** kGainCycleLen of Algorithm 1 (8). */
  gainCycleLen: number;
  /** CYCLE_RAND of Algorithm 1 (7): cycle length = gainCycleLen - rand() % cycleRand, i.e. 2..8. */
  cycleRand: number;
  /** Rounds of the max-bandwidth filter (BBR: 10). */
  bwFilterRounds: number;
  /** Min RTT window (ms); a stale min RTT triggers ProbeRTT (BBR: 10 s). */
  minRttWindowMs: number;
  /** No report for this long with bytes in flight: cut 20 % (ms). Default 1000. */
  feedbackTimeoutMs: number;
  /** Seed of the cycle-length randomization (deterministic runs). Default 1. */
  seed: number;
  /**
   * StartUp gain after a route change ({@link RtcBbrEstimator.onRouteChange});
   * 0 = no StartUp, go on in ProbeBW from the current rate. Default 1.25.
   * The path already carries the call at a known rate, and the encoder
   * follows the target: BBR's 2/ln 2 makes the encoder overshoot the new
   * route by up to 1.9 BDP per switch (a full 200 ms drop-tail queue per
   * switch in the `overlay` scenario), while ProbeBW's 1.1 needs seconds to
   * find a larger route, so the relay selector's reward after one slot says
   * nothing about the route. 1.25 is BBR's ProbeBW UP gain
   * (draft-cardwell-iccrg-bbr-congestion-control-02 §4.3.3): +25 % per
   * round, ~4x per second at a 150 ms RTT, at most 0.25 BDP of overshoot.
   * The StartUp exit then needs 1 + (gain - 1) / 2 growth per round, and
   * Drain runs at 1 / gain.
   */
  routeChangeGain: number;
  /**
   * StartUp after a route change also ends as soon as the RTT grows
   * (HyStart++'s delay increase, RFC 9406 §4.2), not only after 3 rounds
   * without bandwidth growth or on loss. The encoder follows the target, so
   * each round of StartUp past the new route's capacity is 2/ln 2 x its rate
   * of video into its queue: a 1-1.7 s freeze 1-1.5 s after most switches of
   * the `overlay` oracle. Default true.
   */
  routeChangeDelayExit: boolean;
  /**
   * StartUp after a route change also ends as soon as one delivery-rate
   * sample of the new route was acknowledged more than this many times
   * slower than it was sent (ack elapsed > ratio x send elapsed,
   * draft-cheng-iccrg-delivery-rate-estimation-02 §3.3: the sample is then
   * the bottleneck's rate, not the sender's): the pipe is full (BBR's
   * full-pipe estimate, draft-cardwell-iccrg-bbr-congestion-control-02
   * §4.3.1.2, which waits for 3 rounds without growth, on one sample).
   * Only samples whose delivery clock is an acknowledgement time on the new
   * route count (the first RTT after a change has none). 0 = off. Default
   * 1.25, BBR's full-bandwidth growth threshold (a pipe is full when the rate
   * grows by less than 25 %): a sample sent at R over a route of capacity C
   * is acknowledged R / C times slower, so the ratio must stay under the
   * capacity ratios of the routes one switches between (`overlay`: 1.3-2;
   * 1.5 there: oracle p95 331-449 ms, 2: 392-501 ms, as off).
   * After a switch StartUp starts from the old route's rate and only grows
   * (draft §4.6.2): on a smaller route the first samples are its capacity and
   * StartUp then paced 2/ln 2 x that into its queue until the RTT grew
   * (one report later at best) or 3 rounds passed: a full 200 ms drop-tail
   * queue and a loss burst per switch to a smaller route. `overlay`, seeds
   * 1-6, p95 ms off -> 1.25: oracle 408/393/502/390/378/346 ->
   * 312/306/334/314/329/316, frozen 9.7-13.8 -> 4.3-6.4 s; overlay-ucb
   * 597/615/605/645/637/616 -> 511/416/411/333/334/393, frozen 20-29 -> 6.6-18 s.
   */
  routeChangeFullPipeRatio: number;
  /**
   * Cap on the bytes in flight in ProbeBW, in BDPs (cwnd = gain x BDP),
   * applied as a rate cap: beyond it the target is the latest delivery
   * rate x the probe-down gain. Default 1.25. BBR and RTC-BBR §3.1.1 use 2,
   * "to guarantee enough packets can be sent during probe up phase" (and, in
   * BBR, to ride out delayed and aggregated ACKs). Here the cap is checked as
   * each receiver report arrives, when the bytes in flight are exactly what
   * the network holds, and RTC-BBR probes up by only 1.1: 1.25 leaves that
   * probe room, while 2 lets a full BDP queue stand (120-190 ms on the
   * `overlay` relays) whenever the max filter runs ahead of a falling capacity.
   * `overlay`, seeds 1-6, oracle twin p95 (ms) 2 -> 1.25:
   * 347/531/693/491/704/592 -> 511/377/405/367/504/393; overlay-ucb
   * 804/818/638/703/682/772 -> 709/685/583/509/627/670.
   */
  cwndGain: number;
}

export const DEFAULT_RTC_BBR_CONFIG: RtcBbrConfig = {
  startBps: 1_000_000,
  minBps: 100_000,
  maxBps: 50_000_000,
  probeUpGain: 1.1,
  probeDownGain: 0.85,
  gainCycleLen: 8,
  cycleRand: 7,
  bwFilterRounds: 10,
  minRttWindowMs: 10_000,
  feedbackTimeoutMs: 1000,
  seed: 1,
  routeChangeGain: 2 / Math.LN2,
  routeChangeDelayExit: true,
  routeChangeFullPipeRatio: 1.25,
  cwndGain: 1.25,
};

/** BBR's StartUp gain 2/ln 2 (draft-cardwell-iccrg-bbr-congestion-control-02 §4.3.1.1). */
export const BBR_HIGH_GAIN = 2 / Math.LN2;
/** StartUp ends when the bandwidth grew less than 25 % in this many rounds (BBR full-pipe check). */
const FULL_BW_ROUNDS = 3;
const FULL_BW_GROWTH = 1.25;
/** ProbeRTT (our rate-based reading): pace at this fraction of the bandwidth for PROBE_RTT_MS. */
const PROBE_RTT_GAIN = 0.5;
const PROBE_RTT_MS = 200;
/** Bound of the max-filter deque (samples). */
const MAX_FILTER_SAMPLES = 512;

export type RtcBbrState = 'startup' | 'drain' | 'probe-bw' | 'probe-rtt';

/** {@link EstimatorStats} plus RTC-BBR's own state. */
export interface RtcBbrStats extends EstimatorStats {
  state: RtcBbrState;
  pacingGain: number;
  /** Windowed max delivery rate bw_es (bps), 0 before the first sample. */
  bwBps: number;
  /** Current gain cycle length (min RTTs, 2..8). */
  cycleLen: number;
  rounds: number;
  reports: number;
  reportsInvalid: number;
  packetsLost: number;
  packetsReceived: number;
  routeChanges: number;
  feedbackTimeouts: number;
}

export class RtcBbrEstimator implements BandwidthEstimator {
  /** The pacer sends at the target as is: the target is Eq. 2's pacing rate (gain included), paced by Eq. 3. */
  readonly pacingFactor = 1;
  private readonly cfg: RtcBbrConfig;
  private readonly history = new SentPacketHistory(8192);
  private readonly rtt: RttEstimator;
  private readonly rng: Rng;
  // Per-packet delivery state at send time (draft-cheng §3.2), indexed like the history ring.
  private readonly pDelivered: Float64Array;
  private readonly pDeliveredUs: Float64Array;
  private readonly pFirstSentUs: Float64Array;
  private readonly mask: number;
  private delivered = 0;
  private deliveredUs = Number.NaN;
  private firstSentUs = Number.NaN;
  // Rounds (BBR next_round_delivered).
  private rounds = 0;
  private nextRoundDelivered = 0;
  // Max filter: monotonic deque (decreasing bw) of (round, time µs, bw).
  private readonly fRound = new Float64Array(MAX_FILTER_SAMPLES);
  private readonly fUs = new Float64Array(MAX_FILTER_SAMPLES);
  private readonly fBw = new Float64Array(MAX_FILTER_SAMPLES);
  private fHead = 0;
  private fLen = 0;
  private lastSampleBps: number | undefined;
  // Min RTT as BBR keeps it (value and when it was last refreshed).
  private minRttUs = Number.POSITIVE_INFINITY;
  private minRttStampUs = Number.NaN;
  // State machine.
  private state: RtcBbrState = 'startup';
  private gain = BBR_HIGH_GAIN;
  /** StartUp's gain: BBR's 2/ln 2 at the start, routeChangeGain after a route change. */
  private startupGain = BBR_HIGH_GAIN;
  private fullBw = 0;
  private fullBwRounds = 0;
  private fullBwCheckedRound = -1;
  private cycleStampUs = 0;
  private cycleLen: number;
  private probeRttUntilUs = 0;
  private hasLoss = false;
  private lastRttUs = Number.NaN;
  // Output.
  private target: number;
  private lastReport: number | undefined;
  private lastTimeoutUs = Number.NEGATIVE_INFINITY;
  private lossRateEwma = 0;
  private readonly c = { reports: 0, reportsInvalid: 0, packetsLost: 0, packetsReceived: 0, routeChanges: 0, feedbackTimeouts: 0 };

  /**
   * @param config partial {@link RtcBbrConfig}.
   * @throws RangeError for a rate or time that is not finite and > 0, minBps > maxBps,
   *   gains outside (0, 2], a routeChangeGain neither 0 nor in (1, 2/ln 2], a routeChangeFullPipeRatio neither 0 nor > 1, or cycle constants that are not integers with 1 <= cycleRand <= gainCycleLen - 1.
   */
  constructor(config: Partial<RtcBbrConfig> = {}) {
    const c: RtcBbrConfig = { ...DEFAULT_RTC_BBR_CONFIG, ...config };
    for (const k of ['startBps', 'minBps', 'maxBps', 'minRttWindowMs', 'feedbackTimeoutMs', 'bwFilterRounds', 'cwndGain'] as const) {
      if (!(typeof c[k] === 'number' && Number.isFinite(c[k]) && c[k] > 0)) throw new RangeError(`RtcBbrEstimator: ${k} must be a finite number > 0, got ${c[k]}`);
    }
    if (c.minBps > c.maxBps) throw new RangeError(`RtcBbrEstimator: minBps (${c.minBps}) > maxBps (${c.maxBps})`);
    for (const k of ['probeUpGain', 'probeDownGain'] as const) {
      if (!(c[k] > 0 && c[k] <= 2)) throw new RangeError(`RtcBbrEstimator: ${k} must be in (0, 2], got ${c[k]}`);
    }
    if (!(c.routeChangeFullPipeRatio === 0 || (Number.isFinite(c.routeChangeFullPipeRatio) && c.routeChangeFullPipeRatio > 1))) {
      throw new RangeError(`RtcBbrEstimator: routeChangeFullPipeRatio must be 0 or a finite number > 1, got ${c.routeChangeFullPipeRatio}`);
    }
    if (!(c.routeChangeGain === 0 || (c.routeChangeGain > 1 && c.routeChangeGain <= BBR_HIGH_GAIN))) {
      throw new RangeError(`RtcBbrEstimator: routeChangeGain must be 0 or in (1, 2/ln 2], got ${c.routeChangeGain}`);
    }
    if (!(Number.isInteger(c.gainCycleLen) && Number.isInteger(c.cycleRand) && c.cycleRand >= 1 && c.cycleRand <= c.gainCycleLen - 1)) {
      throw new RangeError(`RtcBbrEstimator: need integers 1 <= cycleRand <= gainCycleLen - 1, got ${c.cycleRand}, ${c.gainCycleLen}`);
    }
    c.startBps = Math.min(Math.max(c.startBps, c.minBps), c.maxBps);
    this.cfg = c;
    this.rtt = new RttEstimator({ minRttWindowMs: c.minRttWindowMs });
    this.rng = new Rng(c.seed);
    this.cycleLen = c.gainCycleLen;
    const cap = this.history.capacity;
    this.mask = cap - 1;
    this.pDelivered = new Float64Array(cap);
    this.pDeliveredUs = new Float64Array(cap);
    this.pFirstSentUs = new Float64Array(cap);
    this.target = c.startBps;
  }

  /** Record a sent packet; invalid input is ignored (the history counts nothing it refuses). */
  onPacketSent(p: SentPacketInfo): void {
    if (!(Number.isFinite(p?.sendTimeUs) && Number.isFinite(p.sizeBytes) && p.sizeBytes >= 0)) return;
    if (!this.history.add(p.pathSeq, p.sendTimeUs, Math.ceil(p.sizeBytes))) return;
    // draft-cheng §3.2 "Transmitting a data packet": with nothing in flight the send and delivery clocks restart here.
    if (this.history.inflightBytes() <= Math.ceil(p.sizeBytes) || Number.isNaN(this.deliveredUs)) {
      this.firstSentUs = p.sendTimeUs;
      this.deliveredUs = p.sendTimeUs;
    }
    const i = p.pathSeq & this.mask;
    this.pDelivered[i] = this.delivered;
    this.pDeliveredUs[i] = this.deliveredUs;
    this.pFirstSentUs[i] = this.firstSentUs;
  }

  /** A receiver report at sender time `nowUs` (µs): delivery-rate samples (Eq. 1), RTT, loss, then the state machine. */
  onReport(report: PathReport, nowUs: number): void {
    if (!Number.isFinite(nowUs) || !this.history.applyReport(report)) {
      this.c.reportsInvalid++;
      return;
    }
    const h = this.history;
    const o = h.outcome;
    this.c.reports++;
    this.c.packetsLost += o.newlyLost - o.recovered;
    this.c.packetsReceived += o.newlyReceived + o.recovered;
    this.lastReport = nowUs;
    const resolved = o.newlyReceived + o.newlyLost;
    if (resolved > 0) this.lossRateEwma += 0.1 * (Math.max(0, o.newlyLost - o.recovered) / resolved - this.lossRateEwma);
    this.hasLoss = o.newlyLost > o.recovered;

    if (!Number.isNaN(h.lastArrivalUs) && h.lastArrivalSendUs >= this.routeChangeUs) {
      const sample = rttFromReport(nowUs, h.lastArrivalSendUs, h.lastArrivalUs, Number(report.reportTimeUs));
      if (sample !== undefined) {
        this.rtt.onSample(sample, nowUs);
        this.lastRttUs = sample;
        if (sample <= this.minRttUs || !(nowUs - this.minRttStampUs <= this.cfg.minRttWindowMs * 1000)) {
          this.minRttUs = sample;
          this.minRttStampUs = nowUs;
        }
      }
    }

    // Eq. 1 per newly acknowledged packet (arrival order): bw = delta delivered / delta t.
    const idx = h.newIdx;
    let best = 0;
    this.pipeFullSample = false;
    for (let k = 0; k < idx.length; k++) {
      const i = idx[k];
      const sendUs = h.sendUs[i];
      // A packet sent before the last route change measured the old route (or died in the switch gap):
      // it counts neither as delivered on the new route nor as a sample.
      if (sendUs < this.routeChangeUs) continue;
      this.delivered += h.sizes[i];
      this.deliveredUs = nowUs;
      if (this.ackClockSinceUs === Number.POSITIVE_INFINITY) this.ackClockSinceUs = nowUs;
      const j = i & this.mask;
      const pd = this.pDelivered[j];
      const sendElapsed = sendUs - this.pFirstSentUs[j];
      const ackElapsed = nowUs - this.pDeliveredUs[j];
      this.firstSentUs = sendUs;
      const interval = Math.max(sendElapsed, ackElapsed);
      // Samples over less than a min RTT are ack compression, not a rate (draft-cheng §3.3: interval < min_rtt is discarded).
      if (interval > 0 && interval >= Math.min(this.minRttUs, 1e9)) {
        best = Math.max(best, ((this.delivered - pd) * 8e6) / interval);
        // The route, not the sender, set this sample's rate: its packets were acknowledged clearly slower than
        // they were sent (only once the delivery clock is an acknowledgement time on this route).
        const ratio = this.cfg.routeChangeFullPipeRatio;
        if (ratio > 0 && sendElapsed > 0 && this.pDeliveredUs[j] >= this.ackClockSinceUs && ackElapsed > ratio * sendElapsed) this.pipeFullSample = true;
      }
      if (pd >= this.nextRoundDelivered) {
        this.nextRoundDelivered = this.delivered;
        this.rounds++;
      }
    }
    if (best > 0) {
      this.lastSampleBps = best;
      this.pushBw(best, nowUs);
    }
    this.update(nowUs);
  }

  /** The route under this path changed (ICE restart onto another relay): forget bandwidth and min RTT; go on from the current target (ProbeBW, or StartUp with `routeChangeStartup`). */
  onRouteChange(nowUs: number): void {
    this.c.routeChanges++;
    this.fLen = 0;
    this.fHead = 0;
    this.lastSampleBps = undefined;
    this.minRttUs = Number.POSITIVE_INFINITY;
    this.minRttStampUs = Number.NaN;
    this.fullBw = 0;
    this.fullBwRounds = 0;
    this.fullBwCheckedRound = -1;
    if (this.cfg.routeChangeGain > 1) {
      this.state = 'startup';
      this.startupGain = this.cfg.routeChangeGain;
      this.gain = this.startupGain;
      this.cycleStampUs = nowUs;
    } else this.enterProbeBw(nowUs);
    // Until the new route's first sample the target stays (startup from where we are); StartUp
    // then never lowers it (draft-cardwell-iccrg-bbr-congestion-control-02 §4.6.2, BBRSetPacingRateWithGain).
    this.startFrom = this.target;
    // Packets sent before now crossed the old route (or the switch gap): their delivery-rate and RTT
    // samples say nothing about the new one. The delivery clocks restart at the next send, as after
    // an idle period (draft-cheng-iccrg-delivery-rate-estimation-02 §3.2).
    this.routeChangeUs = nowUs;
    this.deliveredUs = Number.NaN;
    this.ackClockSinceUs = Number.POSITIVE_INFINITY;
  }

  private startFrom: number | undefined;
  /** The last report had a sample whose rate the route set (see {@link RtcBbrConfig.routeChangeFullPipeRatio}). */
  private pipeFullSample = false;
  /** Since when (µs) the delivery clock is an acknowledgement time on the current route (+Infinity until its first ack). */
  private ackClockSinceUs = 0;
  /** Sender time (µs) of the last route change: packets sent before it measured the old route. */
  private routeChangeUs = Number.NEGATIVE_INFINITY;

  onTick(nowUs: number): void {
    if (!Number.isFinite(nowUs)) return;
    const last = this.lastReport;
    if (last !== undefined && this.history.inflightBytes() > 0 && nowUs - last > this.cfg.feedbackTimeoutMs * 1000 && nowUs - this.lastTimeoutUs >= 1_000_000) {
      this.lastTimeoutUs = nowUs;
      this.c.feedbackTimeouts++;
      this.target = Math.max(this.cfg.minBps, this.target * 0.8);
      // The filter must not restore the old rate when reports resume.
      this.fLen = 0;
      this.startFrom = this.target;
    }
  }

  private pushBw(bw: number, nowUs: number): void {
    // Expire by rounds or time: the last bwFilterRounds rounds, and no longer than bwFilterRounds min RTTs
    // (a queue that builds after a capacity drop stretches the rounds; the time bound keeps the reaction within ~1 s).
    const windowUs = Number.isFinite(this.minRttUs) ? this.cfg.bwFilterRounds * this.minRttUs : 1_000_000;
    while (this.fLen > 0 && (this.rounds - this.fRound[this.fHead] >= this.cfg.bwFilterRounds || nowUs - this.fUs[this.fHead] > windowUs)) {
      this.fHead = (this.fHead + 1) % MAX_FILTER_SAMPLES;
      this.fLen--;
    }
    while (this.fLen > 0 && this.fBw[(this.fHead + this.fLen - 1) % MAX_FILTER_SAMPLES] <= bw) this.fLen--;
    if (this.fLen === MAX_FILTER_SAMPLES) {
      this.fHead = (this.fHead + 1) % MAX_FILTER_SAMPLES;
      this.fLen--;
    }
    const at = (this.fHead + this.fLen) % MAX_FILTER_SAMPLES;
    this.fRound[at] = this.rounds;
    this.fUs[at] = nowUs;
    this.fBw[at] = bw;
    this.fLen++;
    this.startFrom = undefined;
  }

  /** bw_es: the windowed max delivery rate (bps), 0 before the first sample. */
  bwBps(): number {
    return this.fLen > 0 ? this.fBw[this.fHead] : 0;
  }

  private bdpBytes(): number {
    const rtt = Number.isFinite(this.minRttUs) ? this.minRttUs : this.rtt.srttMs() * 1000;
    return (this.bwBps() * rtt) / 8e6;
  }

  private update(nowUs: number): void {
    const bw = this.bwBps();
    if (bw <= 0) return;
    const inflight = this.history.inflightBytes();
    const bdp = this.bdpBytes();
    const minRttUs = Number.isFinite(this.minRttUs) ? this.minRttUs : this.rtt.srttMs() * 1000;
    // BBR full-pipe check, once per round.
    if (this.state === 'startup' && this.rounds !== this.fullBwCheckedRound) {
      this.fullBwCheckedRound = this.rounds;
      const growth = this.startupGain === BBR_HIGH_GAIN ? FULL_BW_GROWTH : 1 + (this.startupGain - 1) / 2;
      if (bw >= this.fullBw * growth) {
        this.fullBw = bw;
        this.fullBwRounds = 0;
      } else if (++this.fullBwRounds >= FULL_BW_ROUNDS || this.hasLoss || this.rttGrew()) {
        this.state = 'drain';
        this.gain = 1 / this.startupGain;
      }
    }
    // StartUp after a route change: the pipe is full as soon as the new route limits a sample (routeChangeFullPipeRatio).
    if (this.state === 'startup' && this.c.routeChanges > 0 && this.pipeFullSample) {
      this.state = 'drain';
      this.gain = 1 / this.startupGain;
    }
    if (this.state === 'drain' && inflight <= bdp) this.enterProbeBw(nowUs);
    if (this.state === 'probe-bw') this.updateGainCyclePhase(nowUs, inflight, bdp, minRttUs);
    // ProbeRTT when the min RTT was not refreshed for minRttWindowMs.
    if (this.state !== 'probe-rtt' && this.state !== 'startup' && nowUs - this.minRttStampUs > this.cfg.minRttWindowMs * 1000) {
      this.state = 'probe-rtt';
      this.gain = PROBE_RTT_GAIN;
      this.probeRttUntilUs = nowUs + Math.max(PROBE_RTT_MS * 1000, minRttUs);
    }
    if (this.state === 'probe-rtt' && nowUs >= this.probeRttUntilUs) {
      this.minRttStampUs = nowUs; // BBR: the ProbeRTT sample refreshes the stamp
      this.enterProbeBw(nowUs);
    }
    let rate = bw * this.gain;
    // BBR's cwnd (2 x BDP) as a rate cap: beyond it the bottleneck queues, so pace under the latest delivery rate.
    if (this.state !== 'startup' && inflight > this.cfg.cwndGain * bdp) rate = Math.min(rate, Math.min(bw, this.lastSampleBps ?? bw) * this.cfg.probeDownGain);
    const next = Math.min(this.cfg.maxBps, Math.max(this.cfg.minBps, rate));
    // Before the pipe is full the pacing rate only grows (draft-cardwell-iccrg-bbr-congestion-control-02
    // §4.6.2 BBRSetPacingRateWithGain: "if (BBR.filled_pipe || rate > BBR.pacing_rate)"): an early,
    // application-limited sample (a new route's first few packets) must not collapse the rate.
    this.target = this.state === 'startup' ? Math.max(this.target, next) : next;
  }

  /**
   * StartUp after a route change ends when the RTT grows (routeChangeDelayExit):
   * the latest RTT sample exceeds the new route's min RTT by
   * clamp(min RTT / 8, 4 ms, 16 ms), HyStart++'s delay-increase threshold
   * (RFC 9406 §4.2; it compares per-round minima, we the latest sample with
   * the min RTT, which restarted at the change).
   */
  private rttGrew(): boolean {
    if (!this.cfg.routeChangeDelayExit || this.c.routeChanges === 0) return false;
    const m = this.minRttUs;
    return Number.isFinite(m) && this.lastRttUs > m + Math.min(16_000, Math.max(4_000, m / 8));
  }

  private enterProbeBw(nowUs: number): void {
    this.state = 'probe-bw';
    this.gain = 1;
    this.cycleStampUs = nowUs;
    this.cycleLen = this.cfg.gainCycleLen - Math.floor(this.rng.next() * this.cfg.cycleRand);
  }

  /** RTC-BBR §3.1.1 Algorithm 1 (UpdateGainCyclePhase), line by line. */
  private updateGainCyclePhase(nowUs: number, inflight: number, bdp: number, rttMinUs: number): void {
    const elapsed = nowUs - this.cycleStampUs; // 1
    if (elapsed > this.cycleLen * rttMinUs) {
      // 2
      this.cycleStampUs = nowUs; // 3
      this.cycleLen = this.cfg.gainCycleLen - Math.floor(this.rng.next() * this.cfg.cycleRand); // 4: 8 - rand() % 7
      this.gain = this.cfg.probeUpGain; // 5
      return; // 6
    }
    if (this.gain === 1) return; // 8-9
    if (this.gain < 1 && inflight <= bdp) this.gain = 1; // 11-12
    if (elapsed > rttMinUs && (inflight > this.cfg.probeUpGain * bdp || this.hasLoss)) this.gain = this.cfg.probeDownGain; // 14-15
  }

  targetRateBps(): number {
    if (this.startFrom !== undefined) return this.startFrom;
    return this.target;
  }

  ackedRateBps(): number | undefined {
    return this.lastSampleBps;
  }

  srttMs(): number {
    return this.rtt.srttMs();
  }

  minRttMs(): number {
    return Number.isFinite(this.minRttUs) ? this.minRttUs / 1000 : this.rtt.minRttMs();
  }

  lossRate(): number {
    return this.lossRateEwma;
  }

  /** `minBps` (bps): the target never goes below it. */
  minRateBps(): number {
    return this.cfg.minBps;
  }

  inflightBytes(): number {
    return this.history.inflightBytes();
  }

  lastReportUs(): number | undefined {
    return this.lastReport;
  }

  stats(): RtcBbrStats {
    return {
      targetRateBps: this.targetRateBps(),
      delayBasedBps: this.bwBps(),
      lossBasedBps: this.bwBps(),
      ackedRateBps: this.lastSampleBps,
      srttMs: this.srttMs(),
      minRttMs: this.minRttMs(),
      lossRate: this.lossRateEwma,
      trend: 0,
      threshold: 0,
      bandwidthUsage: 'normal',
      rateControlState: this.state,
      state: this.state,
      pacingGain: this.gain,
      bwBps: this.bwBps(),
      cycleLen: this.cycleLen,
      rounds: this.rounds,
      ...this.c,
    };
  }
}
