/**
 * Per-path, per-100 ms trace of stream 0 (SimOptions.pathTrace): what the
 * sender's estimator believed (trendline slope, over-use state, delay- and
 * loss-based estimates, acked rate, RTTs, loss), what the path carried and
 * what the receiver saw (one-way delay, inter-arrival jitter, seq gaps), when
 * the path's feedback last reached the sender, and the link's ground truth
 * (capacity, bottleneck queue delay, drops) for labelling. Measurement only:
 * results do not depend on it. Columnar (one array per field) to keep
 * results.json small.
 *
 * The receiver-side columns (owd*, jit, rxKB, gaps) are what the next report
 * tells the sender: it sees them one report interval (~50 ms) plus the
 * reverse trip later. `fbGapMs` is the sender's own view (time since any
 * datagram of stream 0 last arrived from the path).
 */
import { decodePacket } from '../src/wire/decode.js';

/** Sampling interval (µs). */
export const TRACE_US = 100_000;
/** How long (µs) a media seq's first send is remembered for the resend column. */
const FIRST_SEND_KEEP_US = 3_000_000;

/** One path's columns. */
export interface PathTraceColumns {
  /** Ground truth: up-link capacity over the last 100 ms (Mbps, 0 while down), bottleneck queue delay of the last accepted packet (ms), queue (kB), every drop so far (queue + random loss + blackhole; freeze-explain's `dropped` counts queue drops only). */
  cap: number[];
  netMs: number[];
  netKB: number[];
  drops: number[];
  /** Sender: S_i (Mbps), estimator target / delay-based / loss-based / acked (Mbps), send rate over 1 s (Mbps), pacer + dc queue (kB). */
  est: number[];
  gcc: number[];
  dly: number[];
  lss: number[];
  ack: number[];
  snd1s: number[];
  qKB: number[];
  /**
   * Sender: SRTT, min RTT, latest RTT (ms), loss fraction of recent reports (%), the loss-queue bound's loss (%, GCC's
   * `recentLossRate`: the bound caps the target above 5 % while SRTT stands > 50 ms over the min RTT), modified trend (ms), threshold (ms),
   * usage (1 over, -1 under, 0 normal), over-use onsets so far. A value the estimator does not have (FRACTaL has no
   * trendline; no acked rate yet) is -1 in the non-negative columns and null in `trend` / `thr`.
   */
  srtt: number[];
  minRtt: number[];
  rtt: number[];
  loss: number[];
  rloss: number[];
  trend: (number | null)[];
  thr: (number | null)[];
  use: number[];
  onsets: number[];
  /** Sender: ms since the last datagram of stream 0 arrived from the path (feedback gap). */
  fbGapMs: number[];
  /** Sender: up (1) / down (0), benched (1: `stats().paths[].demoted`, hysteresis or probation), share of media % since the call started (cumulative, not recent). */
  up: number[];
  dem: number[];
  share: number[];
  /**
   * Last 100 ms, our stream 0: kB handed to the path, kB arrived, arrivals' one-way delay mean / min / max (ms;
   * arrival on the sender's clock minus send time, so exact under `--clock-skew` too), mean |inter-arrival -
   * inter-send| over consecutive arrivals (ms; unsmoothed, per packet: not RFC 3550's J nor the receiver's frame
   * jitter), path seqs skipped (gaps).
   */
  txKB: number[];
  rxKB: number[];
  owd: number[];
  owdMin: number[];
  owdMax: number[];
  jit: number[];
  gaps: number[];
  /**
   * Last 100 ms, our stream 0: kB of media resends handed to the path, as freeze-explain counts them (a seq seen
   * before on the same path or more than 20 ms earlier on another, or flagged a retransmission once its original
   * was seen: a flagged packet whose original the tracer never saw counts as a first send), and of key frame
   * packets (first sends, resends and probe copies).
   */
  rtxKB: number[];
  keyKB: number[];
}

export interface PathTrace {
  dtMs: number;
  /** Sample times (s). */
  t: number[];
  /** Encoder target (Mbps). */
  target: number[];
  paths: PathTraceColumns[];
}

