/**
 * Runs one real two-browser multipath call on this machine: the signalling
 * server, one UDP relay per emulated path (tools/emulator), a Vite server for
 * the peer page, and two headless Chromium pages (sender with the fake camera
 * or a Y4M file, receiver). Samples both pages every second and builds the
 * report (tools/harness/report.ts). Used by `npm run call` and the e2e tests.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_SCENARIO, loadScenario } from '../../sim/net/scenario.js';
import type { Scenario } from '../../sim/net/scenario.js';
import { ensureChromium } from './chromium.js';
import { startCoturn } from './coturn.js';
import { launchChromium, startPageServer, startPathEnv } from './setup.js';
import { buildReport, renderReportHtml } from './report.js';
import { checkPathUsage, pathTraffic } from './path-usage.js';
import type { SourceInfo } from './clip.js';
import type { CallReport, PeerSample } from './report.js';
import { peerView } from './stats-view.js';
import type { RelaySelectionOption } from '../../src/call/relay-selection-config.js';
import type { MultipathCallOptions } from '../../src/call/types.js';
import type { RelayCounters } from '../emulator/relay.js';

export { REPO_ROOT } from './paths.js';

export interface CallRunOptions {
  /** Scenario file (JSON), a parsed scenario, or undefined for the built-in default. */
  scenario?: string | Scenario;
  durationS?: number;
  codec?: 'h264' | 'vp8' | 'vp9' | 'av1';
  scheduler?: string;
  singlePath?: number;
  fec?: string;
  /** Largest datagram the sender makes (bytes; MultipathCallOptions.mtuBytes). */
  mtuBytes?: number;
  /** Upper bound of the receiver's playout delay (ms; 0 = decode at once; MultipathCallOptions.playout). */
  playoutMaxMs?: number;
  /** Path connect timeout before a restart (ms; MultipathCallOptions.connectTimeoutMs). */
  connectTimeoutMs?: number;
  /** Force a key frame at least this often (ms). */
  keyframeIntervalMs?: number;
  /** Sender acts on QoE feedback (default true). */
  qoeFeedback?: boolean;
  /** MultipathCallOptions.faultHandling on both pages (e.g. `{ pathHysteresis: false }`); default the library's. */
  faultHandling?: MultipathCallOptions['faultHandling'];
  /** Y4M file for the fake camera (else Chromium's synthetic camera). */
  video?: string;
  /** What `video` is, recorded in the report (tools/harness/clip.ts `resolveSource`). */
  source?: SourceInfo;
  width?: number;
  height?: number;
  fps?: number;
  maxBitrateBps?: number;
  seed?: number;
  /** Write report.json and report.html here. */
  out?: string;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /**
   * `Content-Security-Policy` header the peer pages are served with (e.g.
   * `script-src 'self'`; default none). A violation shows in the report's
   * `errors` (Chromium logs it as a console error).
   */
  contentSecurityPolicy?: string;
  /**
   * Overlay (issue 16): the scenario's paths become the links in front of
   * as many coturn relays on 127.0.0.1 (tools/harness/coturn.ts): relay k
   * listens behind emulated link k (its `up` = offerer -> relay, the
   * receiver page being the offerer of every path), and both pages get the
   * relays as MultipathCallOptions.relays. The call has `callPaths` paths;
   * path i starts on relay i. The offerer's route is then receiver -> link k
   * -> TURN k -> sender: media (sender -> receiver) crosses link k's `down`
   * direction. Side A of each relay link is a NAT (tools/emulator/relay.ts
   * natSideA): every client socket behind it has its own address at coturn.
   */
  overlay?: {
    callPaths: number;
    /** At `atS` into the call, move path `pathId` to relay `relay` (MultipathCall.switchRelay on both pages). */
    relaySwitch?: RelaySwitchPlan;
    /** More switches (after `relaySwitch`, if given), each at its own second. */
    relaySwitches?: RelaySwitchPlan[];
    /** MultipathCallOptions.relayHandover on both pages (default: the library's, 'none'). */
    relayHandover?: 'hold' | 'none';
    /** MultipathCallOptions.relaySelection on both pages (the receiver page offers every path and so decides). */
    relaySelection?: RelaySelectionOption;
    /**
     * A planned switch waits until every path of the call is connected on both pages (checked each second;
     * at 4 s before the end it happens whatever the paths do): a path that connects late (one CI run: path 1 after 9 s, on a loaded
     * machine) is then not switched, or left alone, before it ever carried anything. The switch's `atS` in the
     * result is the second it was made. Default false: at `atS` whatever the paths do.
     */
    switchWhenPathsUp?: boolean;
  };
}

