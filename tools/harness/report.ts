/**
 * `report.json` (a documented contract, see docs/report.md) and `report.html`
 * (uPlot charts) of one call, built from the per-second samples of the two pages.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { CallStatsEntry } from '../../src/call/stats-types.js';
import { percentile } from '../../src/feedback/percentile.js';
import { latencyOf, meanFps } from '../../src/feedback/qoe-metrics.js';
import { formatPathTraffic } from './path-usage.js';
import type { PathTraffic, PathUsageCheck } from './path-usage.js';
import type { SourceInfo } from './clip.js';
import { ms, peerView } from './stats-view.js';

export interface FrameLogEntry {
  frameId: number;
  latencyMs: number;
  atMs: number;
}

/** What the harness reads from a page each second. */
export interface PeerSample {
  /** The page's `getStats()` entries (`report.toJSON()`; src/call/stats-types.ts). */
  stats: CallStatsEntry[];
  frames: FrameLogEntry[];
  outOfOrder: number;
  camera?: { width: number; height: number; fps: number };
}

export interface ReportPath {
  id: number;
  packetsSent: number;
  bytesSent: number;
  mediaPacketsSent: number;
  sharePct: number;
  rttMs: number;
  lossPct: number;
  rateBps: number;
  goodputBps: number;
  fecPacketsSent: number;
  retransmissionsSent: number;
  probesSent: number;
  localAddress?: string;
  remoteAddress?: string;
  fecUtilizationPct: number;
  latePackets: number;
  /** What the media receiver sent back on the path's reverse direction ({@link pathFeedback}). */
  feedback?: PathFeedback;
  /** Browser calls: the path's state at the end, ms to its first connection, restarts (getStats() `path` entries). */
  state?: string;
  connectMs?: number;
  iceRestarts?: number;
}

/**
 * Feedback on a path's reverse direction, from the media receiver's counters
 * (ReceiverPathStats / getStats() `path` entry: `feedbackBytesSent`,
 * `reportBytesSent`, `reportArrivalsRelisted`): bytes of encoded feedback
 * datagrams (no transport overhead) and their mean rate over the call (bps).
 * One definition for the simulator's results.json and the browser call report.
 */
export interface PathFeedback {
  /** All feedback: path reports, clock echoes, NACKs, QoE feedback, key frame requests (bytes, bps). */
  bytes: number;
  bps: number;
  /** The path reports among it (bytes, bps). */
  reportBytes: number;
  reportBps: number;
  /** Arrivals the path's reports listed again (src/feedback/path-report-builder.ts `relisted`). */
  relisted: number;
}

/** {@link PathFeedback} of a path's receiver counters over `durationS` seconds. */
export function pathFeedback(c: { feedbackBytesSent: number; reportBytesSent: number; reportArrivalsRelisted: number } | undefined, durationS: number): PathFeedback {
  const bytes = c?.feedbackBytesSent ?? 0;
  const reportBytes = c?.reportBytesSent ?? 0;
  const bps = (b: number) => (durationS > 0 ? Math.round((b * 8) / durationS) : 0);
  return { bytes, bps: bps(bytes), reportBytes, reportBps: bps(reportBytes), relisted: c?.reportArrivalsRelisted ?? 0 };
}

