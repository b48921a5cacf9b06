/**
 * Runs the browser benchmark: for each compared configuration, one call
 * between two headless Chromium pages (bench/browser/page) through a fresh set
 * of emulated paths (tools/emulator), sampled every second, summarised with
 * bench/browser/metrics.ts. Node only.
 */
import { closeSync, createReadStream, existsSync, mkdirSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { Plugin } from 'vite';
import { ensureChromium } from '../../tools/harness/chromium.js';
import { prepareClip } from '../../tools/harness/clip.js';
import { launchChromium, startPageServer, startPathEnv } from '../../tools/harness/setup.js';
import type { Scenario } from '../../sim/net/scenario.js';
import type { CompareEntry } from '../compare.js';
import { summarizeRun } from './metrics.js';
import { linkOutages } from './outages.js';
import type { Span } from './outages.js';
import { linkConfigFromSpec } from '../../sim/net/scenario.js';
import { checkPathUsage, pathTraffic } from '../../tools/harness/path-usage.js';
import type { BenchAudio, BenchResult, DisplayEntry, DrawEntry, QualityEntry } from './metrics.js';
import { renderReportHtml, renderSummaryMd } from './render.js';
import type { BenchResults } from './render.js';
import { SYNTHETIC_PERIOD } from './synthetic.js';
import { parseY4mHeader, y4mFrameCount } from './y4m.js';

const VIDEO_ROUTE = '/__bench/video.y4m';

export interface BenchOptions {
  scenario: Scenario;
  configs: CompareEntry[];
  durationS: number;
  /** Y4M file; undefined = the default clip (tools/harness/clip.ts), an error when it cannot be made. */
  video?: string;
  /** Use the synthetic pattern even if a clip could be made. */
  synthetic?: boolean;
  width: number;
  height: number;
  fps: number;
  codec: string;
  maxBitrateBps: number;
  track: 'canvas' | 'generator';
  sampleEvery: number;
  ssim: boolean;
  /** Also measure the sender's own source track against the source (the PSNR ceiling of the capture path). */
  sourceCheck: boolean;
  /** Ours also sends audio (the fake microphone) and reports `audio` (default true). */
  audio?: boolean;
  /** Chromium's WebRTC also sends that microphone (default false: video only, as before). */
  nativeAudio?: boolean;
  seed: number;
  /** Ours: MultipathCallOptions.datachannelWorker (arrival stamps off the main thread) on the media receiver's page, or on both pages. */
  datachannelWorker?: 'receiver' | 'both';
  /** Ours: MultipathCallOptions.rtpCarrier on both pages (each path's media rides an RTP carrier while its datachannel is stalled); a string: with that `attach`; false: off; undefined: the library's default (on, attach 'stall'). */
  rtpCarrier?: boolean | 'connect' | 'stall';
  /** Ours: MultipathCallOptions.pacer (the sender's pacer: send burst, pacing factor). */
  pacer?: { burstMs?: number; pacingFactor?: number };
  /** Ours: MultipathCallOptions.departureTimes on both pages (send times at the datachannel departure); undefined: the library's default. Recorded in `notes` and each of ours' `extras.departureTimes`. */
  departureTimes?: boolean;
  out: string;
  log: (line: string) => void;
}

/** Vite plugin serving one file at VIDEO_ROUTE with HTTP range support. */
function videoRoute(file: string | undefined): Plugin {
  return {
    name: 'bench-video',
    configureServer(server) {
      server.middlewares.use(VIDEO_ROUTE, (req: IncomingMessage, res: ServerResponse) => {
        if (!file) {
          res.statusCode = 404;
          res.end('no video');
          return;
        }
        const size = statSync(file).size;
        const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
        res.setHeader('Accept-Ranges', 'bytes');
        res.setHeader('Content-Type', 'application/octet-stream');
        res.setHeader('Cache-Control', 'no-store');
        if (!m) {
          res.setHeader('Content-Length', String(size));
          if (req.method === 'HEAD') return void res.end();
          createReadStream(file).pipe(res);
          return;
        }
        const start = Number(m[1]);
        const end = Math.min(size - 1, m[2] ? Number(m[2]) : size - 1);
        if (start >= size || end < start) {
          res.statusCode = 416;
          res.setHeader('Content-Range', `bytes */${size}`);
          return void res.end();
        }
        res.statusCode = 206;
        res.setHeader('Content-Range', `bytes ${start}-${end}/${size}`);
        res.setHeader('Content-Length', String(end - start + 1));
        if (req.method === 'HEAD') return void res.end();
        createReadStream(file, { start, end }).pipe(res);
      });
    },
  };
}

interface PageSample {
  tMs: number;
  counters: { framesSent: number; framesDecoded: number; keyframeRequests: number; bytesReceived: number };
  stats: unknown;
  draws: DrawEntry[];
  displays: DisplayEntry[];
  quality: QualityEntry[];
  source?: { drawn: number; starved: number };
  sink?: { frames: number; unreadable: number; qualitySkipped: number; qualityErrors: number; formats: Record<string, number> };
  check?: { quality: QualityEntry[]; displays: number; counters: unknown };
}

async function sample(page: Page): Promise<PageSample> {
  return page.evaluate(() => (window as unknown as { __bench: { sample(): Promise<unknown> } }).__bench.sample()) as Promise<PageSample>;
}

async function waitReady(page: Page, timeoutMs: number): Promise<void> {
  await page.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true, undefined, { timeout: timeoutMs });
}