/** One second of an overlay call: each path's relay on the receiver page, the emulator's clock, the selector's view (relaySelection). */
export interface RelayTimelineEntry {
  tS: number;
  /** Seconds since the emulator started (scenario schedules run on this clock). */
  linkS: number;
  relays: number[];
  /** Per path, per relay it may use: Eq. 13 index, smoothed reward (1000 / RTT ms), samples (MultipathCall.relaySelectionState). */
  selector: Array<Array<{ relay: number; index: number; reward: number; samples: number }>>;
}

/** One planned relay switch of the harness. */
export interface RelaySwitchPlan {
  atS: number;
  pathId: number;
  relay: number;
}

/** Half-width of the windows around a switch in which frame gaps are measured (ms). */
export const SWITCH_WINDOW_MS = 3000;

/** What one relay switch did to the received video (run-call `overlay.switches`). */
export interface RelaySwitchResult extends RelaySwitchPlan {
  /** Sessions that started the switch per page (the offerer drives it). */
  receiver: number;
  sender: number;
  /** Longest gap between decoded frames ending within SWITCH_WINDOW_MS after the switch call (ms). */
  gapMs: number;
  /** When that gap ended, ms after the switch call. */
  gapEndMs: number;
  /** The same over the SWITCH_WINDOW_MS before it: the machine's own jitter, the control. */
  controlGapMs: number;
  /** CallEvent.RouteSwitch outcome on each page: 'switched' / 'timed-out' after elapsedMs, whether the path was held. */
  routeSender?: { phase: string; elapsedMs: number; held: boolean };
  routeReceiver?: { phase: string; elapsedMs: number; held: boolean };
}

/**
 * Longest gap (ms) between consecutive decode times `at` (sorted) whose later
 * frame falls in [fromMs, toMs), and when it ended (`endMs`, same clock; NaN when none).
 */
export function longestGapEndingIn(at: readonly number[], fromMs: number, toMs: number): { gapMs: number; endMs: number } {
  let m = 0;
  let end = Number.NaN;
  for (let i = 1; i < at.length; i++) {
    if (at[i] >= fromMs && at[i] < toMs && at[i] - at[i - 1] > m) {
      m = at[i] - at[i - 1];
      end = at[i];
    }
  }
  return { gapMs: Math.round(m), endMs: end };
}

/** A path's selected local candidate as the page reports it (tools/page/main.ts `pairs`). */
export interface RelayPair {
  id: number;
  type?: string;
  local?: string;
  iceRestarts: number;
}

const readPairs = (pg: Page): Promise<RelayPair[]> => pg.evaluate(() => (window as unknown as { __peer: { pairs(): RelayPair[] } }).__peer.pairs());

