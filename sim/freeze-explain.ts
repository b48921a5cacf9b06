/**
 * Freeze attribution for a simulated call (SimOptions.explainFreezes): for
 * every freeze of stream 0 (the freeze rule of src/feedback/qoe-metrics.ts),
 * which frame held the picture, on which path its packets were late or lost,
 * where the time went (sender queue vs network), whether another path had
 * spare capacity, and what the encoder target was against the paths'
 * capacity. `npm run bench -- --explain-freezes` sums the causes per
 * configuration into a table (bench/sim/report.ts), so the biggest remaining
 * causes across a suite are counted, not guessed.
 *
 * The recorder decodes every datagram stream 0 sends and receives on the up
 * links with the library's own decoder (src/wire/decode.ts) and keeps, per
 * frame id and path, the packets first sent and received (retransmissions
 * apart) and the last times; per path the bytes sent per 10 ms; every 100 ms the sender's view
 * of each path (up, enabled) and its encoder target. Memory grows with the
 * call (about 100 bytes per frame and path); it is for diagnosis, off by default.
 *
 * Causes (the first that applies, for the frame after the last one shown
 * before the freeze, the "stuck" frame):
 * - `no-frames`: no frame was encoded for at least half the freeze after the
 *   last frame shown (frames dropped before encoding, encoder frame-rate cap);
 * - `keyframe-wait`: the stuck frame was never decoded and the picture came
 *   back with a key frame (a lost packet without recovery, or a broken
 *   reference chain);
 * - `skipped`: the stuck frame was never decoded and the picture came back
 *   with a later delta frame (temporal-layer skip, a frame the receiver gave up);
 *   for these two, {@link KeyframeWait} (`kf`) says why the frame was lost
 *   (never sent whole, lost, retransmission lost too, arrived after the
 *   receiver gave up, or complete) and times the receiver's key frame request
 *   (with its reason, ReceiverEvents.keyframeRequest), the sender's request to
 *   the encoder and the key frame that ended the freeze;
 * - `late`: the stuck frame was decoded, late. Split by where its last packet
 *   spent the time: `sender` (capture -> last packet handed to the
 *   transport: pacer and sender queues) or `network` (last packet sent ->
 *   arrived: link queue, propagation, retransmission).
 */
import type { PathId } from '../src/core/types.js';
import { decodePacket } from '../src/wire/decode.js';
import type { DecodedFrame } from './metrics.js';

/** Resolution of the per-path send series (µs). */
const BIN_US = 10_000;
/** Interval of the sender-state samples (µs). */
const STATE_US = 100_000;
/** Capacity of the freeze window not used by us (bps) for another path to count as usable: at least this, and half the encoder target. */
const USABLE_SPARE_BPS = 300_000;

/** A copy of a packet sent on another path within this time of the first (µs) is a probe copy, not a retransmission. */
const PROBE_COPY_US = 20_000;

/** One media packet (flow seq) of stream 0: its first transmission, its first resend, its first arrival. */
interface SeqTrace {
  path: PathId;
  sentUs: number;
  /** First retransmission (µs), -1 none. */
  resendUs: number;
  /** First arrival (µs, -1 none), its path, and whether it came after a retransmission was sent. */
  arrivedUs: number;
  arrivedPath: PathId;
  arrivedAfterResend: boolean;
  /** First NACK of it the receiver sent (µs), -1 none; path of the first resend, -1 none. */
  nackUs: number;
  resendPath: number;
}

interface FrameTrace {
  captureUs: number;
  keyFrame: boolean;
  /** Fragments of the frame (from its packets' headers; 0 before one was sent). */
  fragCount: number;
  /** Distinct fragments sent (first transmissions). */
  fragsSent: Set<number>;
  /** Bytes of the first transmissions (datagrams). */
  bytes: number;
  seqs: Map<number, SeqTrace>;
}

/**
 * Why a `keyframe-wait` / `skipped` freeze's stuck frame was never decoded
 * and how the key frame that ended it came about (times in ms from the
 * freeze start, the last frame shown; -1 = did not happen in the window).
 */