/** Digest of native getStats for results.json (last values, plus a few derived means). */
function nativeExtras(snd: PageSample | undefined, rcv: PageSample | undefined): Record<string, unknown> {
  const s = (snd?.stats ?? {}) as { outbound?: Record<string, number>; remoteInbound?: Record<string, number>; candidatePair?: Record<string, number>; codec?: string };
  const r = (rcv?.stats ?? {}) as { inbound?: Record<string, number>; inboundAudio?: Record<string, number>; codec?: string };
  const inb = r.inbound ?? {};
  const ia = r.inboundAudio;
  return {
    codec: r.codec ?? s.codec,
    inbound: inb,
    outbound: s.outbound ?? {},
    remoteInbound: s.remoteInbound ?? {},
    candidatePair: s.candidatePair ?? {},
    jitterBufferDelayMeanMs: inb.jitterBufferEmittedCount ? Math.round((inb.jitterBufferDelay / inb.jitterBufferEmittedCount) * 10000) / 10 : null,
    getStatsFreezes: { count: inb.freezeCount ?? 0, totalMs: Math.round((inb.totalFreezesDuration ?? 0) * 1000) },
    // With --native-audio: the receiver's audio concealment (webrtc-stats concealedSamples / totalSamplesReceived, %).
    audio: ia
      ? {
          packetsReceived: ia.packetsReceived ?? 0,
          concealedPct: ia.totalSamplesReceived ? Math.round((100 * (ia.concealedSamples ?? 0) * 1000) / ia.totalSamplesReceived) / 1000 : null,
          jitterBufferDelayMeanMs: ia.jitterBufferEmittedCount ? Math.round((ia.jitterBufferDelay / ia.jitterBufferEmittedCount) * 10000) / 10 : null,
        }
      : null,
  };
}