interface Bin {
  tx: number;
  rtx: number;
  key: number;
  rx: number;
  n: number;
  owdSum: number;
  owdMin: number;
  owdMax: number;
  jitSum: number;
  jitN: number;
  gaps: number;
}

const freshBin = (): Bin => ({ tx: 0, rtx: 0, key: 0, rx: 0, n: 0, owdSum: 0, owdMin: Infinity, owdMax: -Infinity, jitSum: 0, jitN: 0, gaps: 0 });

/** What the run loop passes per path at each sample. */
export interface PathTraceInput {
  capBps: number;
  netMs: number;
  netBytes: number;
  drops: number;
  estBps: number;
  gccBps: number;
  delayBps: number;
  lossBps: number;
  ackedBps: number;
  sendBps: number;
  queuedBytes: number;
  srttMs: number;
  minRttMs: number;
  rttMs: number;
  lossFrac: number;
  recentLossFrac: number;
  trend: number;
  threshold: number;
  usage: string;
  onsets: number;
  up: boolean;
  demoted: boolean;
  sharePct: number;
}

export class PathTracer {
  private nextUs = TRACE_US;
  private readonly bins: Bin[];
  private readonly lastFbUs: number[];
  /** Media flow seq -> its first send (path, µs), for the resend column. */
  private readonly firstSend = new Map<number, { path: number; us: number }>();
  private readonly lastArr: Array<{ sendUs: number; arrUs: number; seq: number } | undefined>;
  readonly out: PathTrace;

  constructor(nPaths: number) {
    this.bins = Array.from({ length: nPaths }, freshBin);
    this.lastFbUs = new Array<number>(nPaths).fill(0);
    this.lastArr = new Array(nPaths).fill(undefined);
    const cols = (): PathTraceColumns => ({
      cap: [],
      netMs: [],
      netKB: [],
      drops: [],
      est: [],
      gcc: [],
      dly: [],
      lss: [],
      ack: [],
      snd1s: [],
      qKB: [],
      srtt: [],
      minRtt: [],
      rtt: [],
      loss: [],
      rloss: [],
      trend: [],
      thr: [],
      use: [],
      onsets: [],
      fbGapMs: [],
      up: [],
      dem: [],
      share: [],
      txKB: [],
      rxKB: [],
      owd: [],
      owdMin: [],
      owdMax: [],
      jit: [],
      gaps: [],
      rtxKB: [],
      keyKB: [],
    });
    this.out = { dtMs: TRACE_US / 1000, t: [], target: [], paths: Array.from({ length: nPaths }, cols) };
  }

  /** A datagram of stream 0 handed to path i. */
  onSend(i: number, bytes: Uint8Array, nowUs: number): void {
    const b = this.bins[i];
    if (!b) return;
    b.tx += bytes.length;
    const r = decodePacket(bytes);
    if (!r.ok || r.packet.body.kind !== 'media') return;
    const m = r.packet.body.media;
    // A resend as freeze-explain counts it: the flow seq sent before on the same path, or more than 20 ms earlier on another (a probe copy is not one).
    const first = this.firstSend.get(m.flowSeq);
    if (first === undefined) this.firstSend.set(m.flowSeq, { path: i, us: nowUs });
    else if (m.retransmission || first.path === i || nowUs - first.us > 20_000) b.rtx += bytes.length;
    if (m.keyFrame) b.key += bytes.length;
  }

  /** A datagram of stream 0 arrived on path i's up link at nowUs. */
  onArrival(i: number, bytes: Uint8Array, nowUs: number): void {
    const b = this.bins[i];
    if (!b) return;
    const r = decodePacket(bytes);
    if (!r.ok) return;
    const { pathSeq, sendTimeUs } = r.packet;
    b.rx += bytes.length;
    const owdMs = (nowUs - sendTimeUs) / 1000;
    b.n++;
    b.owdSum += owdMs;
    b.owdMin = Math.min(b.owdMin, owdMs);
    b.owdMax = Math.max(b.owdMax, owdMs);
    const last = this.lastArr[i];
    // Seqs ahead of the newest arrival (uint32, wrapping); a late (reordered) arrival moves nothing.
    const ahead = last === undefined ? 1 : (pathSeq - last.seq) | 0;
    if (ahead <= 0) return;
    if (last !== undefined) {
      b.gaps += ahead - 1;
      b.jitSum += Math.abs(nowUs - last.arrUs - (sendTimeUs - last.sendUs)) / 1000;
      b.jitN++;
    }
    this.lastArr[i] = { sendUs: sendTimeUs, arrUs: nowUs, seq: pathSeq };
  }

