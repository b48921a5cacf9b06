/**
 * Issue 14 item 2: the Chrome extension (MV3) built by `npm run build:extension`
 * loads unpacked in Debian Chromium (new headless); its call page holds a call
 * with a second call page; the popup page shows that call's per-path stats
 * (asked over chrome.runtime messaging); the popup announces the extension only
 * to a page that opted in. Behaviour only, no quality thresholds.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import JSZip from 'jszip';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExtension } from '../../extension/build.js';
import type { AnnounceResult } from '../../extension/src/inject.js';
import type { CallSnapshot } from '../../extension/src/protocol.js';
import { startSignallingServer } from '../../src/signalling/node.js';
import { chromiumArgs, ensureChromium } from '../../tools/harness/chromium.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `probe` every 500 ms until `done` holds or `timeoutMs` passes; returns the last value. */
async function waitFor<T>(probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  let v = await probe();
  while (!done(v) && Date.now() < end) {
    await sleep(500);
    v = await probe();
  }
  return v;
}

const snapshotOf = (p: Page): Promise<CallSnapshot | undefined> => p.evaluate(() => (window as unknown as { __mprtcExt?: { snapshot(): CallSnapshot } }).__mprtcExt?.snapshot());
const popupLast = (p: Page): Promise<CallSnapshot | undefined> => p.evaluate(() => (window as unknown as { __mprtcPopup?: { last?: CallSnapshot } }).__mprtcPopup?.last);

/**
 * protobufjs (src/wire/schema.ts, even its light build) compiles its codecs with
 * `Function(source)`, which the extension CSP `script-src 'self'` refuses: paths
 * connect and frames are encoded, but no packet is encoded or decoded. Issue 14
 * item 3 (protobufjs static code) lifts that; until then the media checks skip.
 */
const CSP_EVAL_BLOCK = /Evaluating a string as JavaScript violates the following Content Security Policy/;

