/**
 * The RTP carrier in Chromium (src/transport/rtp-carrier.ts): two
 * SimplePeerPaths with `rtpCarrier: { attach: 'stall' }` in one page over one emulated path
 * (a tools/emulator relay on 127.0.0.1, 3 Mbps / 20 ms each way). Checks:
 * nothing is negotiated for the carrier while the path does not stall;
 * a stall fallback on the answerer whose
 * datachannel stalls (its forward direction dead for ~3 s) wakes the carrier,
 * which is negotiated then (the answerer asks the initiator) and carries the
 * fallback's datagrams; the carrier is negotiated on the path's one transport (BUNDLE) with VP8
 * only and without NACK / PLI / FIR / RTX; datagrams of 6..1200 bytes arrive
 * intact in both directions; and with the relay's reverse direction dead for
 * ~3 s, the carrier keeps delivering while the datachannel's bufferedAmount
 * stalls (tools/experiments/rtp-carrier/README.md, answer 4). Behaviour only,
 * wide margins, no timing thresholds: counts and ratios.
 */
import { performance } from 'node:perf_hooks';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { buildLink, parseScenario } from '../../sim/net/scenario.js';
import type { Link } from '../../sim/net/link.js';
import { startPathRelay, type PathRelay } from '../../tools/emulator/relay.js';
import { launchChromium, startPageServer, type PageServer } from '../../tools/harness/setup.js';

const DEAD_MS = 3000;

interface LogRow {
  t: number;
  carrierIn: number;
  dcIn: number;
  carrierOut: number;
  dcOut: number;
  buffered: number;
  open: boolean;
  ice: string;
}