export interface CallRunResult {
  report: CallReport;
  outDir?: string;
  /** With `turnRelays`: the relays' ports and the relay switch made (sessions switched per page). */
  overlay?: {
    relayPorts: number[];
    /**
     * Each relay link's emulator counters at the end (tools/emulator/relay.ts RelayCounters): datagrams dropped
     * before a side's address was known, address changes of a side, distinct sources per side. A path whose TURN
     * allocation took a connect timeout shows here whether the emulator lost its first datagrams or served
     * several clients through one link (each client has its own mapping towards the TURN server: `natMappings`).
     */
    relayLinks: RelayCounters[];
    switched?: { atS: number; receiver: number; sender: number };
    /** The receiver page's (the offerer's) selected local candidates just before the switch and at the end. */
    pairsBefore?: RelayPair[];
    pairsAfter?: RelayPair[];
    /** Bytes each relay's link carried (both directions) up to the switch, and from the switch to the end of the call. */
    relayBytesBefore?: number[];
    relayBytesAfter?: number[];
    /** Longest gap between decoded frames (ms) from 1 s before the switch to the end of the call (freeze measure of the switch). */
    maxFrameGapAfterSwitchMs?: number;
    /** Every switch made, with the frame gaps around it. */
    switches?: RelaySwitchResult[];
    /** Every second: the relay of each path on the receiver page (the offerer) and the emulator's clock (s since its start: scenario schedules run on it). */
    relayTimeline?: RelayTimelineEntry[];
  };
}

async function waitReady(page: Page, timeoutMs: number): Promise<void> {
  await page.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true, undefined, { timeout: timeoutMs });
}

async function sample(page: Page): Promise<PeerSample> {
  return page.evaluate(() => {
    const p = (window as unknown as { __peer: { stats(): unknown; drainFrames(): unknown; outOfOrder(): number; camera(): unknown } }).__peer;
    return { stats: p.stats(), frames: p.drainFrames(), outOfOrder: p.outOfOrder(), camera: p.camera() } as never;
  });
}

/** Longest wait for the frames in flight when the call ends (ms). */
const DRAIN_MAX_MS = 3000;
/** The drain ends once no frame was decoded for this long (ms): the rest were lost. */
const DRAIN_IDLE_MS = 1000;

/**
 * End the call cleanly: stop the sender's camera, then let the frames in
 * flight arrive (or be given up by the receiver's frame buffer) and fold them
 * and the final statistics into the last sample. Afterwards every frame the
 * sender counted was either decoded or lost: frames.sent - frames.decoded is
 * exact, whatever the latency at the moment the call ended.
 */
async function drainCall(sender: Page, receiver: Page, last: { sender: PeerSample; receiver: PeerSample } | undefined): Promise<void> {
  if (!last) return;
  await sender.evaluate(() => (window as unknown as { __peer: { stopSending(): void } }).__peer.stopSending());
  const sent = peerView((await sample(sender)).stats).outVideo?.framesSent ?? 0;
  const frames = [...last.receiver.frames];
  let newest = frames.reduce((m, f) => Math.max(m, f.frameId), 0);
  const start = Date.now();
  let lastProgress = start;
  let rcv = last.receiver;
  while (newest < sent) {
    await new Promise((r) => setTimeout(r, 100));
    rcv = await sample(receiver);
    for (const f of rcv.frames) {
      frames.push(f);
      if (f.frameId > newest) newest = f.frameId;
    }
    const now = Date.now();
    if (rcv.frames.length > 0) lastProgress = now;
    if (now - lastProgress >= DRAIN_IDLE_MS || now - start >= DRAIN_MAX_MS) break;
  }
  last.sender = await sample(sender);
  last.receiver = { ...rcv, frames };
}