export interface KeyframeWait {
  /**
   * The stuck frame: `unsent` (some fragment never handed to a transport:
   * purged or dropped by the sender), `lost` (a fragment never arrived and was
   * never retransmitted), `rtx-lost` (retransmitted, and no copy arrived),
   * `late` (every fragment arrived, after the receiver asked for a key
   * frame: it gave up too early), `complete` (every fragment arrived before
   * the request: a broken reference chain or a frame-buffer drop).
   */
  stuck: 'unsent' | 'lost' | 'rtx-lost' | 'late' | 'complete';
  /** Stuck frame: fragments sent / of the frame, packets retransmitted, last arrival (ms, -1 none). */
  fragsSent: number;
  fragCount: number;
  resent: number;
  lastArrivalMs: number;
  /** First key frame request of the receiver from the stuck frame's capture on (ms) and its reason. */
  requestMs: number;
  reason: string;
  /** Receiver key frame requests sent (granted by its rate limit) from the stuck frame's capture to the freeze end. */
  requests: number;
  /** First key frame request the sender passed to the encoder (ms; after its coalescing gate). */
  encoderRequestMs: number;
  /** The key frame that ended the freeze: captured (ms), bytes, capture -> last first transmission (ms), that -> last arrival (ms), packets lost, path carrying most of it. */
  keyCaptureMs: number;
  keyBytes: number;
  keySendMs: number;
  keyNetworkMs: number;
  keyLost: number;
  keyPath: number;
  /** Key frames captured between the stuck frame and the one that ended the freeze (not decoded). */
  keysBefore: number;
  /** The first of those (when any): why it was never decoded. */
  firstKey?: UndecodedKey;
}

/**
 * A key frame captured during a key-frame wait and never decoded (ms from
 * the freeze start; -1 = did not happen): its fate as for the stuck frame,
 * fragments sent / of the frame, first transmissions per path, first and last
 * first transmission, fragments that arrived (any copy) and the last arrival,
 * and fragments never arrived whose first transmission was on each path.
 */
export interface UndecodedKey {
  frameId: number;
  captureMs: number;
  bytes: number;
  fate: KeyframeWait['stuck'];
  fragsSent: number;
  fragCount: number;
  sentOn: number[];
  firstSendMs: number;
  lastSendMs: number;
  arrived: number;
  lastArrivalMs: number;
  resent: number;
  missingOn: number[];
  /** First retransmissions per path, and the first / last of them (ms). */
  resentOn: number[];
  firstResendMs: number;
  lastResendMs: number;
}

/** The sender's view of a path at one state sample. */
export interface PathView {
  up: boolean;
  enabled: boolean;
}

/**
 * One path at one state sample, for the per-path timeline of a freeze
 * (`pt`): where the bytes waited and what the sender believed.
 */
export interface PathSample {
  /** Sender-side queue (kB): our pacer queue and the datachannel's bufferedAmount. */
  pacerKB: number;
  dcKB: number;
  /** Network bottleneck queue (kB), the queueing delay of the last packet it accepted (ms), the link's capacity over the last 200 ms (Mbps) and its drop-tail drops so far. */
  netKB: number;
  netMs: number;
  capMbps: number;
  dropped: number;
  /** Delivery (acked) rate, estimate (target S_i) and our send rate over the last second (Mbps). */
  ackedMbps: number;
  estMbps: number;
  sendMbps: number;
  /** Smoothed RTT (ms). */
  srttMs: number;
  /**
   * What we sent on the path in the 100 ms before the sample, by kind (Mbps):
   * first transmissions of key / delta frame packets, resends (a media packet
   * sent before, on the same path or more than PROBE_COPY_US later: NACK and
   * RACK retransmissions, failover duplicates; they carry the original
   * bytes), copies (sent again at once on another path: probe duplicates),
   * FEC, audio (with its loss copies) and the rest (probe padding,
   * keepalives, control).
   */
  by?: SentByKind;
}

/** Send rate by kind (Mbps), see {@link PathSample.by}. */
export interface SentByKind {
  key: number;
  delta: number;
  rtx: number;
  copy: number;
  fec: number;
  audio: number;
  other: number;
}

/** Per-path timeline of a freeze: samples from 1 s before its start to its end, 100 ms apart; `t` s from the call start. */
export interface FreezeTimeline {
  t: number[];
  paths: PathSample[][];
}