export interface PerSecond {
  t: number;
  fps: number;
  framesDecoded: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
  targetBitrateBps: number;
  freezeCount: number;
  /** Mean FCD and IFD of the frames completed in this second (ms). */
  fcdMeanMs: number;
  ifdMeanMs: number;
  /**
   * The sender's encoder at the end of this second (getStats() video `outbound-rtp`; src/adapt):
   * encoded size (px), frames encoded over the last second (fps), why the video is
   * degraded ('none' | 'bandwidth' | 'cpu'). Absent when the page reports no encoder.
   */
  encoder?: { width: number; height: number; frameRate: number; degradationReason: string };
  paths: Array<{
    id: number;
    sendRateBps: number;
    rateBps: number;
    goodputBps: number;
    rttMs: number;
    lossPct: number;
    /** Counts in this second (deltas). */
    mediaPackets: number;
    keyframePackets: number;
    spsPackets: number;
    ppsPackets: number;
    fecPackets: number;
    latePackets: number;
    up: boolean;
    enabled: boolean;
    /** Benched (padding only; `stats().paths[].demoted`: by the path hysteresis or on probation after a silence). Absent in reports written before stop 38. */
    demoted?: boolean;
    /** `stats().paths[].stateReason` at the end of the second. */
    stateReason?: string;
  }>;
  /** QoE feedback the receiver sent during this second (Converge §4.2). */
  qoeFeedback: Array<{ atMs: number; pathId: number; alpha: number; fcdMs: number }>;
}

/** The report contract (version 1). */
export interface CallReport {
  version: 1;
  durationS: number;
  codec: string;
  scheduler: string;
  fecPolicy: string;
  scenario: string;
  camera: { width: number; height: number; fps: number };
  frames: { sent: number; decoded: number; dropped: number };
  fps: number;
  freezes: { count: number; totalMs: number };
  latencyMs: { mean: number; p50: number; p95: number; p99: number };
  /**
   * The receiver's own view of the clocks (getStats() `transport` entry,
   * src/feedback/clock-sync.ts): its estimate of the sender's clock offset
   * (ms), the bound on that estimate's error (ms), the clock exchanges it
   * rests on, its RTT (ms), and the latency it reports with that estimate
   * (ms). The two harness pages share one epoch clock, so `latencyMs` above is
   * exact and `offsetMs` should be within `errorBoundMs` of 0.
   */
  receiverClock: { offsetMs: number; errorBoundMs: number; samples: number; rttMs: number; latencyP50Ms: number };
  keyframeRequests: number;
  framesOutOfOrder: number;
  encoderTargetBps: { mean: number; last: number };
  fec: { overheadPct: number; utilizationPct: number; usefulPct: number; packetsSent: number; recovered: number };
  nack: { nacksSent: number; packetsNacked: number; retransmissionsSent: number; retransmissionsReceived: number };
  qoeFeedback: { sent: number; received: number };
  paths: ReportPath[];
  /** What each emulated path's relay carried, per direction (set by the harness; absent for calls without the emulator). */
  relay?: PathTraffic[];
  /** The camera's content: a real clip, a given file, or Chromium's synthetic fake camera (set by the harness). */
  source?: SourceInfo;
  /** Every enabled, not-blackholed path carried >= 1% of the media (tools/harness/path-usage.ts). */
  pathUsage?: PathUsageCheck;
  samePair: number[][];
  perSecond: PerSecond[];
  events: unknown[];
  errors: string[];
  /** Final getStats() entries of both pages (the stats contract, src/call/stats-types.ts). */
  final: { sender?: CallStatsEntry[]; receiver?: CallStatsEntry[] };
}

export interface BuildReportInput {
  durationS: number;
  codec: string;
  scheduler: string;
  fec: string;
  scenarioName: string;
  samples: Array<{ tS: number; sender: PeerSample; receiver: PeerSample }>;
  /** The last sample was taken after the sender stopped and the frames in flight were drained. */
  drained?: boolean;
  senderEvents: unknown[];
  receiverEvents: unknown[];
  errors: string[];
}

const mean = (a: number[]): number => (a.length ? a.reduce((x, y) => x + y, 0) / a.length : 0);
const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;

