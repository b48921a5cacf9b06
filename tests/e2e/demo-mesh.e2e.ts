/**
 * Issue 13: the demo as a three-participant conference (full mesh). Three
 * pages of one browser join a room; each must decode video from both
 * others; participant 0 switches path 1 off with the page's toggle (its
 * traffic on path 1 stops towards both others) and on again (it resumes).
 * Participant 1 switches camera (replaceTrack) and its video goes on;
 * participant 2 then reloads its tab and comes back under a new id with
 * its video. One screenshot per participant under out/. Behaviour only: no timed
 * quality thresholds (a loaded 2-core machine would flake them).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startDemo } from '../../demo/serve.js';
import type { CallStatsEntry } from '../../src/call/stats-types.js';
import { chromiumArgs, ensureChromium } from '../../tools/harness/chromium.js';

interface Digest {
  me: string | undefined;
  remotes: Array<{ id: string; decoded: number; paths: Array<{ id: number; enabled: boolean; state: string }>; sent: Record<number, number>; media: Record<number, number> }>;
  tiles: number;
  status: string;
}

/** What one page's call says about each remote participant. */
function digest(page: Page): Promise<Digest | undefined> {
  return page.evaluate(() => {
    const call = (window as unknown as { __demo?: { getStats(): Map<string, CallStatsEntry> } }).__demo;
    if (!call) return undefined;
    const entries = [...call.getStats().values()];
    const me = entries.flatMap((e) => (e.type === 'call' ? [e] : []))[0];
    return {
      me: me?.participantId,
      remotes: (me?.remoteParticipantIds ?? []).map((id) => {
        const paths = entries.flatMap((e) => (e.type === 'path' && e.participantId === id ? [e] : []));
        const sending = entries.some((e) => e.type === 'outbound-rtp' && e.kind === 'video' && e.participantId === id);
        let decoded = 0;
        for (const e of entries) if (e.type === 'inbound-rtp' && e.kind === 'video' && e.participantId === id) decoded = e.framesDecoded;
        return {
          id,
          decoded,
          paths: paths.map((x) => ({ id: x.pathId, enabled: x.enabled, state: x.state })),
          sent: Object.fromEntries(sending ? paths.map((x) => [x.pathId, x.packetsSent]) : []),
          media: Object.fromEntries(sending ? paths.map((x) => [x.pathId, x.mediaPacketsSent]) : []),
        };
      }),
      tiles: document.querySelectorAll('.tile.remote').length,
      status: document.getElementById('status')?.textContent ?? '',
    };
  });
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const t0 = Date.now();
  let v = await probe();
  while (!ok(v)) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 500));
    v = await probe();
  }
  return v;
}

const sentOn = (d: Digest | undefined, pathId: number): number[] => (d?.remotes ?? []).map((r) => r.sent[pathId] ?? 0);