/** Two pages on 127.0.0.1: /optin.html carries the opt-in meta, /plain.html does not; both record window messages. */
function startPages(): Promise<{ server: Server; url(p: string): string }> {
  const page = (meta: string) =>
    `<!doctype html><html><head><meta charset="utf-8">${meta}<title>t</title><script>window.__got=[];addEventListener('message',(e)=>__got.push(e.data));</script></head><body>page</body></html>`;
  const server = createServer((req, res) => {
    const body = req.url === '/optin.html' ? page('<meta name="multipath-rtc" content="allow">') : req.url === '/plain.html' ? page('') : undefined;
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html' }).end(body ?? '');
  });
  return new Promise((res) => server.listen(0, '127.0.0.1', () => res({ server, url: (p) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${p}` })));
}

/** Extract `zipPath` into `dir`; returns `dir`. */
async function unzipTo(zipPath: string, dir: string): Promise<string> {
  const zip = await JSZip.loadAsync(readFileSync(zipPath));
  for (const entry of Object.values(zip.files)) {
    if (entry.dir) continue;
    const to = join(dir, entry.name);
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, await entry.async('uint8array'));
  }
  return dir;
}

describe('Chrome extension (MV3)', () => {
  let context: BrowserContext;
  let profile: string;
  let sig: Awaited<ReturnType<typeof startSignallingServer>>;
  let extensionId: string;
  const calls: Page[] = [];
  let popup: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    // Load what we ship: the zip, unpacked into the test's profile folder.
    const { zip } = await buildExtension();
    profile = mkdtempSync(join(tmpdir(), 'mprtc-ext-'));
    const dir = await unzipTo(zip, join(profile, 'extension'));
    sig = await startSignallingServer({ port: 0, host: '127.0.0.1', log: () => undefined });
    context = await chromium.launchPersistentContext(profile, {
      executablePath: ensureChromium(),
      // Playwright's headless on Chromium >= 132 is the new headless, which runs extensions.
      headless: true,
      // --enable-unsafe-extension-debugging: lets CDP `Extensions.triggerAction` invoke the action (grants activeTab) over Playwright's pipe.
      args: [...chromiumArgs(), `--disable-extensions-except=${dir}`, `--load-extension=${dir}`, '--enable-unsafe-extension-debugging'],
    });
    const worker = context.serviceWorkers().find((w) => w.url().startsWith('chrome-extension://')) ?? (await context.waitForEvent('serviceworker', { timeout: 20_000 }));
    extensionId = new URL(worker.url()).host;
  });

  afterAll(async () => {
    await context?.close();
    await sig?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('two extension call pages connect over two paths; the popup shows per-path stats', async () => {
    expect(extensionId).toMatch(/^[a-p]{32}$/);
    const callUrl = `chrome-extension://${extensionId}/call.html?room=ext-e2e&paths=2&autojoin=1&sig=${encodeURIComponent(sig.url)}`;
    for (let i = 0; i < 2; i++) {
      const p = await context.newPage();
      p.on('pageerror', (e) => pageErrors.push(`call ${i}: ${e.message}`));
      p.on('console', (m) => {
        if (m.type() === 'error') pageErrors.push(`call ${i}: ${m.text()}`);
      });
      await p.goto(callUrl, { waitUntil: 'domcontentloaded' });
      calls.push(p);
    }
    const connected = (s: CallSnapshot | undefined) => s?.phase === 'connected' && s.paths.length === 2 && s.paths.every((p) => p.state === 'connected') && s.framesEncoded > 0;
    const snaps = await waitFor(
      () => Promise.all(calls.map(snapshotOf)),
      (s) => s.every(connected),
      45_000,
    );
    const why = JSON.stringify({ snaps, pageErrors: pageErrors.slice(0, 5) });
    for (const s of snaps) {
      expect(s?.phase, why).toBe('connected');
      expect(s!.room).toBe('ext-e2e');
      expect(
        s!.paths.map((p) => [p.id, p.state]),
        why,
      ).toEqual([
        [0, 'connected'],
        [1, 'connected'],
      ]);
      expect(s!.framesEncoded, why).toBeGreaterThan(0);
    }

    // The popup, opened as a page of the extension: it asks the call page for a snapshot once a second.
    popup = await context.newPage();
    await popup.goto(`chrome-extension://${extensionId}/popup.html`, { waitUntil: 'domcontentloaded' });
    const shown = await waitFor(
      () => popupLast(popup),
      (s) => s?.paths.length === 2,
      15_000,
    );
    expect(shown?.phase, JSON.stringify(shown)).toBe('connected');
    expect(shown?.paths.map((p) => p.state)).toEqual(['connected', 'connected']);
    for (const p of shown!.paths) expect(p.estimateBps, JSON.stringify(p)).toBeGreaterThan(0);
    // Rendered: a header row plus one row per path, and the QoE line.
    expect(await popup.locator('#paths-table tr').count()).toBe(3);
    expect(await popup.locator('#qoe').textContent()).toMatch(/fps, \d+ frames decoded, freezes \d+/);
  });

  it('video flows both ways: frames decoded on both call pages and in the popup', async (ctx) => {
    expect(calls).toHaveLength(2);
    const snaps = await waitFor(
      () => Promise.all(calls.map(snapshotOf)),
      (s) => s.every((x) => (x?.framesDecoded ?? 0) > 0) || pageErrors.some((e) => CSP_EVAL_BLOCK.test(e)),
      45_000,
    );
    const evalBlocked = pageErrors.find((e) => CSP_EVAL_BLOCK.test(e));
    if (evalBlocked && snaps.every((s) => s?.framesDecoded === 0)) ctx.skip(`blocked on issue 14 item 3 (protobufjs static code): ${evalBlocked.trim()}`);
    const why = JSON.stringify({ snaps, pageErrors: pageErrors.slice(0, 5) });
    for (const s of snaps) expect(s?.framesDecoded, why).toBeGreaterThan(0);
    const shown = await waitFor(
      () => popupLast(popup),
      (s) => (s?.framesDecoded ?? 0) > 0,
      10_000,
    );
    expect(shown?.framesDecoded, JSON.stringify(shown)).toBeGreaterThan(0);
    expect(shown!.paths.some((p) => p.packetsReceived > 0)).toBe(true);
  });

  it('announces itself only to a page that opted in, after the action was invoked on it', async () => {
    const pages = await startPages();
    try {
      const results: Record<string, { result: AnnounceResult; got: unknown[] }> = {};
      for (const name of ['optin', 'plain']) {
        const url = pages.url(`/${name}.html`);
        const page = await context.newPage();
        await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 15_000 });
        await page.bringToFront();
        // What a user's click on the toolbar button does: open the action and grant activeTab on this tab.
        // The Extensions domain answers on the browser target only ("Method not allowed" on a page's session), and
        // the action is triggered on the tab target that holds the page ("Action can only be triggered on a tab target").
        const browserCdp = await context.browser()!.newBrowserCDPSession();
        // Tab targets are left out of Target.getTargets unless the filter asks for them.
        const { targetInfos } = await browserCdp.send('Target.getTargets', { filter: [{ type: 'tab' }] } as never);
        const tab = targetInfos.find((t) => (t.type as string) === 'tab' && t.url === url);
        expect(tab, JSON.stringify(targetInfos.map((t) => [t.type, t.url]))).toBeDefined();
        await browserCdp.send('Extensions.triggerAction' as 'Target.getTargets', { id: extensionId, targetId: tab!.targetId } as never);
        await browserCdp.detach();
        const result = await popup.evaluate(async (u) => {
          const w = window as unknown as { __mprtcPopup: { announceToTab(id: number): Promise<AnnounceResult> } };
          const tab = (await chrome.tabs.query({})).find((t) => t.url === u);
          if (tab?.id === undefined) return { outcome: 'no-tab', message: `no tab with url ${u} visible to the extension` } as AnnounceResult;
          return w.__mprtcPopup.announceToTab(tab.id);
        }, url);
        await sleep(300);
        results[name] = { result, got: await page.evaluate(() => (window as unknown as { __got: unknown[] }).__got) };
        await page.close();
      }
      const why = JSON.stringify(results);
      expect(results.optin.result.outcome, why).toBe('announced');
      expect(results.optin.got, why).toEqual([{ source: 'multipath-rtc-extension', type: 'present', version: expect.any(String) }]);
      expect(results.plain.result.outcome, why).toBe('opted-out');
      expect(results.plain.got, why).toEqual([]);
    } finally {
      // Without closeAllConnections, close() waits for Chromium's idle keep-alive sockets (~100 s).
      pages.server.closeAllConnections();
      await new Promise((r) => pages.server.close(r));
    }
  });
});