/** Build the report from per-second samples. */
export function buildReport(input: BuildReportInput): CallReport {
  const { samples } = input;
  const last = samples[samples.length - 1];
  const sv = peerView(last?.sender.stats);
  const rv = peerView(last?.receiver.stats);
  const snd = sv.outVideo;
  const rcv = rv.inVideo;
  const allFrames = samples.flatMap((s) => s.receiver.frames);
  const lat = latencyOf(allFrames.map((f) => f.latencyMs));
  const decodedIds = new Set(allFrames.map((f) => f.frameId));
  const maxId = allFrames.reduce((m, f) => Math.max(m, f.frameId), 0);
  const sent = snd?.framesSent ?? 0;
  // Encoded but never decoded. The harness drains the call before the last sample (the
  // camera stops, the frames in flight arrive or are given up), so every frame sent
  // counts; without a drain, ids past the newest decoded one may still be in flight.
  const dropped = Math.max(0, (input.drained ? sent : maxId) - decodedIds.size);
  const firstDecodeS = samples.findIndex((s) => s.receiver.frames.length > 0);
  const camera = last?.sender.camera ?? { width: 0, height: 0, fps: 0 };
  const views = samples.map((s) => ({ s: peerView(s.sender.stats), r: peerView(s.receiver.stats) }));
  // Mean FCD / IFD of the frames completed in second i (ms): difference of running totals.
  const intervalMean = (i: number, sum: 'totalFcd' | 'totalIfd', count: 'fcdCount' | 'ifdCount'): number => {
    const cur = views[i].r.inVideo;
    const prev = i > 0 ? views[i - 1].r.inVideo : undefined;
    const n = (cur?.[count] ?? 0) - (prev?.[count] ?? 0);
    return n > 0 ? (1000 * ((cur?.[sum] ?? 0) - (prev?.[sum] ?? 0))) / n : 0;
  };
  const perSecond: PerSecond[] = samples.map((s, i) => {
    const lat = s.receiver.frames.map((f) => f.latencyMs);
    const { s: sNow, r: rNow } = views[i];
    const ov = sNow.outVideo;
    const r = rNow.inVideo;
    const late = new Map(rNow.paths.map((p) => [p.pathId, p.latePackets]));
    return {
      t: s.tS,
      fps: s.receiver.frames.length,
      framesDecoded: r?.framesDecoded ?? 0,
      latencyP50Ms: round(percentile(lat, 50)),
      latencyP95Ms: round(percentile(lat, 95)),
      targetBitrateBps: ov?.targetBitrate ?? 0,
      freezeCount: r?.freezeCount ?? 0,
      fcdMeanMs: round(intervalMean(i, 'totalFcd', 'fcdCount'), 2),
      ifdMeanMs: round(intervalMean(i, 'totalIfd', 'ifdCount'), 2),
      encoder: ov ? { width: ov.frameWidth, height: ov.frameHeight, frameRate: round(ov.framesPerSecond, 1), degradationReason: ov.qualityLimitationReason } : undefined,
      // Our send direction exists once the sender page sends (its video outbound-rtp).
      paths: (ov ? sNow.paths : []).map((p) => ({
        id: p.pathId,
        sendRateBps: Math.round(p.sendBitrate),
        rateBps: Math.round(p.targetBitrate ?? 0),
        goodputBps: Math.round(p.goodput ?? 0),
        rttMs: round(ms(p.roundTripTime) ?? 0),
        lossPct: round(p.fractionLost * 100, 2),
        mediaPackets: p.mediaPacketsSent,
        keyframePackets: p.keyFramePacketsSent,
        spsPackets: p.spsPacketsSent,
        ppsPackets: p.ppsPacketsSent,
        fecPackets: p.fecPacketsSent,
        latePackets: late.get(p.pathId) ?? 0,
        up: p.up,
        enabled: p.enabled,
        demoted: p.demoted,
        stateReason: p.stateReason,
      })),
      qoeFeedback: (r?.recentQoeFeedback ?? []).map((f) => ({ atMs: f.timestamp, pathId: f.pathId, alpha: f.alpha, fcdMs: round(f.fcd * 1000, 1) })),
    };
  });
  // Per-second counters become deltas; feedback lists keep only this second's new entries.
  const counters = ['mediaPackets', 'keyframePackets', 'spsPackets', 'ppsPackets', 'fecPackets', 'latePackets'] as const;
  for (let i = perSecond.length - 1; i > 0; i--) {
    for (const p of perSecond[i].paths) {
      const prev = perSecond[i - 1].paths.find((q) => q.id === p.id);
      if (prev) for (const k of counters) p[k] -= prev[k];
    }
    const seen = new Set(perSecond[i - 1].qoeFeedback.map((f) => f.atMs));
    perSecond[i].qoeFeedback = perSecond[i].qoeFeedback.filter((f) => !seen.has(f.atMs));
  }
  const rxPaths = new Map(rv.paths.map((p) => [p.pathId, p]));
  const paths: ReportPath[] = (snd ? sv.paths : []).map((p) => {
    const route = sv.routes.get(p.pathId);
    const rp = rxPaths.get(p.pathId);
    return {
      id: p.pathId,
      packetsSent: p.packetsSent,
      bytesSent: p.bytesSent,
      mediaPacketsSent: p.mediaPacketsSent,
      sharePct: round(p.mediaShare * 100),
      rttMs: round(ms(p.roundTripTime) ?? 0),
      lossPct: round(p.fractionLost * 100, 2),
      rateBps: Math.round(p.targetBitrate ?? 0),
      goodputBps: Math.round(p.goodput ?? 0),
      fecPacketsSent: p.fecPacketsSent,
      retransmissionsSent: p.retransmittedPacketsSent,
      probesSent: p.probePacketsSent,
      localAddress: route ? `${route.local.address}:${route.local.port}` : undefined,
      remoteAddress: route ? `${route.remote.address}:${route.remote.port}` : undefined,
      fecUtilizationPct: round((rp?.fecUtilization ?? 0) * 100),
      latePackets: rp?.latePackets ?? 0,
      feedback: rp ? pathFeedback(rp, input.durationS) : undefined,
      state: p.state,
      connectMs: ms(p.connectTime),
      iceRestarts: p.iceRestarts,
    };
  });
  const targets = perSecond.map((p) => p.targetBitrateBps).filter((x) => x > 0);
  const rt = rv.transport;
  return {
    version: 1,
    durationS: input.durationS,
    codec: input.codec,
    scheduler: input.scheduler,
    fecPolicy: input.fec,
    scenario: input.scenarioName,
    camera,
    frames: { sent, decoded: decodedIds.size, dropped },
    // One definition (src/feedback/qoe-metrics.ts): frames from the first decode to the end; samples are 1 s apart.
    fps: round(meanFps(allFrames.length, firstDecodeS >= 0 ? firstDecodeS * 1000 : undefined, samples.length * 1000)),
    freezes: { count: rcv?.freezeCount ?? 0, totalMs: Math.round((rcv?.totalFreezesDuration ?? 0) * 1000) },
    latencyMs: {
      mean: round(lat.mean ?? 0),
      p50: round(lat.p50 ?? 0),
      p95: round(lat.p95 ?? 0),
      p99: round(lat.p99 ?? 0),
    },
    receiverClock: {
      offsetMs: round((rt?.remoteClockOffset ?? 0) * 1000, 2),
      errorBoundMs: round((rt?.remoteClockOffsetErrorBound ?? 0) * 1000, 2),
      samples: rt?.remoteClockSamples ?? 0,
      rttMs: round((rt?.roundTripTime ?? 0) * 1000),
      latencyP50Ms: round((rcv?.endToEndLatencyP50 ?? 0) * 1000),
    },
    keyframeRequests: rcv?.pliCount ?? 0,
    framesOutOfOrder: last?.receiver.outOfOrder ?? 0,
    encoderTargetBps: { mean: Math.round(mean(targets)), last: snd?.targetBitrate ?? 0 },
    fec: {
      // FEC packets / media packets (the sender engine's fecOverheadPct).
      overheadPct: round(snd && snd.packetsSent > 0 ? (100 * snd.fecPacketsSent) / snd.packetsSent : 0),
      utilizationPct: round((rcv?.fecUtilization ?? 0) * 100),
      usefulPct: round((rcv?.fecUseful ?? 0) * 100),
      packetsSent: snd?.fecPacketsSent ?? 0,
      recovered: rcv?.fecRecoveredPackets ?? 0,
    },
    nack: {
      nacksSent: rcv?.nackCount ?? 0,
      packetsNacked: rcv?.nackedPackets ?? 0,
      retransmissionsSent: snd?.retransmittedPacketsSent ?? 0,
      retransmissionsReceived: rcv?.retransmittedPacketsReceived ?? 0,
    },
    qoeFeedback: { sent: rcv?.qoeFeedbackSent ?? 0, received: snd?.qoeFeedbackReceived ?? 0 },
    paths,
    samePair: sv.transport?.samePairPathIds ?? [],
    perSecond,
    events: [...input.senderEvents.map((e) => ({ peer: 'sender', ...(e as object) })), ...input.receiverEvents.map((e) => ({ peer: 'receiver', ...(e as object) }))],
    errors: input.errors,
    final: { sender: last?.sender.stats, receiver: last?.receiver.stats },
  };
}