/** One freeze, explained (see the module comment). */
export interface FreezeCause {
  atS: number;
  ms: number;
  cause: 'no-frames' | 'keyframe-wait' | 'skipped' | 'late';
  /** `late`: a packet of the frame was lost on `path` (recovered by retransmission or FEC), else where its last packet spent most of its time. */
  where?: 'loss' | 'sender' | 'network';
  /** Path of the stuck frame's lost or last-arriving packet, -1 when none was sent (purged or dropped by the sender). */
  path: number;
  /** The stuck frame (the one after the last frame shown). */
  frameId: number;
  /** Stuck frame: capture -> its first transmission on `path` (ms). */
  firstSendMs: number;
  /** Stuck frame: capture -> its last first transmission on `path` (ms), and that -> the last arrival on `path` (ms; -1 when a packet was lost there). */
  senderMs: number;
  networkMs: number;
  /** Stuck frame, packets lost on `path`: the longest time from a first transmission to its first retransmission (ms; the NACK round: reorder wait + NACK trip + queue), -1 when none was retransmitted. */
  resendMs: number;
  /** Packets of the stuck frame whose first transmission on `path` never arrived (recovered later or not). */
  lost: number;
  /** The stuck frame's last packet to arrive was a retransmission. */
  retransmitted: boolean;
  /** Another path (not `path`) was up in the sender's view with capacity we did not use during the freeze of at least max(300 kbps, half the encoder target). */
  otherPathUsable: boolean;
  /** Per path over the freeze window: link capacity and our send rate (Mbps), the sender's view at the freeze start. */
  paths: Array<{ id: number; capacityMbps: number; sentMbps: number; up: boolean; enabled: boolean }>;
  /** Encoder target at the freeze start (Mbps). */
  targetMbps: number;
  /** Key frames requested (keyframeNeeded) during the freeze. */
  keyframeRequests: number;
  /** `keyframe-wait` and `skipped`: why the stuck frame was lost and how the key frame came. */
  kf?: KeyframeWait;
  /** Stuck frame with a lost packet: the recovery timeline of its lost packet that arrived last (or never). */
  tl?: RecoveryTimeline;
  /** Per-path timeline around the freeze (when the run loop sampled the paths). */
  pt?: FreezeTimeline;
}

/**
 * The recovery of one lost packet of a stuck frame, in ms from the frame's
 * capture (-1 = did not happen): first send, the receiver's first NACK, the
 * first resend (`rack`: sent before any NACK of it, so by the sender's RACK
 * or failover duplicate), the arrival, and the frame's deadline (its capture
 * plus the playout delay of the last frame shown before the freeze).
 */
export interface RecoveryTimeline {
  sendMs: number;
  sendPath: number;
  nackMs: number;
  resendMs: number;
  resendPath: number;
  rack: boolean;
  arriveMs: number;
  arrivePath: number;
  deadlineMs: number;
  /** Packets of the frame lost (first transmission not arrived before a resend). */
  lost: number;
}

/** The attribution label of a cause, for tables: e.g. `late:network:wifi+rtx`, `keyframe-wait:cellular`. */
export function causeLabel(c: FreezeCause, pathNames: readonly string[]): string {
  const p = c.path >= 0 ? `:${pathNames[c.path] ?? c.path}` : ':unsent';
  if (c.cause === 'late') return `late:${c.where}${p}${c.retransmitted ? '+rtx' : ''}`;
  if (c.cause === 'no-frames') return 'no-frames';
  return `${c.cause}${p}`;
}

/** Records stream 0's traffic for {@link FreezeRecorder.explain}. */
export class FreezeRecorder {
  private readonly frames = new Map<number, FrameTrace>();
  private readonly sentBins: number[][];
  private readonly states: Array<{ atUs: number; targetBps: number; paths: PathView[]; detail?: PathSample[] }> = [];
  private readonly keyframeUs: number[] = [];
  private readonly rxRequests: Array<{ atUs: number; reason: string }> = [];
  private nextStateUs = 0;
  /** flowSeq -> first NACK (µs); flow seqs are unique within a call's 2^32 range, bounded below. */
  private readonly nacked = new Map<number, number>();

  /** Per path, per STATE_US bin: bytes sent by kind ({@link SentByKind}). */
  private readonly kindBins: Array<Array<SentByKind | undefined>>;

  constructor(readonly nPaths: number) {
    this.sentBins = Array.from({ length: nPaths }, () => []);
    this.kindBins = Array.from({ length: nPaths }, () => []);
  }

