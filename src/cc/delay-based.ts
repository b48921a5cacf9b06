/**
 * Delay-based bandwidth estimate: inter-arrival grouping -> trendline ->
 * over-use detector -> AIMD.
 *
 * SOURCE: libwebrtc modules/congestion_controller/goog_cc/delay_based_bwe.cc
 * (DelayBasedBwe::IncomingPacketFeedback, MaybeUpdateEstimate: on over-use,
 * decrease when TimeToReduceFurther allows it, or halve the estimate while
 * no acknowledged bitrate exists; otherwise let AIMD increase or hold);
 * draft-ietf-rmcat-gcc-02 §5 (delay-based control).
 */
import { AimdRateControl } from './aimd.js';
import { InterArrival } from './inter-arrival.js';
import { OveruseDetector } from './overuse-detector.js';
import { TrendlineEstimator } from './trendline.js';
import type { BandwidthUsage } from './types.js';

/** While no acked bitrate exists, over-use halves the estimate at most this often (µs). */
const INITIAL_BACKOFF_INTERVAL_US = 200_000;

export interface DelayBasedConfig {
  startBps: number;
  minBps: number;
  maxBps: number;
  initialRttMs: number;
}

/** Per-path delay-based estimator. Feed packets with {@link onPacket}, then call {@link update} once per report. */
export class DelayBasedBwe {
  readonly interArrival = new InterArrival();
  readonly trendline = new TrendlineEstimator();
  readonly detector = new OveruseDetector();
  readonly aimd: AimdRateControl;
  private lastHalvingUs = Number.NEGATIVE_INFINITY;

  /** @throws RangeError on inconsistent rates (see AimdRateControl). */
  constructor(config: DelayBasedConfig) {
    this.aimd = new AimdRateControl(config);
  }

  /** Current hypothesis of the detector. */
  usage(): BandwidthUsage {
    return this.detector.state;
  }

  /** Current estimate (bps). */
  estimateBps(): number {
    return this.aimd.latestBps();
  }

  /**
   * One newly acknowledged packet, in arrival order.
   * @param sendUs sender clock (µs)
   * @param arrivalUs receiver clock (µs)
   * @param sizeBytes bytes
   * @param nowUs sender clock when the report was processed (µs)
   */
  onPacket(sendUs: number, arrivalUs: number, sizeBytes: number, nowUs: number): void {
    const ia = this.interArrival;
    if (!ia.compute(sendUs, arrivalUs, nowUs, sizeBytes)) return;
    const arrivalMs = arrivalUs / 1000;
    this.trendline.update(ia.arrivalDeltaMs, ia.sendDeltaMs, arrivalMs);
    const t = this.trendline;
    this.detector.detect(t.modifiedTrend, t.trend, t.numDeltas, ia.sendDeltaMs, arrivalMs);
  }

  /**
   * Rate update after a report.
   * @param nowUs sender clock (µs)
   * @param ackedBps acknowledged bitrate (bps) if known
   * @param rttMs current RTT (ms)
   * @returns the delay-based estimate (bps)
   */
  update(nowUs: number, ackedBps: number | undefined, rttMs: number): number {
    this.aimd.setRtt(rttMs);
    const usage = this.detector.state;
    if (usage === 'overusing') {
      if (ackedBps !== undefined) {
        if (this.aimd.timeToReduceFurther(nowUs, ackedBps)) this.aimd.update(usage, ackedBps, nowUs);
      } else if (nowUs - this.lastHalvingUs >= INITIAL_BACKOFF_INTERVAL_US) {
        // Over-use before any throughput measurement: halve.
        this.lastHalvingUs = nowUs;
        this.aimd.setEstimate(this.aimd.latestBps() / 2, nowUs);
      }
    } else {
      this.aimd.update(usage, ackedBps, nowUs);
    }
    return this.aimd.latestBps();
  }
}