async function runOne(browser: Browser, base: string, cfg: CompareEntry, o: BenchOptions, src: { videoUrl?: string }): Promise<BenchResult> {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const pageErrors: string[] = [];
  const loadStart = loadavg()[0];
  try {
    const env = await startPathEnv(o.scenario, o.seed);
    cleanups.push(() => env.close());
    const { emulator } = env;
    const sig = { url: env.signallingUrl };
    const room = `bench-${process.pid}-${Date.now()}`;
    const url = (role: 'sender' | 'receiver') => {
      const q = new URLSearchParams({
        role,
        room,
        sig: sig.url,
        codec: o.codec,
        fps: String(o.fps),
        width: String(o.width),
        height: String(o.height),
        track: o.track,
        sampleEvery: String(o.sampleEvery),
        ssim: o.ssim ? '1' : '0',
      });
      if (o.maxBitrateBps > 0) q.set('maxBitrate', String(o.maxBitrateBps));
      if (o.sourceCheck && role === 'sender') q.set('check', '1');
      if (src.videoUrl) q.set('video', src.videoUrl);
      q.set('audio', o.audio === false ? '0' : '1');
      if (cfg.kind === 'native') {
        q.set('mode', 'native');
        if (o.nativeAudio) q.set('nativeAudio', '1');
        q.set('path', String(cfg.path));
      } else {
        q.set('mode', 'ours');
        q.set('paths', String(o.scenario.paths.length));
        q.set('scheduler', cfg.scheduler);
        q.set('fec', cfg.fec ?? 'path'); // main.ts fills it from --fec
        if (cfg.singlePath !== undefined) q.set('singlePath', String(cfg.singlePath));
        if (cfg.estimator !== undefined) q.set('estimator', cfg.estimator);
        if (o.datachannelWorker === 'both' || (o.datachannelWorker === 'receiver' && role === 'receiver')) q.set('dcWorker', '1');
        // Unset: the library's default (the carrier on, attach 'stall').
        if (o.rtpCarrier !== undefined) q.set('rtpCarrier', o.rtpCarrier ? (o.rtpCarrier === true ? '1' : o.rtpCarrier) : '0');
        if (o.departureTimes !== undefined) q.set('departureTimes', o.departureTimes ? '1' : '0');
        if (o.pacer?.burstMs !== undefined) q.set('pacerBurstMs', String(o.pacer.burstMs));
        if (o.pacer?.pacingFactor !== undefined) q.set('pacingFactor', String(o.pacer.pacingFactor));
      }
      return `${base}?${q}`;
    };
    const ctxR = await browser.newContext();
    cleanups.push(() => ctxR.close());
    const ctxS = await browser.newContext();
    cleanups.push(() => ctxS.close());
    const receiver = await ctxR.newPage();
    const sender = await ctxS.newPage();
    for (const [name, pg] of [
      ['receiver', receiver],
      ['sender', sender],
    ] as const) {
      pg.on('pageerror', (e) => pageErrors.length < 100 && pageErrors.push(`${name}: ${e.message}`));
      pg.on('console', (m) => {
        if (m.type() === 'error' && pageErrors.length < 100) pageErrors.push(`${name} console: ${m.text()}`);
      });
    }
    await receiver.goto(url('receiver'));
    await sender.goto(url('sender'));
    await Promise.all([waitReady(receiver, 30_000), waitReady(sender, 30_000)]);
    const draws: DrawEntry[] = [];
    const displays: DisplayEntry[] = [];
    const quality: QualityEntry[] = [];
    const bytes: Array<{ t: number; bytes: number }> = [];
    const checkQ: QualityEntry[] = [];
    const first = await Promise.all([sample(sender), sample(receiver)]);
    const startMs = first[1].tMs;
    // Scenario time 0 is the emulator's epoch (node's performance clock); the pages stamp host epoch ms.
    const scenarioAtStartMs = startMs - (performance.timeOrigin + emulator.epochMs);
    draws.push(...first[0].draws);
    let lastS: PageSample | undefined;
    let lastR: PageSample | undefined;
    const timeline: TimelinePoint[] = [];
    const t0 = Date.now();
    for (let s = 1; s <= o.durationS; s++) {
      const wait = t0 + s * 1000 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const [snd, rcv] = await Promise.all([sample(sender), sample(receiver)]);
      draws.push(...snd.draws);
      if (snd.check) checkQ.push(...snd.check.quality);
      displays.push(...rcv.displays);
      quality.push(...rcv.quality);
      bytes.push({ t: s, bytes: rcv.counters.bytesReceived });
      lastS = snd;
      lastR = rcv;
      timeline.push(timelinePoint(s, cfg.kind, snd, rcv));
      if (s % 5 === 0 || s === o.durationS) {
        const shown = displays.filter((d) => d.tMs >= startMs + (s - 1) * 1000).length;
        o.log(`  ${cfg.name} t=${s}s: ${shown} frames displayed in the last second, ${quality.length} PSNR samples`);
      }
    }
    // The carrier on (the default, or a carrier flag): every path of ours must have loaded its stall fallback (else the option did nothing); say how much rode the carrier.
    if (o.rtpCarrier !== false && cfg.kind !== 'native') {
      const ps =
        (
          lastS?.stats as {
            sender?: {
              paths?: Array<{
                id: number;
                rtpCarrier?: { carrierDatagrams: number; carrierBytes: number; datachannelDatagrams: number; toCarrier: number; carrierRefused: number; ceilingRefused: number };
              }>;
            };
          } | null
        )?.sender?.paths ?? [];
      if (ps.length === 0 || ps.some((p) => !p.rtpCarrier))
        pageErrors.push(
          `rtp carrier: path(s) ${
            ps
              .filter((p) => !p.rtpCarrier)
              .map((p) => p.id)
              .join(', ') || 'all'
          } without a stall fallback: the option was not applied`,
        );
      for (const p of ps) if (p.rtpCarrier) o.log(`  ${cfg.name} path ${p.id} RTP carrier: ${JSON.stringify(p.rtpCarrier)}`);
    }
    // Quality work still queued for frames shown before the end.
    await new Promise((r) => setTimeout(r, 300));
    const tail = await sample(receiver);
    quality.push(...tail.quality);
    for (const [nm, pg] of [
      ['sender', sender],
      ['receiver', receiver],
    ] as const) {
      const dcw = await pg.evaluate(() => (window as unknown as { __dcw?: unknown }).__dcw).catch(() => undefined);
      if (dcw) o.log(`  ${cfg.name} ${nm} datachannel worker: ${JSON.stringify(dcw)}`);
    }
    const pageErrs = await Promise.all([sender, receiver].map((p) => p.evaluate(() => (window as unknown as { __bench: { errors(): string[] } }).__bench.errors())));
    await Promise.all([sender, receiver].map((p) => p.evaluate(() => (window as unknown as { __bench: { close(): void } }).__bench.close()).catch(() => undefined)));
    const emuStats = emulator.stats();
    const relay = pathTraffic(emuStats);
    const enabled = cfg.kind === 'native' ? [cfg.path] : cfg.scheduler === 'single' ? [cfg.singlePath ?? 0] : o.scenario.paths.map((_, i) => i);
    const pathUsage = checkPathUsage(relay, o.scenario, enabled, o.durationS);
    const emu = emuStats.map((p) => ({
      pathId: p.pathId,
      name: p.name,
      up: {
        delivered: p.up.delivered,
        deliveredBytes: p.up.deliveredBytes,
        dropped: p.up.dropped,
        queueDelayMeanMs: Math.round(p.up.queueDelay.meanMs * 10) / 10,
        queueDelayMaxMs: Math.round(p.up.queueDelay.maxMs),
      },
      downDeliveredBytes: p.down.deliveredBytes,
    }));
    const extras: Record<string, unknown> =
      cfg.kind === 'native'
        ? { ...nativeExtras(lastS, lastR), path: cfg.path }
        : {
            scheduler: cfg.scheduler,
            estimator: cfg.estimator ?? 'gcc',
            fec: cfg.fec ?? 'path',
            singlePath: cfg.singlePath,
            sender: (lastS?.stats as { sender?: unknown })?.sender,
            encoder: (lastS?.stats as { encoder?: unknown })?.encoder,
            receiver: (lastR?.stats as { receiver?: unknown })?.receiver,
            // The receiver's WebCodecs decoder: decoded frames and decoder errors (a delta frame fed without its reference is one).
            decoder: (lastR?.stats as { decoder?: unknown })?.decoder,
            // Path lifecycle from the sender page's getStats() `path` entries (state, connect time, restarts).
            paths: (lastS?.stats as { paths?: unknown })?.paths,
            // Audio digests: receiver jitter buffer + output, sender path use + encoder.
            audio: { receiver: (lastR?.stats as { audio?: unknown })?.audio, sender: (lastS?.stats as { audio?: unknown })?.audio },
          };
    extras.emulator = emu;
    extras.timeline = timeline;
    extras.scenarioAtStartMs = Math.round(scenarioAtStartMs);
    if (cfg.kind !== 'native') extras.departureTimes = o.departureTimes ?? 'default';
    // This machine's 1-minute load average at start and end: other jobs skew real-time results (render.ts flags an overloaded run).
    extras.loadAvg1m = { start: Math.round(loadStart * 100) / 100, end: Math.round(loadavg()[0] * 100) / 100, cores: availableParallelism() };
    extras.source = lastS?.source;
    extras.sink = lastR?.sink;
    if (o.sourceCheck) {
      const ps = checkQ.map((x) => x.psnr).filter(Number.isFinite);
      const ss = checkQ.map((x) => x.ssim ?? NaN).filter(Number.isFinite);
      extras.sourceCheck = {
        samples: ps.length,
        psnrMean: ps.length ? Math.round((ps.reduce((a, b) => a + b, 0) / ps.length) * 100) / 100 : null,
        psnrMin: ps.length ? Math.round(Math.min(...ps) * 100) / 100 : null,
        ssimMean: ss.length ? Math.round((ss.reduce((a, b) => a + b, 0) / ss.length) * 10000) / 10000 : null,
      };
    }
    const outages = enabledOutages(o.scenario, enabled, scenarioAtStartMs + o.durationS * 1000 + 5000);
    const audio = cfg.kind === 'multipath' && o.audio !== false ? benchAudio(lastS, lastR) : null;
    const audioErrors = audio ? audioProblems(audio) : [];
    const result = summarizeRun({
      name: cfg.name,
      kind: cfg.kind,
      codec: cfg.kind === 'native' ? String((extras.codec as string | undefined) ?? o.codec) : o.codec,
      durationS: o.durationS,
      startMs,
      draws,
      displays,
      quality,
      bytesReceived: bytes,
      framesSent: lastS?.counters.framesSent ?? 0,
      framesDecoded: lastR?.counters.framesDecoded ?? 0,
      keyframeRequests: lastR?.counters.keyframeRequests ?? 0,
      scenarioAtStartMs,
      outages,
      extras,
      errors: [...audioErrors, ...pageErrs[0].map((e) => `sender: ${e}`), ...pageErrs[1].map((e) => `receiver: ${e}`), ...pageErrors].slice(0, 100),
    });
    return { ...result, audio, relay, pathUsage };
  } finally {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch {
        /* keep cleaning */
      }
    }
  }
}