  private addKind(i: PathId, nowUs: number, kind: keyof SentByKind, bytes: number): void {
    const bins = this.kindBins[i];
    if (bins === undefined) return;
    const b = Math.floor(nowUs / STATE_US);
    const k = (bins[b] ??= { key: 0, delta: 0, rtx: 0, copy: 0, fec: 0, audio: 0, other: 0 });
    k[kind] += bytes;
  }

  /** {@link SentByKind} of path `i` over the STATE_US before `nowUs`. */
  private sentByKind(i: number, nowUs: number): SentByKind {
    const out: SentByKind = { key: 0, delta: 0, rtx: 0, copy: 0, fec: 0, audio: 0, other: 0 };
    const bins = this.kindBins[i] ?? [];
    const end = nowUs / STATE_US;
    for (const b of [Math.floor(end) - 1, Math.floor(end)]) {
      const k = bins[b];
      if (k === undefined) continue;
      // Share of bin b inside (nowUs - STATE_US, nowUs].
      const w = Math.max(0, Math.min(b + 1, end) - Math.max(b, end - 1));
      for (const key of Object.keys(out) as Array<keyof SentByKind>) out[key] += k[key] * w;
    }
    for (const key of Object.keys(out) as Array<keyof SentByKind>) out[key] = Math.round((out[key] * 8e6) / STATE_US / 1e4) / 100;
    return out;
  }

  /** Stream 0's encoder produced frame `id` (before the sender may drop or purge it). */
  onFrame(id: number, captureUs: number, keyFrame: boolean): void {
    this.frame(id, captureUs, keyFrame);
  }

  /** A datagram of stream 0 handed to path `i`'s transport at `nowUs`. */
  onSend(i: PathId, bytes: Uint8Array, nowUs: number): void {
    const bin = Math.floor(nowUs / BIN_US);
    const series = this.sentBins[i];
    while (series.length <= bin) series.push(0);
    series[bin] += bytes.length;
    const r = decodePacket(bytes);
    const kind = r.ok ? r.packet.body.kind : 'other';
    const m = r.ok && r.packet.body.kind === 'media' && r.packet.body.media.streamId === 0 ? r.packet.body.media : undefined;
    if (m === undefined) {
      this.addKind(i, nowUs, kind === 'fec' || kind === 'audio' ? kind : 'other', bytes.length);
      return;
    }
    const f = this.frame(m.frameId, m.captureUs, m.keyFrame);
    f.fragCount = m.fragCount;
    const q = f.seqs.get(m.flowSeq);
    const again = q !== undefined && (m.retransmission || i === q.path || nowUs - q.sentUs > PROBE_COPY_US);
    this.addKind(i, nowUs, again ? 'rtx' : q !== undefined ? 'copy' : m.keyFrame ? 'key' : 'delta', bytes.length);
    if (q === undefined && !m.retransmission) {
      f.fragsSent.add(m.fragIndex);
      f.bytes += bytes.length;
    }
    if (q === undefined) f.seqs.set(m.flowSeq, { path: i, sentUs: nowUs, resendUs: -1, arrivedUs: -1, arrivedPath: -1, arrivedAfterResend: false, nackUs: -1, resendPath: -1 });
    else if (q.resendUs < 0 && (m.retransmission || i === q.path || nowUs - q.sentUs > PROBE_COPY_US)) {
      q.resendUs = nowUs;
      q.resendPath = i;
    }
  }

  /** A datagram of stream 0's receiver handed to a down link at `nowUs`: records first NACK times. */
  onControlSend(bytes: Uint8Array, nowUs: number): void {
    const r = decodePacket(bytes);
    if (!r.ok || r.packet.body.kind !== 'nack' || r.packet.body.nack.streamId !== 0) return;
    for (const seq of r.packet.body.nack.flowSeqs) {
      if (this.nacked.has(seq)) continue;
      this.nacked.set(seq, nowUs);
      if (this.nacked.size > 200_000) {
        const first = this.nacked.keys().next().value;
        if (first !== undefined) this.nacked.delete(first);
      }
    }
  }

  /** A datagram of stream 0 arrived on path `i` at `nowUs`. */
  onArrival(i: PathId, bytes: Uint8Array, nowUs: number): void {
    const m = media(bytes);
    if (m === undefined) return;
    const q = this.frames.get(m.frameId)?.seqs.get(m.flowSeq);
    if (q === undefined || q.arrivedUs >= 0) return;
    q.arrivedUs = nowUs;
    q.arrivedPath = i;
    q.arrivedAfterResend = q.resendUs >= 0 && nowUs >= q.resendUs;
  }