describe('RTP carrier', () => {
  let server: PageServer;
  let browser: Browser;
  let page: Page;
  let relay: PathRelay;
  let relay2: PathRelay;
  let up: Link<Buffer>;
  let down: Link<Buffer>;
  let epochMs: number;
  const errors: string[] = [];

  beforeAll(async () => {
    const scenario = parseScenario({ name: 'e2e-rtp-carrier', paths: [{ name: 'p', up: { rateMbps: 3, delayMs: 20, queue: { ms: 300 } } }] }, process.cwd());
    const spec = scenario.paths[0];
    up = buildLink<Buffer>(spec.up, new Rng(1));
    down = buildLink<Buffer>(spec.down, new Rng(2));
    epochMs = performance.now();
    relay = await startPathRelay({ pathId: 0, up, down, epochMs });
    relay2 = await startPathRelay({ pathId: 1, up: buildLink<Buffer>(spec.up, new Rng(3)), down: buildLink<Buffer>(spec.down, new Rng(4)), epochMs });
    server = await startPageServer();
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(`console: ${m.text()}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) errors.push(`HTTP ${r.status()} ${r.url()}`);
    });
    await page.goto(server.url('tests/e2e/rtp-carrier-page/index.html'));
    await page.waitForFunction(() => 'carrierTest' in window);
  });

  afterAll(async () => {
    await page?.evaluate(() => (window as unknown as { carrierTest: { close(): void } }).carrierTest.close()).catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await server?.close();
    await relay?.close();
    await relay2?.close();
  });

  const call = <T>(fn: string, ...args: unknown[]): Promise<T> =>
    page.evaluate(([f, a]) => (window as unknown as Record<string, Record<string, (...x: unknown[]) => unknown>>).carrierTest[f as string](...(a as unknown[])), [fn, args] as const) as Promise<T>;

  type State = { a: string; b: string; aOpen: boolean; bOpen: boolean; unavailable: unknown[]; sdp: string; remoteSdp: string; counters: unknown };

  it('negotiates nothing for the carrier while the path does not stall', async () => {
    const s = await call<State & { candidatesSignalled: string[] }>('setup', { portA: relay.portA, portB: relay.portB });
    const why = JSON.stringify({ ...s, errors });
    expect(s.unavailable, why).toEqual([undefined, undefined]);
    expect([s.a, s.b], why).toEqual(['connected', 'connected']);
    expect(s.aOpen || s.bOpen, why).toBe(false);
    expect(s.sdp, why).not.toMatch(/m=video/);
    expect(s.remoteSdp, why).not.toMatch(/m=video/);
    expect(errors).toEqual([]);
  });

  it("attach 'connect' (the default): negotiates the carrier right after the path connects, without a stall", async () => {
    const s = await call<{ states: string[]; open: boolean[]; unavailable: unknown[]; counters: unknown; remoteSdp: string }>('connectMode', { portA: relay2.portA, portB: relay2.portB });
    const why = JSON.stringify({ ...s, remoteSdp: undefined, errors });
    console.log(`connect mode: ${why}`);
    expect(s.unavailable, why).toEqual([undefined, undefined]);
    expect(s.open, why).toEqual([true, true]);
    expect(s.remoteSdp, why).toMatch(/a=group:BUNDLE \S+ \S+/);
    expect(s.remoteSdp.split('m=video')[1] ?? '', s.remoteSdp).toMatch(/a=sendrecv/);
    expect(errors).toEqual([]);
  });

  it("wakes the carrier when the answerer's datachannel stalls, and moves the stalled sender's datagrams onto it", async () => {
    type Row = { t: number; carrierIn: number; dcIn: number; buffered: number; pipe: string };
    await call('startStallLoad', 400);
    await new Promise((r) => setTimeout(r, 1500));
    const deadFrom = await call<number>('now');
    up.setDown(true, (performance.now() - epochMs) * 1000); // A -> B dead: B's SACKs stop, B's datachannel stalls
    await new Promise((r) => setTimeout(r, DEAD_MS));
    const deadTo = await call<number>('now');
    up.setDown(false, (performance.now() - epochMs) * 1000);
    await new Promise((r) => setTimeout(r, 1500));
    const s = await call<State & { log: Row[]; fallback: Record<string, number | string> }>('stopStallLoad');
    const sum = (rows: Row[], k: 'carrierIn' | 'dcIn') => rows.reduce((n, r) => n + r[k], 0);
    const before = s.log.filter((r) => r.t < deadFrom);
    const dead = s.log.filter((r) => r.t >= deadFrom && r.t < deadTo);
    const why = JSON.stringify({ ...s, sdp: undefined, remoteSdp: undefined, log: undefined, errors });
    console.log(`stall wake: ${why}`);
    console.log(s.log.map((r) => `${r.t - Math.round(deadFrom)}:${r.carrierIn}/${r.dcIn}/${Math.round(r.buffered / 1000)}k${r.pipe === 'carrier' ? 'C' : ''}`).join(' '));
    // Before the outage: the datachannel alone, the carrier not negotiated.
    expect(sum(before, 'dcIn'), why).toBeGreaterThan(0);
    expect(sum(before, 'carrierIn'), why).toBe(0);
    // The stall woke the carrier (B asked A), it opened, and the fallback moved onto it.
    expect(s.fallback.stallsWithoutCarrier, why).toBeGreaterThanOrEqual(1);
    expect((s.counters as Array<{ wakes: number }>)[1].wakes, why).toBeGreaterThanOrEqual(1);
    expect(s.fallback.toCarrier, why).toBeGreaterThanOrEqual(1);
    expect(s.fallback.carrierDatagrams, why).toBeGreaterThan(0);
    // What the carrier delivered in the outage reached A while B's datachannel could not deliver.
    expect(sum(dead, 'carrierIn'), why).toBeGreaterThan(0);
    expect(s.bOpen, why).toBe(true);
    expect(s.remoteSdp, why).toMatch(/m=video/);
    expect(errors).toEqual([]);
  });

  it('negotiates the carrier on the path and carries datagrams intact both ways', async () => {
    const s = await call<State>('ensureOpen');
    const why = JSON.stringify({ ...s, sdp: undefined, remoteSdp: undefined, errors });
    console.log(`open: counters ${JSON.stringify(s.counters)}`);
    expect(s.unavailable, why).toEqual([undefined, undefined]);
    expect(s.aOpen && s.bOpen, why).toBe(true);
    // One transport: the video m-section is in the BUNDLE group with the datachannel's; VP8 only, no repair.
    const video = s.remoteSdp.split('m=video')[1] ?? '';
    expect(s.remoteSdp, why).toMatch(/a=group:BUNDLE \S+ \S+/);
    expect(video, s.remoteSdp).toMatch(/a=rtpmap:\d+ VP8\/90000/);
    expect(video, s.remoteSdp).not.toMatch(/rtx|nack|ccm fir|H264|VP9|AV1/i);
    expect(video, s.remoteSdp).toMatch(/a=sendrecv/);
    // Every ICE / DTLS / RTP packet crossed the relay: it learned both peers.
    expect(relay.peer('a'), why).toBeDefined();
    expect(relay.peer('b'), why).toBeDefined();

    type Res = { sent: number; distinct: number; duplicates: number; bad: number; sentBytes: number; bytes: number };
    const upBefore = relay.stats().up.deliveredBytes;
    const ab = await call<Res>('integrity', 'ab', 300);
    // The carrier's bytes crossed the relay (the path's one transport), not another route.
    expect(relay.stats().up.deliveredBytes - upBefore, JSON.stringify(ab)).toBeGreaterThan(ab.sentBytes);
    console.log(`carrier A->B: ${JSON.stringify(ab)}`);
    // Every datagram that arrives is intact and arrives once. Nearly all arrive: the carrier has no repair of
    // its own (Chromium's NACK/RTX are off by design, our engine repairs end to end), and a loaded CI run lost
    // one frame (2 of 300 datagrams) on the loopback path.
    expect(ab.bad, JSON.stringify(ab)).toBe(0);
    expect(ab.duplicates, JSON.stringify(ab)).toBe(0);
    expect(ab.distinct, JSON.stringify(ab)).toBeGreaterThanOrEqual(ab.sent * 0.9);
    expect(ab.bytes, JSON.stringify(ab)).toBeLessThanOrEqual(ab.sentBytes);
    const ba = await call<Res>('integrity', 'ba', 100);
    console.log(`carrier B->A: ${JSON.stringify(ba)}`);
    expect(ba.bad, JSON.stringify(ba)).toBe(0);
    expect(ba.duplicates, JSON.stringify(ba)).toBe(0);
    expect(ba.distinct, JSON.stringify(ba)).toBeGreaterThanOrEqual(ba.sent * 0.9);
    expect(errors).toEqual([]);
  });

  it('keeps delivering while the reverse direction is dead and the datachannel buffer does not drain', async () => {
    await call('startLoad', 400);
    await new Promise((r) => setTimeout(r, 2000));
    const deadFrom = await call<number>('now');
    down.setDown(true, (performance.now() - epochMs) * 1000);
    await new Promise((r) => setTimeout(r, DEAD_MS));
    const deadTo = await call<number>('now');
    down.setDown(false, (performance.now() - epochMs) * 1000);
    await new Promise((r) => setTimeout(r, 2000));
    const { log, worker, counters } = await call<{ log: LogRow[]; worker: unknown; counters: unknown }>('stopLoad');
    const sum = (rows: LogRow[], k: 'carrierIn' | 'dcIn' | 'carrierOut' | 'dcOut') => rows.reduce((s, r) => s + r[k], 0);
    const before = log.filter((r) => r.t >= deadFrom - 1500 && r.t < deadFrom);
    // The second half of the outage: SCTP's window is spent by then, RTP needs no acknowledgement.
    const late = log.filter((r) => r.t >= deadFrom + DEAD_MS / 2 && r.t < deadTo);
    const summary = {
      before: { carrierOut: sum(before, 'carrierOut'), carrierIn: sum(before, 'carrierIn'), dcIn: sum(before, 'dcIn') },
      late: { carrierOut: sum(late, 'carrierOut'), carrierIn: sum(late, 'carrierIn'), dcOut: sum(late, 'dcOut'), dcIn: sum(late, 'dcIn') },
      bufferedAtDeath: log.find((r) => r.t >= deadFrom)?.buffered,
      bufferedLate: Math.min(...late.map((r) => r.buffered)),
      worker,
      counters,
    };
    const why = JSON.stringify(summary);
    console.log(`dead reverse: ${why}`);
    console.log(log.map((r) => `${r.t - Math.round(deadFrom)}:${r.carrierIn}/${r.dcIn}/${Math.round(r.buffered / 1000)}k${r.open ? '' : '!'}`).join(' '));
    // Both pipes carried before the outage.
    expect(summary.before.carrierIn, why).toBeGreaterThan(0);
    expect(summary.before.dcIn, why).toBeGreaterThan(0);
    // In the outage's second half the carrier delivers at least a quarter of what it was given...
    expect(summary.late.carrierIn, why).toBeGreaterThan(summary.late.carrierOut / 4);
    // ... while the datachannel's queue does not drain (no SACKs come back): more bytes waiting than at the
    // start of the outage. How much SCTP still delivers meanwhile depends on the congestion window it had
    // grown before (one CI run on a loaded machine: all 76 messages of the late window, its buffer
    // 4 -> 79 kB; most runs: 0-1 per 100 ms), so delivery on the datachannel is not asserted.
    expect(summary.bufferedLate, why).toBeGreaterThan(summary.bufferedAtDeath ?? 0);
    expect(errors).toEqual([]);
  });
});