/**
 * One second of the sender's and receiver's own view (results.json
 * `extras.timeline`): what the encoder was told and did, where the media
 * waited, what the receiver asked for. Counters are cumulative.
 */
export interface TimelinePoint {
  t: number;
  /** Encoder target (bps). */
  targetBps: number | null;
  /** Encoded frame size and frames / key frames encoded so far. */
  size: string;
  framesEncoded: number | null;
  keyFrames: number | null;
  /** Smoothed RTT of the path carrying the most media (ms). */
  rttMs: number | null;
  /** Ours: bytes waiting in the datachannels (sum over paths). */
  bufferedBytes: number | null;
  /** Key frame requests the receiver sent so far. */
  keyframeRequests: number;
  /** Ours: camera frames not encoded so far, by cause (src/call/stats-types.ts VideoSourceStats.framesNotEncoded). */
  notEncoded?: Record<string, number>;
  /** Ours: each path's congestion controller internals (SenderEngine.estimatorStats; diagnostic). */
  estimators?: unknown[];
  /** Bitrate the encoder is configured with (bps): ours, the WebCodecs encoder's; Chromium's, outbound-rtp targetBitrate. */
  encoderBps?: number | null;
  /** Bandwidth estimate (bps): ours, the sum of the congestion controller rates of the paths that carried media; Chromium's, candidate-pair availableOutgoingBitrate. */
  estimateBps?: number | null;
  /** Media bytes sent so far (cumulative; outbound-rtp bytesSent). */
  bytesSent?: number | null;
  /** Encoder output frame rate (fps, last second). */
  fps?: number | null;
  /** W3C qualityLimitationReason ('none' | 'bandwidth' | 'cpu' | 'other'). */
  limitation?: string;
  /** Chromium's: outbound-rtp qpSum so far (cumulative; H.264 QP 0-51), for the mean QP per second. */
  qpSum?: number | null;
  /** Ours with the carrier on (the default; not with --no-rtp-carrier): each path's stall fallback (src/transport/stall-fallback.ts StallFallbackStats: pipe, ceiling, pacing rate, counters, the carrier's sender stats). */
  carrier?: unknown[];
}