  /** The sender asked its encoder for a key frame (after its coalescing gate). */
  onKeyframeRequest(nowUs: number): void {
    this.keyframeUs.push(nowUs);
  }

  /** The receiver sent a key frame request (ReceiverEvents.keyframeRequest). */
  onReceiverKeyframeRequest(nowUs: number, reason: string): void {
    this.rxRequests.push({ atUs: nowUs, reason });
  }

  /** True when a sender-state sample is due (call {@link sample} then). */
  sampleDue(nowUs: number): boolean {
    return nowUs >= this.nextStateUs;
  }

  sample(nowUs: number, targetBps: number, paths: ReadonlyArray<{ id: number; up: boolean; enabled: boolean; demoted?: boolean }>, detail?: PathSample[]): void {
    const view: PathView[] = Array.from({ length: this.nPaths }, () => ({ up: false, enabled: false }));
    for (const p of paths) if (p.id >= 0 && p.id < this.nPaths) view[p.id] = { up: p.up && p.demoted !== true, enabled: p.enabled };
    this.states.push({ atUs: nowUs, targetBps, paths: view, ...(detail ? { detail: detail.map((d, i) => ({ ...d, by: this.sentByKind(i, nowUs) })) } : {}) });
    this.nextStateUs = nowUs + STATE_US;
  }

  /**
   * Explain each freeze of `decoded` (stream 0's decode log, in decode order).
   * `capacityBps(i, fromMs, toMs)`: path i's up-link capacity over the window.
   */
  explain(freezes: ReadonlyArray<{ atUs: number; ms: number }>, decoded: readonly DecodedFrame[], capacityBps: (i: number, fromMs: number, toMs: number) => number): FreezeCause[] {
    const byTime = new Map<number, number>();
    decoded.forEach((f, k) => {
      if (!byTime.has(f.decodedUs)) byTime.set(f.decodedUs, k);
    });
    const decodedIds = new Set(decoded.map((f) => f.frameId));
    const out: FreezeCause[] = [];
    for (const fz of freezes) {
      const k = byTime.get(fz.atUs);
      if (k === undefined || k + 1 >= decoded.length) continue;
      const a = decoded[k];
      const b = decoded[k + 1];
      const endUs = b.decodedUs;
      const stuckId = a.frameId + 1;
      const stuck = this.frames.get(stuckId);
      const { path, lost, firstSendMs, senderMs, networkMs, resendMs, rtx } = culprit(stuck);
      let cause: FreezeCause['cause'];
      if (stuck === undefined || stuck.captureUs > a.captureUs + Math.max(100_000, (fz.ms * 1000) / 2)) cause = 'no-frames';
      else if (!decodedIds.has(stuckId)) cause = b.frameId > stuckId && this.frames.get(b.frameId)?.keyFrame === true ? 'keyframe-wait' : 'skipped';
      else cause = 'late';
      const state = this.stateAt(fz.atUs);
      const fromMs = Math.floor(fz.atUs / 1000);
      const toMs = Math.max(fromMs + 1, Math.ceil(endUs / 1000));
      const paths = Array.from({ length: this.nPaths }, (_, i) => ({
        id: i,
        capacityMbps: round2(capacityBps(i, fromMs, toMs) / 1e6),
        sentMbps: round2(this.sentBps(i, fz.atUs, endUs) / 1e6),
        up: state?.paths[i]?.up ?? false,
        enabled: state?.paths[i]?.enabled ?? false,
      }));
      const spareBps = Math.max(USABLE_SPARE_BPS, (state?.targetBps ?? 0) / 2);
      const usable = paths.some((p) => p.id !== path && p.up && (p.capacityMbps - p.sentMbps) * 1e6 >= spareBps);
      out.push({
        atS: Math.round(fz.atUs / 1000) / 1000,
        ms: Math.round(fz.ms),
        cause,
        ...(cause === 'late' ? { where: lost > 0 ? ('loss' as const) : senderMs >= networkMs ? ('sender' as const) : ('network' as const) } : {}),
        path,
        frameId: stuckId,
        firstSendMs,
        senderMs,
        networkMs,
        resendMs,
        lost,
        retransmitted: rtx,
        otherPathUsable: usable,
        paths,
        targetMbps: round2((state?.targetBps ?? 0) / 1e6),
        keyframeRequests: this.keyframeUs.filter((t) => t >= fz.atUs && t < endUs).length,
        ...(cause === 'keyframe-wait' || cause === 'skipped' ? { kf: this.keyframeWait(stuckId, stuck as FrameTrace, b.frameId, fz.atUs, endUs) } : {}),
        ...(lost > 0 && stuck !== undefined ? { tl: this.timeline(stuck, a.decodedUs - a.captureUs) } : {}),
        ...this.pathTimeline(fz.atUs - 1_000_000, endUs),
      });
    }
    return out;
  }

