/**
 * Turns what the bench pages log (source draws, displayed frames with their
 * barcode ids, sampled quality) and per-second counters into one uniform
 * result per compared configuration, so our multipath stack and plain
 * Chromium WebRTC are measured the same way (same freeze rule, same latency
 * definition, same sampled frame ids for PSNR). Freezes, fps, latency and
 * goodput are the project's one definition of each
 * (src/feedback/qoe-metrics.ts), applied to display times of new frames.
 */
import type { SimAudioResult } from '../../sim/types.js';
import { percentile } from '../../src/feedback/percentile.js';
import { freezesOf, goodputBps, latencyOf, latencySampleMs, meanFps } from '../../src/feedback/qoe-metrics.js';
import type { PathTraffic, PathUsageCheck } from '../../tools/harness/path-usage.js';
import { splitFreezes } from './outages.js';
import type { FreezeSplit, Span } from './outages.js';

/** Sender: source frame `id` was drawn at `tMs` (host epoch clock, ms). */
export interface DrawEntry {
  id: number;
  tMs: number;
}

/** Receiver: a frame came out of the remote track at `tMs`; `id` is its barcode (-1 unreadable). */
export interface DisplayEntry {
  id: number;
  tMs: number;
  w: number;
  h: number;
}

/** Receiver: quality of displayed frame `id` vs its source. */
export interface QualityEntry {
  id: number;
  psnr: number;
  ssim?: number;
}

const round = (x: number, d = 1): number => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);
const mean = (a: number[]): number => (a.length ? a.reduce((x, y) => x + y, 0) / a.length : NaN);
const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

export interface BenchPerSecond {
  t: number;
  /** New source frames displayed in this second. */
  fps: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  /** Media bytes received in this second x 8 (bps). */
  goodputBps: number;
  psnrMean: number | null;
  /** Displayed resolution (most frequent in this second), e.g. "640x480". */
  resolution: string;
}

/**
 * Audio of a configuration (ours only): the receiver's jitter buffer stats
 * (webrtc-stats concealedSamples / totalSamplesReceived; mouth-to-ear =
 * capture -> played out, src/feedback/qoe-metrics.ts latencySampleMs) and
 * the decoded level.
 */
export interface BenchAudio
  extends Pick<SimAudioResult, 'concealedPct' | 'mouthToEarP95Ms' | 'mouthToEarP50Ms' | 'framesSent' | 'packetsReceived' | 'packetsLost' | 'duplicates' | 'latePackets' | 'avOffsetMs'> {
  /** Largest 1-second RMS of the decoded audio (full scale 1); the fake device's beep is well above 0.001. */
  maxRms: number;
}

/** One compared configuration's result (results.json entry). */
export interface BenchResult {
  name: string;
  kind: 'multipath' | 'native';
  codec: string;
  durationS: number;
  /** Time from the start to the first displayed frame (ms). */
  firstFrameMs: number | null;
  frames: {
    /** Source frames drawn into the track. */
    drawn: number;
    /** Encoded by the sender (ours: encoder output; native: outbound-rtp framesEncoded). */
    sent: number;
    decoded: number;
    /** sent - decoded (clamped at 0): encoded frames that never came out of the decoder. */
    dropped: number;
    /** Distinct source ids seen at the receiver. */
    displayed: number;
    /** Source ids between the first and last displayed one that were never displayed. */
    notDisplayed: number;
    /** Frames whose barcode could not be read. */
    unreadable: number;
  };
  /** Distinct source frames displayed per second, from the first display to the end (`meanFps`). */
  fps: number;
  /** Receiver-side freezes from display times of new frames (libwebrtc rule, `freezesOf`). */
  freezes: { count: number; totalMs: number };
  /** Each freeze: `atMs` = display time of the frame before it, ms since the start of the run; `ms` = its length. */
  freezeList: Array<{ atMs: number; ms: number }>;
  /**
   * The freeze time split by the enabled paths' link outages (bench/browser/outages.ts);
   * undefined when the runner knew no outages or the scenario time of the start.
   */
  freezeSplit?: FreezeSplit;
  /** Source draw -> receiver display (ms). */
  latencyMs: { mean: number | null; p50: number | null; p95: number | null };
  keyframeRequests: number;
  psnr: { mean: number | null; p5: number | null; samples: number };
  ssim: { mean: number | null; p5: number | null } | null;
  /** Media bytes received x 8 / seconds of the active span (bps, `goodputBps`). */
  goodputBps: number;
  /** Resolutions displayed and how many frames each. */
  resolutions: Record<string, number>;
  perSecond: BenchPerSecond[];
  /** What each emulated path's relay carried, per direction (set by the runner). */
  relay?: PathTraffic[];
  /** Every path this configuration enables (and the scenario does not blackhole throughout) carried >= 1% of the media. */
  pathUsage?: PathUsageCheck;
  /** Audio (ours with audio on; null for native WebRTC or without audio). */
  audio?: BenchAudio | null;
  /** Kind-specific statistics (native getStats extras; our CallStats digest). */
  extras: Record<string, unknown>;
  errors: string[];
}