/** Run a call; resolves with the report. Everything started is stopped, also on error. */
export async function runCall(opts: CallRunOptions = {}): Promise<CallRunResult> {
  const log = opts.log ?? (() => undefined);
  const durationS = opts.durationS ?? 30;
  const codec = opts.codec ?? 'h264';
  const scheduler = opts.scheduler ?? 'converge';
  const fec = opts.fec ?? 'path';
  const scenario: Scenario = opts.scenario === undefined ? DEFAULT_SCENARIO : typeof opts.scenario === 'string' ? loadScenario(opts.scenario) : opts.scenario;
  // Cross traffic (issue 16) exists in the simulator only; the path emulator would silently leave it out.
  if (scenario.crossTraffic?.length) throw new Error(`scenario ${scenario.name}: crossTraffic is simulator-only (npm run bench); the browser path emulator has no cross-traffic flows`);
  ensureChromium(); // fail before starting anything when Chromium is missing

  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  try {
    const env = await startPathEnv(scenario, opts.seed ?? 1, { rewrite: !opts.overlay, natSideA: !!opts.overlay });
    cleanups.push(() => env.close());
    const { emulator, relays } = env;
    log(`emulator: ${relays.map((r) => `path ${r.pathId} A:${r.portA} B:${r.portB}`).join(', ')}`);
    const sig = { url: env.signallingUrl };
    let turn: Awaited<ReturnType<typeof startCoturn>> | undefined;
    let relayServers: RTCIceServer[] = [];
    if (opts.overlay) {
      const t = await startCoturn(relays.length, { log });
      turn = t;
      cleanups.push(() => t.close());
      // Relay k behind link k: the link's B side is the TURN server; clients reach it at the link's A port.
      relayServers = relays.map((r, k) => {
        r.setPeer('b', '127.0.0.1', t.relays[k].port);
        return { ...t.relays[k].iceServer, urls: `turn:127.0.0.1:${r.portA}?transport=udp` };
      });
    }
    let switched: { atS: number; receiver: number; sender: number } | undefined;
    let pairsBefore: RelayPair[] | undefined;
    const linkBytes = (): number[] => relays.map((r) => r.stats().up.deliveredBytes + r.stats().down.deliveredBytes);
    let relayBytesBefore: number[] | undefined;
    let switchEpochMs: number | undefined;
    const decodedAtMs: number[] = [];
    const plans = [...(opts.overlay?.relaySwitch ? [opts.overlay.relaySwitch] : []), ...(opts.overlay?.relaySwitches ?? [])].map((p) => ({ ...p, done: false }));
    // Every path of the call connected, as one page's getStats sees the paths to the other (overlay.switchWhenPathsUp).
    const pathsUp = (smp: PeerSample) => peerView(smp.stats).paths.filter((p) => p.transportState === 'connected').length >= (opts.overlay ? opts.overlay.callPaths : scenario.paths.length);
    const made: Array<RelaySwitchPlan & { receiver: number; sender: number; epochMs: number }> = [];
    const relayTimeline: RelayTimelineEntry[] = [];

    const pages = await startPageServer(opts.contentSecurityPolicy ? { headers: { 'Content-Security-Policy': opts.contentSecurityPolicy } } : {});
    cleanups.push(() => pages.close());
    const base = pages.url('tools/page/index.html');

    const browser = await launchChromium({ fakeVideoFile: opts.video });
    cleanups.push(() => browser.close());
    const room = `call-${process.pid}-${Date.now()}`;
    const params = (role: string) => {
      const q = new URLSearchParams({
        role,
        room,
        sig: sig.url,
        paths: String(opts.overlay ? opts.overlay.callPaths : scenario.paths.length),
        codec,
        scheduler,
        fec,
        width: String(opts.width ?? 640),
        height: String(opts.height ?? 480),
        fps: String(opts.fps ?? 30),
      });
      if (opts.singlePath !== undefined) q.set('singlePath', String(opts.singlePath));
      if (opts.maxBitrateBps) q.set('maxBitrate', String(opts.maxBitrateBps));
      if (opts.qoeFeedback === false) q.set('qoeFeedback', '0');
      if (opts.keyframeIntervalMs) q.set('keyframeIntervalMs', String(opts.keyframeIntervalMs));
      if (opts.connectTimeoutMs) q.set('connectTimeoutMs', String(opts.connectTimeoutMs));
      if (opts.mtuBytes) q.set('mtuBytes', String(opts.mtuBytes));
      if (opts.playoutMaxMs !== undefined) q.set('playoutMaxMs', String(opts.playoutMaxMs));
      if (turn) q.set('relays', JSON.stringify(relayServers));
      if (opts.overlay?.relayHandover) q.set('relayHandover', opts.overlay.relayHandover);
      if (opts.overlay?.relaySelection) q.set('relaySelection', JSON.stringify(opts.overlay.relaySelection));
      if (opts.faultHandling) q.set('faultHandling', JSON.stringify(opts.faultHandling));
      return `${base}?${q}`;
    };
    const ctxR = await browser.newContext();
    const ctxS = await browser.newContext();
    const receiver = await ctxR.newPage();
    const sender = await ctxS.newPage();
    const pageErrors: string[] = [];
    for (const [name, pg] of [
      ['receiver', receiver],
      ['sender', sender],
    ] as const) {
      pg.on('pageerror', (e) => pageErrors.push(`${name}: ${e.message}`));
      pg.on('console', (m) => {
        if (m.type() === 'error') pageErrors.push(`${name} console: ${m.text()}`);
      });
    }
    // Generous first-load timeouts: on a fresh checkout Vite pre-bundles dependencies first.
    await receiver.goto(params('receiver'), { waitUntil: 'domcontentloaded', timeout: 120_000 });
    await sender.goto(params('sender'), { waitUntil: 'domcontentloaded', timeout: 120_000 });
    await Promise.all([waitReady(receiver, 60_000), waitReady(sender, 60_000)]);
    log(`call running for ${durationS} s (codec ${codec}, scheduler ${scheduler}, fec ${fec}, scenario ${scenario.name ?? 'default'})`);

    const samples: Array<{ tS: number; sender: PeerSample; receiver: PeerSample; emulator: unknown }> = [];
    const t0 = Date.now();
    for (let s = 1; s <= durationS; s++) {
      const wait = t0 + s * 1000 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const [snd, rcv] = await Promise.all([sample(sender), sample(receiver)]);
      samples.push({ tS: s, sender: snd, receiver: rcv, emulator: relays.map((r) => r.stats()) });
      const due = plans.filter((sw) => !sw.done && s >= sw.atS);
      const held = due.length > 0 && opts.overlay?.switchWhenPathsUp === true && s < durationS - 4 && !(pathsUp(snd) && pathsUp(rcv));
      if (held) log(`t=${s}s relay switch waits: not every path is connected on both pages`);
      for (const sw of held ? [] : due) {
        sw.done = true;
        const epochMs = Date.now();
        if (!switched) {
          pairsBefore = await readPairs(receiver);
          relayBytesBefore = linkBytes();
          switchEpochMs = epochMs;
        }
        const call = (pg: Page) => pg.evaluate(([p, r]) => (window as unknown as { __peer: { switchRelay(p: number, r: number): number } }).__peer.switchRelay(p, r), [sw.pathId, sw.relay] as const);
        const done = { atS: s, pathId: sw.pathId, relay: sw.relay, receiver: await call(receiver), sender: await call(sender), epochMs };
        made.push(done);
        switched ??= { atS: s, receiver: done.receiver, sender: done.sender };
        log(`t=${s}s relay switch: path ${sw.pathId} -> relay ${sw.relay} (sessions switched: receiver ${done.receiver}, sender ${done.sender})`);
      }
      if (opts.overlay) {
        for (const f of rcv.frames) decodedAtMs.push(f.atMs);
        const [rl, st] = await receiver.evaluate(() => {
          const p = (window as unknown as { __peer: { relays(): number[]; relayState(): unknown } }).__peer;
          return [p.relays(), p.relayState()] as const;
        });
        relayTimeline.push({ tS: s, linkS: Math.round(performance.now() - emulator.epochMs) / 1000, relays: rl, selector: st as RelayTimelineEntry['selector'] });
      }
      const last = rcv.frames.length;
      log(`t=${s}s decoded ${last} frames this second`);
    }
    const pairsAfter = turn ? await readPairs(receiver) : undefined;
    const bytesEnd = linkBytes();
    const relayBytesAfter = relayBytesBefore ? bytesEnd.map((b, k) => b - (relayBytesBefore as number[])[k]) : undefined;
    let maxFrameGapAfterSwitchMs: number | undefined;
    if (switchEpochMs !== undefined) {
      const from = switchEpochMs - 1000;
      const at = decodedAtMs.filter((t) => t >= from).sort((a, b) => a - b);
      maxFrameGapAfterSwitchMs = 0;
      for (let i = 1; i < at.length; i++) maxFrameGapAfterSwitchMs = Math.max(maxFrameGapAfterSwitchMs, Math.round(at[i] - at[i - 1]));
      if (at.length < 2) maxFrameGapAfterSwitchMs = Number.POSITIVE_INFINITY;
    }
    const sortedAt = [...decodedAtMs].sort((a, b) => a - b);
    await drainCall(sender, receiver, samples[samples.length - 1]);
    const extra = await Promise.all(
      [sender, receiver].map((p) =>
        p.evaluate(() => {
          const peer = (window as unknown as { __peer: { events(): unknown; errors(): unknown } }).__peer;
          return { events: peer.events(), errors: peer.errors() } as never as { events: unknown[]; errors: string[] };
        }),
      ),
    );
    // Each switch's outcome on each page: the first RouteSwitch 'switched' / 'timed-out' event after the switch call.
    const routeOutcome = (events: unknown[], m: { pathId: number; epochMs: number }) => {
      for (const e of events as Array<{ atMs: number; type: string; detail: unknown[] }>) {
        if (e.type !== 'route-switch' || e.atMs < m.epochMs - 50 || e.detail[0] !== m.pathId) continue;
        const info = e.detail[1] as { phase: string; elapsedMs: number; held: boolean };
        if (info.phase !== 'started') return { phase: info.phase, elapsedMs: info.elapsedMs, held: info.held };
      }
      return undefined;
    };
    const switches: RelaySwitchResult[] = made.map((m) => ({
      atS: m.atS,
      pathId: m.pathId,
      relay: m.relay,
      receiver: m.receiver,
      sender: m.sender,
      ...(({ gapMs, endMs }) => ({ gapMs, gapEndMs: Math.round(endMs - m.epochMs) }))(longestGapEndingIn(sortedAt, m.epochMs, m.epochMs + SWITCH_WINDOW_MS)),
      controlGapMs: longestGapEndingIn(sortedAt, m.epochMs - SWITCH_WINDOW_MS, m.epochMs).gapMs,
      routeSender: routeOutcome(extra[0].events, m),
      routeReceiver: routeOutcome(extra[1].events, m),
    }));
    const report = buildReport({
      durationS,
      codec,
      scheduler,
      fec,
      scenarioName: scenario.name ?? 'default',
      samples,
      drained: true,
      senderEvents: extra[0].events,
      receiverEvents: extra[1].events,
      errors: [...extra[0].errors.map((e) => `sender: ${e}`), ...extra[1].errors.map((e) => `receiver: ${e}`), ...pageErrors].slice(0, 200),
    });
    // The relays' own counts: a path that never carried media cannot hide behind the page's statistics.
    report.relay = pathTraffic(emulator.stats());
    report.source = opts.source ?? (opts.video ? { kind: 'file', file: opts.video } : { kind: 'synthetic' });
    const enabled = scheduler === 'single' ? [opts.singlePath ?? 0] : scenario.paths.map((_, i) => i);
    // In overlay mode the emulated links are the relays' (some idle by design), not the call's paths.
    if (!opts.overlay) report.pathUsage = checkPathUsage(report.relay, scenario, enabled, durationS);
    let outDir: string | undefined;
    if (opts.out) {
      outDir = resolve(opts.out);
      mkdirSync(outDir, { recursive: true });
      writeFileSync(join(outDir, 'report.json'), JSON.stringify(report, null, 2));
      writeFileSync(join(outDir, 'report.html'), renderReportHtml(report));
    }
    return {
      report,
      outDir,
      ...(turn
        ? {
            overlay: {
              relayPorts: turn.relays.map((r) => r.port),
              relayLinks: relays.map((r) => ({ ...r.stats().relay })),
              ...(switched ? { switched, pairsBefore, relayBytesBefore, relayBytesAfter, maxFrameGapAfterSwitchMs, switches } : {}),
              pairsAfter,
              relayTimeline,
            },
          }
        : {}),
    };
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