  /** {@link FreezeTimeline} over [fromUs, toUs], empty when no sample there has detail. */
  private pathTimeline(fromUs: number, toUs: number): { pt?: FreezeTimeline } {
    const t: number[] = [];
    const paths: PathSample[][] = Array.from({ length: this.nPaths }, () => []);
    for (const s of this.states) {
      if (s.atUs < fromUs || s.atUs > toUs || s.detail === undefined) continue;
      t.push(Math.round(s.atUs / 1000) / 1000);
      for (let i = 0; i < s.detail.length; i++) paths[i]?.push(s.detail[i]);
    }
    return t.length > 0 ? { pt: { t, paths } } : {};
  }

  /** {@link RecoveryTimeline} of the stuck frame `f`; `delayUs` the playout delay of the last frame shown. */
  private timeline(f: FrameTrace, delayUs: number): RecoveryTimeline {
    let pick: { seq: number; q: SeqTrace } | undefined;
    let lost = 0;
    for (const [seq, q] of f.seqs) {
      if (!(q.arrivedUs < 0 || q.arrivedAfterResend)) continue;
      lost++;
      const arr = q.arrivedUs < 0 ? Infinity : q.arrivedUs;
      const cur = pick === undefined ? -1 : pick.q.arrivedUs < 0 ? Infinity : pick.q.arrivedUs;
      if (pick === undefined || arr > cur) pick = { seq, q };
    }
    const rel = (us: number) => (us >= 0 && Number.isFinite(us) ? Math.round((us - f.captureUs) / 1000) : -1);
    const q = pick?.q;
    const nackUs = pick === undefined ? -1 : (this.nacked.get(pick.seq) ?? -1);
    return {
      sendMs: q ? rel(q.sentUs) : -1,
      sendPath: q?.path ?? -1,
      nackMs: rel(nackUs),
      resendMs: q ? rel(q.resendUs) : -1,
      resendPath: q?.resendPath ?? -1,
      rack: q !== undefined && q.resendUs >= 0 && (nackUs < 0 || q.resendUs < nackUs),
      arriveMs: q ? rel(q.arrivedUs) : -1,
      arrivePath: q?.arrivedPath ?? -1,
      deadlineMs: Math.round(delayUs / 1000),
      lost,
    };
  }