/** One-line-per-metric QoE summary for the terminal. */
export function formatSummary(r: CallReport): string {
  const lines = [
    `codec ${r.codec}, scheduler ${r.scheduler}, fec ${r.fecPolicy}, scenario ${r.scenario}, ${r.durationS} s, camera ${r.camera.width}x${r.camera.height}@${r.camera.fps}, source ${r.source ? (r.source.kind === 'synthetic' ? "Chromium's synthetic fake camera" : r.source.file) : 'unknown'}`,
    `frames: sent ${r.frames.sent}, decoded ${r.frames.decoded}, dropped ${r.frames.dropped}; decoded fps ${r.fps}`,
    `freezes: ${r.freezes.count} (${r.freezes.totalMs} ms); keyframe requests ${r.keyframeRequests}`,
    `latency capture->decoded: mean ${r.latencyMs.mean} ms, p50 ${r.latencyMs.p50} ms, p95 ${r.latencyMs.p95} ms`,
    `receiver clock estimate: sender offset ${r.receiverClock.offsetMs} ms (error <= ${r.receiverClock.errorBoundMs} ms, ${r.receiverClock.samples} exchanges), RTT ${r.receiverClock.rttMs} ms, its latency p50 ${r.receiverClock.latencyP50Ms} ms`,
    `encoder target: mean ${(r.encoderTargetBps.mean / 1e6).toFixed(2)} Mbps; FEC overhead ${r.fec.overheadPct}% utilization ${r.fec.utilizationPct}%; NACKed ${r.nack.packetsNacked}`,
    ...r.paths.map(
      (p) =>
        `path ${p.id}: share ${p.sharePct}% of media, ${p.packetsSent} packets, ${(p.bytesSent / 1e6).toFixed(1)} MB, rate ${(p.rateBps / 1e6).toFixed(2)} Mbps, RTT ${p.rttMs} ms, loss ${p.lossPct}%${p.connectMs !== undefined ? `, connected in ${p.connectMs} ms` : ''}${p.iceRestarts ? `, ${p.iceRestarts} restarts` : ''}${p.localAddress ? `, ${p.localAddress} -> ${p.remoteAddress}` : ''}`,
    ),
  ];
  if (r.relay) lines.push('relays (what each emulated path carried):', ...formatPathTraffic(r.relay).map((l) => `  ${l}`));
  if (r.pathUsage && !r.pathUsage.ok) lines.push(...r.pathUsage.problems.map((p) => `UNUSED PATH: ${p}`));
  if (r.samePair.length) lines.push(`warning: paths ${JSON.stringify(r.samePair)} ended on the same candidate pair`);
  if (r.errors.length) lines.push(`errors (${r.errors.length}): ${r.errors.slice(0, 3).join(' | ')}`);
  return lines.join('\n');
}