export interface SummarizeInput {
  name: string;
  kind: 'multipath' | 'native';
  codec: string;
  durationS: number;
  /** Host epoch ms at which the run started (after both pages were ready). */
  startMs: number;
  draws: DrawEntry[];
  displays: DisplayEntry[];
  quality: QualityEntry[];
  /** Cumulative media bytes received, sampled once per second (t = seconds since start). */
  bytesReceived: Array<{ t: number; bytes: number }>;
  framesSent: number;
  framesDecoded: number;
  keyframeRequests: number;
  /**
   * Scenario (link) time at `startMs` (ms) and the enabled paths' outages in
   * scenario time: with both, the result carries `freezeSplit`.
   */
  scenarioAtStartMs?: number;
  outages?: { uplink: Span[]; downlink: Span[] };
  extras?: Record<string, unknown>;
  errors?: string[];
}

/** Build one configuration's result. Pure; tolerant of empty logs. */
export function summarizeRun(inp: SummarizeInput): BenchResult {
  const drawAt = new Map<number, number>();
  for (const d of inp.draws) if (!drawAt.has(d.id)) drawAt.set(d.id, d.tMs);
  const displays = [...inp.displays].sort((a, b) => a.tMs - b.tMs);
  const seen = new Set<number>();
  const latencies: number[] = [];
  const firstDisplays: DisplayEntry[] = [];
  let unreadable = 0;
  const resolutions: Record<string, number> = {};
  for (const d of displays) {
    const res = `${d.w}x${d.h}`;
    resolutions[res] = (resolutions[res] ?? 0) + 1;
    if (d.id < 0) {
      unreadable++;
      continue;
    }
    if (seen.has(d.id)) continue;
    seen.add(d.id);
    firstDisplays.push(d);
    const t0 = drawAt.get(d.id);
    if (t0 !== undefined) latencies.push(latencySampleMs(t0 * 1000, d.tMs * 1000));
  }
  const ids = [...seen].sort((a, b) => a - b);
  const notDisplayed = ids.length ? ids[ids.length - 1] - ids[0] + 1 - ids.length : 0;
  const firstMs = firstDisplays.length ? firstDisplays[0].tMs : undefined;
  const endMs = inp.startMs + inp.durationS * 1000;
  // Freezes: on display times of frames that showed new content (repeats of an id do not count as motion).
  const freezes = freezesOf(
    firstDisplays.map((d) => d.tMs),
    { startMs: inp.startMs, endMs },
  );
  const lat = latencyOf(latencies);
  const psnrs = inp.quality.map((q) => q.psnr).filter(Number.isFinite);
  const ssims = inp.quality.map((q) => q.ssim ?? NaN).filter(Number.isFinite);
  const perSecond: BenchPerSecond[] = [];
  const bytesAt = new Map(inp.bytesReceived.map((b) => [b.t, b.bytes]));
  const qById = new Map(inp.quality.map((q) => [q.id, q]));
  for (let t = 1; t <= inp.durationS; t++) {
    const lo = inp.startMs + (t - 1) * 1000;
    const hi = lo + 1000;
    const inSec = firstDisplays.filter((d) => d.tMs >= lo && d.tMs < hi);
    const lat = inSec.map((d) => (drawAt.has(d.id) ? latencySampleMs(drawAt.get(d.id)! * 1000, d.tMs * 1000) : NaN)).filter(Number.isFinite);
    const q = inSec.map((d) => qById.get(d.id)?.psnr ?? NaN).filter(Number.isFinite);
    const resCount = new Map<string, number>();
    for (const d of inSec) resCount.set(`${d.w}x${d.h}`, (resCount.get(`${d.w}x${d.h}`) ?? 0) + 1);
    const resolution = [...resCount].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '';
    const b1 = bytesAt.get(t);
    const b0 = t === 1 ? 0 : bytesAt.get(t - 1);
    perSecond.push({
      t,
      fps: inSec.length,
      latencyP50Ms: finiteOrNull(round(percentile(lat, 50))),
      latencyP95Ms: finiteOrNull(round(percentile(lat, 95))),
      goodputBps: b1 !== undefined && b0 !== undefined ? Math.max(0, Math.round((b1 - b0) * 8)) : 0,
      psnrMean: finiteOrNull(round(mean(q), 2)),
      resolution,
    });
  }
  const lastBytes = inp.bytesReceived.length ? inp.bytesReceived[inp.bytesReceived.length - 1] : undefined;
  const firstActiveSecond = firstMs !== undefined ? Math.max(0, Math.floor((firstMs - inp.startMs) / 1000)) : 0;
  const bytesBeforeActive = firstActiveSecond > 0 ? (bytesAt.get(firstActiveSecond) ?? 0) : 0;
  return {
    name: inp.name,
    kind: inp.kind,
    codec: inp.codec,
    durationS: inp.durationS,
    firstFrameMs: firstMs !== undefined ? Math.round(firstMs - inp.startMs) : null,
    frames: {
      drawn: drawAt.size,
      sent: inp.framesSent,
      decoded: inp.framesDecoded,
      dropped: Math.max(0, inp.framesSent - inp.framesDecoded),
      displayed: seen.size,
      notDisplayed,
      unreadable,
    },
    fps: round(meanFps(seen.size, firstMs, endMs)),
    freezes: { count: freezes.count, totalMs: Math.round(freezes.totalMs) },
    freezeList: freezes.list.map((f) => ({ atMs: Math.round(f.at - inp.startMs), ms: Math.round(f.ms) })),
    ...(inp.outages && inp.scenarioAtStartMs !== undefined
      ? {
          freezeSplit: splitFreezes(
            freezes.list.map((f) => [f.at - inp.startMs + inp.scenarioAtStartMs!, f.at + f.ms - inp.startMs + inp.scenarioAtStartMs!] as const),
            inp.outages.uplink,
            inp.outages.downlink,
            lat.p50 ?? 0,
          ),
        }
      : {}),
    latencyMs: {
      mean: lat.mean !== undefined ? round(lat.mean) : null,
      p50: lat.p50 !== undefined ? round(lat.p50) : null,
      p95: lat.p95 !== undefined ? round(lat.p95) : null,
    },
    keyframeRequests: inp.keyframeRequests,
    psnr: { mean: finiteOrNull(round(mean(psnrs), 2)), p5: finiteOrNull(round(percentile(psnrs, 5), 2)), samples: psnrs.length },
    ssim: ssims.length ? { mean: round(mean(ssims), 4), p5: round(percentile(ssims, 5), 4) } : null,
    // Bytes are sampled once per second: the active span starts at the second the first frame fell in.
    goodputBps: lastBytes ? Math.round(goodputBps(lastBytes.bytes - bytesBeforeActive, inp.startMs + firstActiveSecond * 1000, inp.startMs + lastBytes.t * 1000)) : 0,
    resolutions,
    perSecond,
    extras: inp.extras ?? {},
    errors: inp.errors ?? [],
  };
}