  /** {@link KeyframeWait} of a freeze whose stuck frame `stuckId` was never decoded and frame `endId` ended it. */
  private keyframeWait(stuckId: number, stuck: FrameTrace, endId: number, atUs: number, endUs: number): KeyframeWait {
    const rel = (us: number) => (us >= 0 && Number.isFinite(us) ? Math.round((us - atUs) / 1000) : -1);
    const from = Math.min(stuck.captureUs, atUs);
    const reqs = this.rxRequests.filter((r) => r.atUs >= from && r.atUs < endUs);
    const first = reqs[0];
    const { fate: kind, resent, lastArrUs: lastArr } = frameFate(stuck, first?.atUs);
    const enc = this.keyframeUs.find((t) => t >= from && t < endUs);
    const key = this.frames.get(endId);
    let keysBefore = 0;
    let firstKey: UndecodedKey | undefined;
    for (let id = stuckId + 1; id < endId; id++) {
      const f = this.frames.get(id);
      if (f?.keyFrame !== true) continue;
      keysBefore++;
      if (firstKey === undefined) firstKey = this.undecodedKey(id, f, reqs[0]?.atUs, rel);
    }
    const k = key?.keyFrame === true ? culprit(key) : undefined;
    let keyLastSend = -Infinity;
    let keyLastArr = -Infinity;
    const byPath = new Map<number, number>();
    for (const q of key?.seqs.values() ?? []) {
      keyLastSend = Math.max(keyLastSend, q.sentUs);
      if (q.arrivedUs >= 0) keyLastArr = Math.max(keyLastArr, q.arrivedUs);
      byPath.set(q.path, (byPath.get(q.path) ?? 0) + 1);
    }
    let keyPath = -1;
    for (const [p, n] of byPath) if (keyPath < 0 || n > (byPath.get(keyPath) ?? 0)) keyPath = p;
    return {
      stuck: kind,
      fragsSent: stuck.fragsSent.size,
      fragCount: stuck.fragCount,
      resent,
      lastArrivalMs: rel(lastArr),
      requestMs: first === undefined ? -1 : rel(first.atUs),
      reason: first?.reason ?? '',
      requests: reqs.length,
      encoderRequestMs: enc === undefined ? -1 : rel(enc),
      keyCaptureMs: key === undefined ? -1 : rel(key.captureUs),
      keyBytes: key?.bytes ?? 0,
      keySendMs: key !== undefined && Number.isFinite(keyLastSend) ? Math.round((keyLastSend - key.captureUs) / 1000) : -1,
      keyNetworkMs: Number.isFinite(keyLastArr) && Number.isFinite(keyLastSend) ? Math.round((keyLastArr - keyLastSend) / 1000) : -1,
      keyLost: k?.lost ?? 0,
      keyPath,
      keysBefore,
      ...(firstKey ? { firstKey } : {}),
    };
  }

  private undecodedKey(frameId: number, f: FrameTrace, requestUs: number | undefined, rel: (us: number) => number): UndecodedKey {
    const sentOn = new Array<number>(this.nPaths).fill(0);
    const missingOn = new Array<number>(this.nPaths).fill(0);
    const resentOn = new Array<number>(this.nPaths).fill(0);
    let first = Infinity;
    let last = -Infinity;
    let firstRe = Infinity;
    let lastRe = -Infinity;
    for (const q of f.seqs.values()) {
      if (q.path >= 0 && q.path < this.nPaths) sentOn[q.path]++;
      if (q.resendPath >= 0 && q.resendPath < this.nPaths) resentOn[q.resendPath]++;
      if (q.resendUs >= 0) {
        firstRe = Math.min(firstRe, q.resendUs);
        lastRe = Math.max(lastRe, q.resendUs);
      }
      first = Math.min(first, q.sentUs);
      last = Math.max(last, q.sentUs);
      if (q.arrivedUs < 0 && q.path >= 0 && q.path < this.nPaths) missingOn[q.path]++;
    }
    const { fate, missing, resent, lastArrUs: lastArr } = frameFate(f, requestUs);
    const arrived = f.seqs.size - missing;
    return {
      frameId,
      captureMs: rel(f.captureUs),
      bytes: f.bytes,
      fate,
      fragsSent: f.fragsSent.size,
      fragCount: f.fragCount,
      sentOn,
      firstSendMs: rel(first),
      lastSendMs: rel(last),
      arrived,
      lastArrivalMs: rel(lastArr),
      resent,
      missingOn,
      resentOn,
      firstResendMs: rel(firstRe),
      lastResendMs: rel(lastRe),
    };
  }

  private frame(id: number, captureUs: number, keyFrame: boolean): FrameTrace {
    let f = this.frames.get(id);
    if (f === undefined) {
      f = { captureUs, keyFrame, fragCount: 0, fragsSent: new Set(), bytes: 0, seqs: new Map() };
      this.frames.set(id, f);
    }
    return f;
  }

  private stateAt(atUs: number): (typeof this.states)[number] | undefined {
    let lo = 0;
    let hi = this.states.length - 1;
    let best: number | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.states[mid].atUs <= atUs) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best === undefined ? this.states[0] : this.states[best];
  }

  private sentBps(i: number, fromUs: number, toUs: number): number {
    const s = this.sentBins[i];
    let bytes = 0;
    for (let b = Math.floor(fromUs / BIN_US); b < Math.ceil(toUs / BIN_US) && b < s.length; b++) bytes += s[b];
    return (bytes * 8e6) / Math.max(BIN_US, toUs - fromUs);
  }
}