function uplotAssets(): { js: string; css: string } {
  const require = createRequire(import.meta.url);
  const js = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
  const css = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');
  return { js, css };
}

/** Self-contained HTML report (uPlot inlined): per-path rate and RTT, fps, latency, FCD/IFD over time. */
export function renderReportHtml(r: CallReport): string {
  const { js, css } = uplotAssets();
  const data = JSON.stringify(r).replace(/</g, '\\u003c');
  return `<!doctype html><html><head><meta charset="utf-8"><title>multipath-rtc call report</title>
<style>${css} body{font:13px system-ui,sans-serif;margin:16px} .chart{margin:12px 0} table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:2px 6px}</style>
</head><body><h2>multipath-rtc call report</h2><pre id="summary"></pre><div id="charts"></div>
<script>${js}</script>
<script>
const r = ${data};
document.getElementById('summary').textContent = JSON.stringify({codec:r.codec,scheduler:r.scheduler,fec:r.fecPolicy,scenario:r.scenario,frames:r.frames,fps:r.fps,freezes:r.freezes,latencyMs:r.latencyMs,keyframeRequests:r.keyframeRequests,paths:r.paths.map(p=>({id:p.id,sharePct:p.sharePct,rttMs:p.rttMs,lossPct:p.lossPct}))}, null, 1);
const t = r.perSecond.map(p => p.t);
const ids = r.paths.map(p => p.id);
const colors = ['#1f77b4','#d62728','#2ca02c','#9467bd','#ff7f0e','#8c564b','#e377c2','#7f7f7f'];
function chart(title, series, data, yLabel) {
  const el = document.createElement('div'); el.className = 'chart';
  document.getElementById('charts').appendChild(el);
  new uPlot({ title, width: 900, height: 260, scales: { x: { time: false } },
    axes: [{ label: 'time (s)' }, { label: yLabel }],
    series: [{ label: 't' }, ...series.map((s, i) => ({ label: s, stroke: colors[i % colors.length], width: 1.5 }))] }, [t, ...data], el);
}
const pathSeries = (f) => ids.map(id => r.perSecond.map(p => { const q = p.paths.find(x => x.id === id); return q ? f(q) : null; }));
chart('Per-path send rate and estimate (Mbps)', [...ids.map(i => 'path ' + i + ' sent'), ...ids.map(i => 'path ' + i + ' estimate'), 'encoder target'],
  [...pathSeries(q => q.sendRateBps / 1e6), ...pathSeries(q => q.rateBps / 1e6), r.perSecond.map(p => p.targetBitrateBps / 1e6)], 'Mbps');
chart('Per-path RTT (ms)', ids.map(i => 'path ' + i), pathSeries(q => q.rttMs), 'ms');
chart('Per-path media packets per second', ids.map(i => 'path ' + i), pathSeries(q => q.mediaPackets), 'packets');
chart('Decoded fps and encoded frame rate', ['decoded fps', 'encoded fps'], [r.perSecond.map(p => p.fps), r.perSecond.map(p => p.encoder ? p.encoder.frameRate : null)], 'fps');
chart('Encoded resolution (height, px)', ['height'], [r.perSecond.map(p => p.encoder ? p.encoder.height : null)], 'px');
chart('Latency capture -> decoded (ms)', ['p50', 'p95'], [r.perSecond.map(p => p.latencyP50Ms), r.perSecond.map(p => p.latencyP95Ms)], 'ms');
chart('Per-path late packets per second', ids.map(i => 'path ' + i), pathSeries(q => q.latePackets), 'packets');
chart('Per-path FEC packets per second', ids.map(i => 'path ' + i), pathSeries(q => q.fecPackets), 'packets');
chart('FCD and IFD (mean, ms)', ['FCD', 'IFD'], [r.perSecond.map(p => p.fcdMeanMs), r.perSecond.map(p => p.ifdMeanMs)], 'ms');
</script></body></html>`;
}
