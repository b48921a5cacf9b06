/**
 * A call between two different browsers (Chromium through playwright-core,
 * Firefox through puppeteer-core over WebDriver BiDi) on the same peer page as
 * `npm run call` (tools/page), over the emulated paths of a scenario
 * (tools/harness/setup.ts). Used by the cross-browser e2e test
 * (`npm run test:browsers`). It checks that frames flow and are shown, not
 * their quality: it stops as soon as the receiver decoded `minFrames`.
 */
import type { Browser as ChromiumBrowser } from 'playwright-core';
import type { Browser as FirefoxBrowser } from 'puppeteer-core';
import { DEFAULT_SCENARIO } from '../../sim/net/scenario.js';
import type { Scenario } from '../../sim/net/scenario.js';
import type { CallStatsEntry } from '../../src/call/stats-types.js';
import type { CallCapabilities } from '../../src/codec/capabilities.js';
import { pathTraffic, type PathTraffic } from './path-usage.js';
import { startPathEnv, type PageServer } from './setup.js';

export type BrowserName = 'chromium' | 'firefox';

/** The little of a page both drivers offer alike. */
interface PeerPage {
  evaluate<T>(fn: () => T | Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** What one side of the call looked like at the end. */
export interface PeerSummary {
  browser: BrowserName;
  userAgent: string;
  /** Its getStats() entries at the end (src/call/stats-types.ts; read them with ./stats-view.ts `peerView`). */
  stats: CallStatsEntry[];
  /** The page's own error log (CallEvent.Error, start failures) plus page errors. */
  errors: string[];
  /** Events the page recorded, by type (e.g. RemoteTrack, PathState). */
  eventCounts: Record<string, number>;
  /** The receiver's <video> playing the remote track: its size (0 until a frame is shown). */
  video: { width: number; height: number; readyState: number };
  /** MultipathCall.capabilities() in this page. */
  capabilities: CallCapabilities;
}

export interface CrossBrowserResult {
  sender: PeerSummary;
  receiver: PeerSummary;
  /** The relays' own counts per path. */
  relay: PathTraffic[];
  /** Wall time from opening the pages to the end of the call (ms). */
  elapsedMs: number;
}

export interface CrossBrowserOptions {
  sender: BrowserName;
  receiver: BrowserName;
  browsers: { chromium: ChromiumBrowser; firefox: FirefoxBrowser };
  pages: PageServer;
  scenario?: Scenario;
  codec?: 'h264' | 'vp8' | 'vp9' | 'av1';
  /** Stop once the receiver decoded this many frames (default 30). */
  minFrames?: number;
  /** Give up waiting for frames after this long (ms, default 30000); the result then shows what got through. */
  timeoutMs?: number;
}

async function openPage(name: BrowserName, opts: CrossBrowserOptions, url: string, errors: string[]): Promise<PeerPage> {
  if (name === 'chromium') {
    const ctx = await opts.browsers.chromium.newContext();
    const page = await ctx.newPage();
    page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()}`);
    });
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 120_000 });
    return { evaluate: (fn) => page.evaluate(fn), close: () => ctx.close() };
  }
  const page = await opts.browsers.firefox.newPage();
  // tsx compiles the evaluated functions with esbuild's keepNames, which calls a `__name` helper the page lacks.
  await page.evaluateOnNewDocument('globalThis.__name = (f) => f;');
  page.on('pageerror', (e) => errors.push(`page: ${String((e as Error)?.message ?? e)}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 120_000 });
  return { evaluate: (fn) => page.evaluate(fn), close: () => page.close() };
}

interface PagePeer {
  stats(): CallStatsEntry[];
  errors(): string[];
  events(): Array<{ type: string }>;
  capabilities(): Promise<CallCapabilities>;
}

async function summarize(name: BrowserName, page: PeerPage, pageErrors: string[]): Promise<PeerSummary> {
  const s = await page.evaluate(async () => {
    const peer = (window as unknown as { __peer: PagePeer }).__peer;
    const v = document.getElementById('remote') as HTMLVideoElement | null;
    return {
      capabilities: await peer.capabilities(),
      userAgent: navigator.userAgent,
      stats: JSON.parse(JSON.stringify(peer.stats())) as CallStatsEntry[],
      errors: peer.errors(),
      events: peer.events().map((e) => e.type),
      video: { width: v?.videoWidth ?? 0, height: v?.videoHeight ?? 0, readyState: v?.readyState ?? 0 },
    };
  });
  const eventCounts: Record<string, number> = {};
  for (const t of s.events) eventCounts[t] = (eventCounts[t] ?? 0) + 1;
  return { browser: name, userAgent: s.userAgent, stats: s.stats, errors: [...s.errors, ...pageErrors], eventCounts, video: s.video, capabilities: s.capabilities };
}

async function waitReady(page: PeerPage, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await page.evaluate(() => (window as unknown as { __ready?: boolean }).__ready === true))) {
    if (Date.now() > end) throw new Error('peer page not ready in time');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Run one call: `sender` sends the fake camera, `receiver` decodes and shows
 * it. Everything it starts (relays, signalling, pages) is stopped, also on error.
 */
export async function runCrossBrowserCall(opts: CrossBrowserOptions): Promise<CrossBrowserResult> {
  const scenario = opts.scenario ?? DEFAULT_SCENARIO;
  const minFrames = opts.minFrames ?? 30;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const env = await startPathEnv(scenario, 1);
  const opened: PeerPage[] = [];
  const t0 = Date.now();
  try {
    const room = `xb-${opts.sender}-${opts.receiver}-${process.pid}-${Date.now()}`;
    const url = (role: string) =>
      `${opts.pages.url('tools/page/index.html')}?${new URLSearchParams({ role, room, sig: env.signallingUrl, paths: String(scenario.paths.length), codec: opts.codec ?? 'h264' })}`;
    const rErrors: string[] = [];
    const sErrors: string[] = [];
    const receiver = await openPage(opts.receiver, opts, url('receiver'), rErrors);
    opened.push(receiver);
    const sender = await openPage(opts.sender, opts, url('sender'), sErrors);
    opened.push(sender);
    await Promise.all([waitReady(receiver, 60_000), waitReady(sender, 60_000)]);
    const end = Date.now() + timeoutMs;
    for (;;) {
      await new Promise((r) => setTimeout(r, 500));
      const got = await receiver.evaluate(() => {
        const peer = (window as unknown as { __peer: PagePeer }).__peer;
        const v = document.getElementById('remote') as HTMLVideoElement | null;
        const inVideo = peer.stats().find((e) => e.type === 'inbound-rtp' && e.kind === 'video');
        return { decoded: inVideo?.type === 'inbound-rtp' && inVideo.kind === 'video' ? inVideo.framesDecoded : 0, shown: (v?.videoWidth ?? 0) > 0 };
      });
      if ((got.decoded >= minFrames && got.shown) || Date.now() > end) break;
    }
    const [s, r] = await Promise.all([summarize(opts.sender, sender, sErrors), summarize(opts.receiver, receiver, rErrors)]);
    return { sender: s, receiver: r, relay: pathTraffic(env.emulator.stats()), elapsedMs: Date.now() - t0 };
  } finally {
    for (const p of opened.reverse()) await p.close().catch(() => undefined);
    await env.close();
  }
}