function media(bytes: Uint8Array) {
  const r = decodePacket(bytes);
  if (!r.ok || r.packet.body.kind !== 'media' || r.packet.body.media.streamId !== 0) return undefined;
  return r.packet.body.media;
}

/**
 * The path that held the stuck frame back: the one where most of its
 * packets' first transmissions were lost (recovered later or not), else the
 * one whose packet arrived last, else the one it was last sent on; with the
 * frame's times on that path: capture -> first and last first transmission,
 * and last first transmission -> last arrival (-1 when a packet was lost).
 */
/**
 * Why frame `f` was never decoded ({@link KeyframeWait.stuck}): a fragment never sent (`unsent`), a fragment
 * never arrived (`rtx-lost` when one of those was retransmitted, else `lost`), all arrived at or after the
 * receiver's first key frame request at `requestUs` (`late`), or before it (`complete`); with its fragments
 * never arrived, retransmitted, and the last arrival (µs, -1 none).
 */
function frameFate(f: FrameTrace, requestUs: number | undefined): { fate: KeyframeWait['stuck']; missing: number; resent: number; lastArrUs: number } {
  let missing = 0;
  let resent = 0;
  let lastArrUs = -1;
  let rtxMissing = false;
  for (const q of f.seqs.values()) {
    if (q.resendUs >= 0) resent++;
    if (q.arrivedUs >= 0) lastArrUs = Math.max(lastArrUs, q.arrivedUs);
    else {
      missing++;
      if (q.resendUs >= 0) rtxMissing = true;
    }
  }
  const unsent = f.fragCount === 0 || f.fragsSent.size < f.fragCount;
  const fate = unsent ? 'unsent' : missing > 0 ? (rtxMissing ? 'rtx-lost' : 'lost') : requestUs !== undefined && lastArrUs >= requestUs ? 'late' : 'complete';
  return { fate, missing, resent, lastArrUs };
}

function culprit(f: FrameTrace | undefined): { path: number; lost: number; firstSendMs: number; senderMs: number; networkMs: number; resendMs: number; rtx: boolean } {
  const none = { path: -1, lost: 0, firstSendMs: 0, senderMs: 0, networkMs: 0, resendMs: -1, rtx: false };
  if (f === undefined || f.seqs.size === 0) return none;
  const lostOn = new Map<PathId, number>();
  let lastArr: SeqTrace | undefined;
  let lastSent: SeqTrace | undefined;
  for (const q of f.seqs.values()) {
    if (q.arrivedUs < 0 || q.arrivedAfterResend) lostOn.set(q.path, (lostOn.get(q.path) ?? 0) + 1);
    if (q.arrivedUs >= 0 && (lastArr === undefined || q.arrivedUs > lastArr.arrivedUs)) lastArr = q;
    if (lastSent === undefined || q.sentUs > lastSent.sentUs) lastSent = q;
  }
  let path = -1;
  let lost = 0;
  for (const [i, n] of lostOn) {
    if (n > lost) {
      lost = n;
      path = i;
    }
  }
  if (path < 0) path = lastArr !== undefined ? lastArr.arrivedPath : (lastSent as SeqTrace).path;
  let first = Infinity;
  let last = -Infinity;
  let arrived = -Infinity;
  let resend = -1;
  for (const q of f.seqs.values()) {
    if (q.path === path) {
      first = Math.min(first, q.sentUs);
      last = Math.max(last, q.sentUs);
      if ((q.arrivedUs < 0 || q.arrivedAfterResend) && q.resendUs >= 0) resend = Math.max(resend, q.resendUs - q.sentUs);
    }
    if (q.arrivedPath === path && q.arrivedUs > arrived) arrived = q.arrivedUs;
  }
  const ms = (us: number) => (Number.isFinite(us) ? Math.round((us - f.captureUs) / 1000) : -1);
  return {
    path,
    lost,
    firstSendMs: ms(first),
    senderMs: ms(last),
    networkMs: lost > 0 || !Number.isFinite(arrived) || !Number.isFinite(last) ? -1 : Math.round((arrived - last) / 1000),
    resendMs: resend < 0 ? -1 : Math.round(resend / 1000),
    rtx: lastArr?.arrivedAfterResend === true,
  };
}

function round2(x: number): number {
  return Number.isFinite(x) ? Math.round(x * 100) / 100 : 0;
}