describe('demo page, three participants', () => {
  it('each sees the two others, a path toggled off stops our traffic on it and on resumes it', { timeout: 90_000 }, async () => {
    const t0 = Date.now();
    const demo = await startDemo({ signallingPort: 0, pagePort: 0 });
    const browser = await chromium.launch({ executablePath: ensureChromium(), headless: true, args: chromiumArgs() });
    try {
      // Round robin puts media on both paths whatever the content, so "traffic resumes" tests the toggle, not the scheduler.
      const url = `${demo.pageUrl}?autojoin=1&room=mesh3&paths=2&scheduler=roundrobin&sig=${encodeURIComponent(demo.signallingUrl)}`;
      const pages: Page[] = [];
      for (let i = 0; i < 3; i++) {
        const page = await (await browser.newContext({ viewport: { width: 1500, height: 1100 } })).newPage();
        await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 30_000 });
        pages.push(page);
      }
      const all = () => Promise.all(pages.map(digest));
      // Every page decodes frames from both others.
      const up = await waitFor('every participant decoding both others', 50_000, all, (ds) =>
        ds.every((d) => d !== undefined && d.remotes.length === 2 && d.remotes.every((r) => r.decoded > 0 && r.paths.every((x) => x.state === 'connected'))),
      );
      const ids = up.map((d) => d!.me);
      expect(new Set(ids).size).toBe(3);
      for (const [i, d] of up.entries()) {
        expect(d!.remotes.map((r) => r.id).sort()).toEqual(ids.filter((_, j) => j !== i).sort());
        expect(d!.tiles).toBe(2);
        expect(d!.status).not.toMatch(/waiting/);
      }

      // Participant 0 switches path 1 off: after a settling second, nothing more of its goes on path 1.
      await pages[0].click('#path-toggle-1');
      await new Promise((r) => setTimeout(r, 1500));
      const off1 = await digest(pages[0]);
      for (const r of off1!.remotes) expect(r.paths.map((x) => x.enabled)).toEqual([true, false]);
      await new Promise((r) => setTimeout(r, 2000));
      const off2 = await digest(pages[0]);
      expect(sentOn(off2, 1), 'path 1 still carries our traffic while disabled').toEqual(sentOn(off1, 1));
      for (const [k, n] of sentOn(off2, 0).entries()) expect(n, 'path 0 carries the call while path 1 is off').toBeGreaterThan(sentOn(off1, 0)[k]);
      // Video from participant 0 keeps arriving at the others on path 0.
      const decodedBefore = up.slice(1).map((d) => d!.remotes.find((r) => r.id === ids[0])!.decoded);
      const during = await all();
      for (const [k, d] of during.slice(1).entries()) expect(d!.remotes.find((r) => r.id === ids[0])!.decoded).toBeGreaterThan(decodedBefore[k]);

      // On again: traffic resumes on path 1 towards both others.
      await pages[0].click('#path-toggle-1');
      await waitFor(
        'traffic on path 1 again',
        15_000,
        () => digest(pages[0]),
        (d) => sentOn(d, 1).every((n, k) => n > sentOn(off2, 1)[k]),
      );
      const on = await digest(pages[0]);
      for (const r of on!.remotes) expect(r.paths.map((x) => x.enabled)).toEqual([true, true]);
      // Media (not only padding) returns once the sender's path hysteresis promotes the path (3 s clean, doubling per recent fault).
      const mediaOn = (d: Digest | undefined): number[] => (d?.remotes ?? []).map((r) => r.media[1] ?? 0);
      await waitFor(
        'media on path 1 again',
        25_000,
        () => digest(pages[0]),
        (d) => mediaOn(d).every((n, k) => n > mediaOn(off2)[k]),
      );

      // Participant 1 switches to a new camera track (replaceTrack): the others go on decoding its stream.
      const before = await all();
      const decodedFrom1 = (ds: Array<Digest | undefined>): number[] => [ds[0], ds[2]].map((d) => d!.remotes.find((r) => r.id === ids[1])!.decoded);
      await pages[1].evaluate(async () => {
        const stream = await navigator.mediaDevices.getUserMedia({ video: { width: 320, height: 240, frameRate: 30 } });
        await (window as unknown as { __demo: { replaceTrack(t: MediaStreamTrack): Promise<void> } }).__demo.replaceTrack(stream.getVideoTracks()[0]);
      });
      const switched = await waitFor('frames after the camera switch', 15_000, all, (ds) => decodedFrom1(ds).every((n, k) => n > decodedFrom1(before)[k] + 30));
      expect(switched.every((d) => d!.remotes.length === 2)).toBe(true);

      // Participant 2 reloads its tab: it rejoins under a new id, the others drop its old tile and decode its video again.
      await pages[2].reload({ waitUntil: 'domcontentloaded', timeout: 30_000 });
      const back = await waitFor('the reloaded participant back in the mesh', 40_000, all, (ds) =>
        ds.every((d) => d !== undefined && d.me !== undefined && d.remotes.length === 2 && d.tiles === 2 && d.remotes.every((r) => r.decoded > 0)),
      );
      const newId = back[2]!.me!;
      expect(newId).not.toBe(ids[2]);
      for (const d of back.slice(0, 2)) expect(d!.remotes.map((r) => r.id)).toContain(newId);

      // Let the plots gather a few more points, then one screenshot per participant.
      await new Promise((r) => setTimeout(r, 2000));
      const out = join(process.cwd(), 'out');
      mkdirSync(out, { recursive: true });
      for (const [i, p] of pages.entries()) await p.screenshot({ path: join(out, `demo-mesh-participant-${i}.png`), fullPage: true });
      process.stdout.write(`demo-mesh: 3 participants, ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    } finally {
      await browser.close();
      await demo.close();
    }
  });
});