function timelinePoint(t: number, kind: CompareEntry['kind'], snd: PageSample, rcv: PageSample): TimelinePoint {
  const n = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? Math.round(x) : null);
  if (kind === 'native') {
    const s = (snd.stats ?? {}) as { outbound?: Record<string, number>; remoteInbound?: Record<string, number>; candidatePair?: Record<string, number> };
    const o = s.outbound ?? {};
    return {
      encoderBps: n(o.targetBitrate),
      estimateBps: n(s.candidatePair?.availableOutgoingBitrate),
      bytesSent: n(o.bytesSent),
      fps: n(o.framesPerSecond),
      limitation: (o as Record<string, unknown>).qualityLimitationReason as string | undefined,
      qpSum: n(o.qpSum),
      t,
      targetBps: n(o.targetBitrate),
      size: `${o.frameWidth ?? 0}x${o.frameHeight ?? 0}`,
      framesEncoded: n(o.framesEncoded),
      keyFrames: n(o.keyFramesEncoded),
      rttMs: s.remoteInbound?.roundTripTime !== undefined ? n(s.remoteInbound.roundTripTime * 1000) : null,
      bufferedBytes: null,
      keyframeRequests: rcv.counters.keyframeRequests,
    };
  }
  type Digest = {
    sender?: {
      targetBitrateBps?: number;
      bytesSent?: number;
      paths?: Array<{ id?: number; sharePct: number; rttMs: number; bufferedBytes?: number; rateBps?: number; rtpCarrier?: Record<string, unknown> }>;
    };
    encoder?: {
      width?: number;
      height?: number;
      framesEncoded?: number;
      keyFrames?: number;
      bitrateBps?: number;
      frameRate?: number;
      degradationReason?: string;
      framesNotEncoded?: Record<string, number>;
    };
  };
  const d = (snd.stats ?? {}) as Digest;
  const paths = d.sender?.paths ?? [];
  const main = [...paths].sort((a, b) => b.sharePct - a.sharePct)[0];
  return {
    t,
    targetBps: n(d.sender?.targetBitrateBps),
    size: `${d.encoder?.width ?? 0}x${d.encoder?.height ?? 0}`,
    framesEncoded: n(d.encoder?.framesEncoded),
    keyFrames: n(d.encoder?.keyFrames),
    rttMs: n(main?.rttMs),
    bufferedBytes: paths.reduce((a, p) => a + (p.bufferedBytes ?? 0), 0),
    keyframeRequests: rcv.counters.keyframeRequests,
    encoderBps: n(d.encoder?.bitrateBps),
    // Only the paths that carried media (a single-path call's idle path keeps its own estimate).
    estimateBps: paths.length ? n(paths.filter((p) => p.sharePct > 0).reduce((a, p) => a + (p.rateBps ?? 0), 0)) : null,
    bytesSent: n(d.sender?.bytesSent),
    fps: n(d.encoder?.frameRate),
    limitation: d.encoder?.degradationReason,
    ...(d.encoder?.framesNotEncoded ? { notEncoded: d.encoder.framesNotEncoded } : {}),
    ...((snd.stats as { estimators?: unknown[] } | null)?.estimators ? { estimators: (snd.stats as { estimators: unknown[] }).estimators } : {}),
    ...(paths.some((p) => p.rtpCarrier) ? { carrier: paths.map((p) => p.rtpCarrier && { id: p.id, rateBps: p.rateBps, ...p.rtpCarrier }) } : {}),
  };
}