  /** A datagram of stream 0 reached the sender from path i (reports, NACKs, QoE). */
  onFeedback(i: number, nowUs: number): void {
    if (i < this.lastFbUs.length) this.lastFbUs[i] = nowUs;
  }

  due(nowUs: number): boolean {
    return nowUs >= this.nextUs;
  }

  sample(nowUs: number, targetBps: number, paths: readonly PathTraceInput[]): void {
    const r1 = (x: number) => Math.round(x * 10) / 10;
    const r2 = (x: number) => Math.round(x * 100) / 100;
    const r3 = (x: number) => Math.round(x * 1000) / 1000;
    // Missing (an estimator without that state, or none yet): -1 for the non-negative columns, after scaling; null for the signed ones.
    const mbps = (x: number) => (Number.isFinite(x) ? r3(x / 1e6) : -1);
    const ms1 = (x: number) => (Number.isFinite(x) ? r1(x) : -1);
    const signed = (x: number) => (Number.isFinite(x) ? r2(x) : null);
    this.out.t.push(r2(nowUs / 1e6));
    this.out.target.push(r3(targetBps / 1e6));
    paths.forEach((p, i) => {
      const c = this.out.paths[i];
      const b = this.bins[i];
      if (!c || !b) return;
      c.cap.push(r3(p.capBps / 1e6));
      c.netMs.push(Math.round(p.netMs));
      c.netKB.push(r1(p.netBytes / 1000));
      c.drops.push(p.drops);
      c.est.push(r3(p.estBps / 1e6));
      c.gcc.push(mbps(p.gccBps));
      c.dly.push(mbps(p.delayBps));
      c.lss.push(mbps(p.lossBps));
      c.ack.push(mbps(p.ackedBps));
      c.snd1s.push(r3(p.sendBps / 1e6));
      c.qKB.push(r1(p.queuedBytes / 1000));
      c.srtt.push(ms1(p.srttMs));
      c.minRtt.push(ms1(p.minRttMs));
      c.rtt.push(ms1(p.rttMs));
      c.loss.push(Number.isFinite(p.lossFrac) ? r1(100 * p.lossFrac) : -1);
      c.rloss.push(Number.isFinite(p.recentLossFrac) ? r1(100 * p.recentLossFrac) : -1);
      c.trend.push(signed(p.trend));
      c.thr.push(signed(p.threshold));
      c.use.push(p.usage === 'overusing' ? 1 : p.usage === 'underusing' ? -1 : 0);
      c.onsets.push(Number.isFinite(p.onsets) ? p.onsets : -1);
      c.fbGapMs.push(Math.round((nowUs - this.lastFbUs[i]) / 1000));
      c.up.push(p.up ? 1 : 0);
      c.dem.push(p.demoted ? 1 : 0);
      c.share.push(Math.round(p.sharePct));
      c.txKB.push(r1(b.tx / 1000));
      c.rxKB.push(r1(b.rx / 1000));
      c.owd.push(b.n > 0 ? r1(b.owdSum / b.n) : -1);
      c.owdMin.push(b.n > 0 ? r1(b.owdMin) : -1);
      c.owdMax.push(b.n > 0 ? r1(b.owdMax) : -1);
      c.jit.push(b.jitN > 0 ? r2(b.jitSum / b.jitN) : -1);
      c.gaps.push(b.gaps);
      c.rtxKB.push(r1(b.rtx / 1000));
      c.keyKB.push(r1(b.key / 1000));
      this.bins[i] = freshBin();
    });
    this.nextUs += TRACE_US;
    // Bound the resend map: a resend comes within the sender's history age (well under 3 s).
    for (const [seq, f] of this.firstSend) {
      if (nowUs - f.us <= FIRST_SEND_KEEP_US) break;
      this.firstSend.delete(seq);
    }
  }
}