/** Outages of the enabled paths' uplinks and downlinks over scenario time [0, toMs) (bench/browser/outages.ts). */
function enabledOutages(scenario: Scenario, enabled: readonly number[], toMs: number): { uplink: Span[]; downlink: Span[] } {
  const uplink: Span[] = [];
  const downlink: Span[] = [];
  for (const i of enabled) {
    const p = scenario.paths[i];
    if (!p) continue;
    uplink.push(...linkOutages(linkConfigFromSpec(p.up), 0, toMs));
    downlink.push(...linkOutages(linkConfigFromSpec(p.down), 0, toMs));
  }
  return { uplink, downlink };
}

/** The last audio statistics of both pages (page/main.ts `stats.audio`) as results.json `audio`. */
function benchAudio(snd: PageSample | undefined, rcv: PageSample | undefined): BenchAudio {
  type A = { receiver?: Record<string, number> & { mouthToEarMs?: { p50: number } }; sender?: { framesSent: number }; output?: { maxRms: number } };
  const rs = (rcv?.stats as { audio?: A } | undefined)?.audio;
  const ss = (snd?.stats as { audio?: A } | undefined)?.audio;
  const r = rs?.receiver ?? {};
  const r2 = (x: number | undefined, d = 1) => Math.round((x ?? 0) * 10 ** d) / 10 ** d;
  return {
    concealedPct: r2(r.concealedPct, 3),
    mouthToEarP95Ms: r2(r.mouthToEarP95Ms),
    mouthToEarP50Ms: r2(r.mouthToEarMs?.p50),
    framesSent: ss?.sender?.framesSent ?? 0,
    packetsReceived: r.packetsReceived ?? 0,
    packetsLost: r.packetsLost ?? 0,
    duplicates: r.duplicates ?? 0,
    latePackets: r.latePackets ?? 0,
    avOffsetMs: r2(r.avOffsetMs),
    maxRms: r2(rs?.output?.maxRms, 5),
  };
}

/** The instrument's own checks: audio was sent, received and is not silence (errors in results.json). */
export function audioProblems(a: BenchAudio): string[] {
  const out: string[] = [];
  if (a.framesSent === 0) out.push('audio: the sender encoded no audio frames');
  if (a.packetsReceived === 0) out.push('audio: the receiver got no audio packets');
  else if (!(a.maxRms >= AUDIO_RMS_FLOOR)) out.push(`audio: decoded audio is silence (max 1 s RMS ${a.maxRms} < ${AUDIO_RMS_FLOOR})`);
  return out;
}

/** Decoded audio quieter than this (1-second RMS, full scale 1) is silence: -60 dBFS. */
export const AUDIO_RMS_FLOOR = 0.001;

/** Run every configuration in turn; writes results.json, summary.md and report.html to `o.out`. */
export async function runBench(o: BenchOptions): Promise<{ results: BenchResults; outDir: string }> {
  const notes: string[] = [];
  if (o.departureTimes !== undefined)
    notes.push(
      `ours: MultipathCallOptions.departureTimes ${o.departureTimes} (send times at the datachannel departure); departures applied per path: extras.timeline[].estimators[].departuresApplied`,
    );
  let videoFile: string | undefined = o.video;
  if (!videoFile && !o.synthetic) {
    // Real content by default; never a silent switch to the synthetic pattern (--synthetic asks for it).
    const clip = prepareClip({ width: o.width, height: o.height, fps: o.fps, log: o.log });
    if (!clip.file) throw new Error(`no real video for the benchmark: ${clip.reason}. Install it, or pass --synthetic for the built-in pattern.`);
    videoFile = clip.file;
  }
  let source: BenchResults['source'] = { kind: 'synthetic', width: o.width, height: o.height, fps: o.fps, frames: SYNTHETIC_PERIOD, track: o.track };
  if (videoFile) {
    if (!existsSync(videoFile)) throw new Error(`--video ${videoFile}: no such file`);
    const head = new Uint8Array(4096);
    const fd = openSync(videoFile, 'r');
    const n = readSync(fd, head, 0, head.length, 0);
    closeSync(fd);
    const h = parseY4mHeader(head.subarray(0, n));
    source = { kind: 'y4m', file: resolve(videoFile), width: h.width, height: h.height, fps: o.fps, frames: y4mFrameCount(h, statSync(videoFile).size), track: o.track };
  }
  ensureChromium(); // fail before starting anything when Chromium is missing
  const pages = await startPageServer({ plugins: [videoRoute(videoFile)] });
  const results: BenchResult[] = [];
  let browser: Browser | undefined;
  try {
    const base = pages.url('bench/browser/page/index.html');
    browser = await launchChromium();
    for (const cfg of o.configs) {
      o.log(`running ${cfg.name} for ${o.durationS} s (scenario ${o.scenario.name ?? 'default'})`);
      const r = await runOne(browser, base, cfg, o, { videoUrl: videoFile ? VIDEO_ROUTE : undefined });
      for (const p of r.pathUsage?.problems ?? []) o.log(`  UNUSED PATH in ${cfg.name}: ${p}`);
      const au = r.audio ? `; audio: concealed ${r.audio.concealedPct}%, mouth-to-ear p95 ${r.audio.mouthToEarP95Ms} ms` : '';
      o.log(`  ${cfg.name}: fps ${r.fps}, freezes ${r.freezes.count}, latency p50 ${r.latencyMs.p50} ms, PSNR ${r.psnr.mean} dB${au}${r.errors.length ? `, ${r.errors.length} errors` : ''}`);
      results.push(r);
    }
  } finally {
    await browser?.close().catch(() => undefined);
    await pages.close();
  }
  const out: BenchResults = {
    version: 1,
    scenario: o.scenario.name ?? 'default',
    source,
    codec: o.codec,
    durationS: o.durationS,
    quality: { sampleEvery: o.sampleEvery, ssim: o.ssim },
    createdAt: new Date().toISOString(),
    notes,
    results,
  };
  const outDir = resolve(o.out);
  mkdirSync(outDir, { recursive: true });
  const md = renderSummaryMd(out);
  writeFileSync(join(outDir, 'results.json'), JSON.stringify(out, null, 2));
  writeFileSync(join(outDir, 'summary.md'), md);
  writeFileSync(join(outDir, 'report.html'), renderReportHtml(out, md));
  return { results: out, outDir };
}
