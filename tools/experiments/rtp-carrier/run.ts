/**
 * Driver of the RTP-carrier experiment (README.md here). Launches the
 * project's headless Chromium (tools/harness), serves index.html with Vite,
 * starts a `tools/emulator` path relay per connection when the case has a
 * link, runs the case in the page and writes its raw result to
 * `out/experiments/rtp-carrier/<case>.json`.
 *
 * Run it under the machine-wide browser lock:
 *   flock /tmp/mprtc-browser.lock node --import tsx tools/experiments/rtp-carrier/run.ts CASE...
 * Cases: see CASES below (`--list`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Rng } from '../../../src/core/rng.js';
import { type LinkSpec, buildLink, loadScenario } from '../../../sim/net/scenario.js';
import { type PathRelay, startPathRelay } from '../../emulator/relay.js';
import { REPO_ROOT } from '../../harness/paths.js';
import { launchChromium, startPageServer } from '../../harness/setup.js';
import type { CaseConfig } from './page.js';

interface LinkPair {
  up: LinkSpec;
  down: LinkSpec;
}
interface Case {
  page: Omit<CaseConfig, 'relay' | 'dc'>;
  link?: LinkPair;
  /** Datachannel comparison on the same link (own relay). */
  dcRateKbps?: number;
}

const SIZES = [100, 300, 1000, 1200, 1500, 3000, 10_000, 30_000, 60_000];
/** 2 Mbps up, 20 ms one-way each way, 300 ms queue; the reverse link is down at 15-25 s of relay time. */
const DEAD_REVERSE: LinkPair = {
  up: { rateMbps: 2, delayMs: 20, queue: { ms: 300 } },
  down: { rateMbps: 2, delayMs: 20, queue: { ms: 300 }, downPeriods: [[15, 25]] },
};
const LOSSY: LinkPair = {
  up: { rateMbps: 4, delayMs: 20, loss: 0.05, queue: { ms: 300 } },
  down: { rateMbps: 4, delayMs: 20, queue: { ms: 300 } },
};

function attLink(): LinkPair {
  const sc = loadScenario(join(REPO_ROOT, 'sim/net/scenarios/att-tmobile.json'));
  const p = sc.paths[0];
  return { up: p.up, down: p.down };
}

const CASES: Record<string, () => Case> = {
  // Q1: integrity of arbitrary payloads 100 B - 60 kB, direct loopback.
  'sizes-vp8': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'delta', sizes: SIZES, durationS: 8, fps: 30 } }),
  'sizes-small': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'delta', sizes: [100, 300, 1000], durationS: 6, fps: 30 } }),
  'sizes-large': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'delta', sizes: [30_000, 60_000], durationS: 6, fps: 30 } }),
  'sizes-vp8-key': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'key', sizes: SIZES, durationS: 8, fps: 30 } }),
  'sizes-key-10fps': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'key', sizes: SIZES, durationS: 10, fps: 10 } }),
  'sizes-h264': () => ({ page: { codec: 'H264', mode: 'replace', prefix: 'delta', sizes: SIZES, durationS: 8, fps: 30 } }),
  'sizes-vp8-append': () => ({ page: { codec: 'VP8', mode: 'append', prefix: 'delta', sizes: SIZES, durationS: 8, fps: 30 } }),
  // Q2: 5 % loss on the media direction.
  'loss-delta': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'delta', rateKbps: 800, durationS: 15, fps: 30 }, link: LOSSY }),
  'loss-key': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'key', rateKbps: 800, durationS: 15, fps: 30 }, link: LOSSY }),
  'loss-nonack': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'key', rateKbps: 800, durationS: 15, fps: 30, noNack: true }, link: LOSSY }),
  'loss-append': () => ({ page: { codec: 'VP8', mode: 'append', prefix: 'delta', rateKbps: 800, durationS: 15, fps: 30 }, link: LOSSY }),
  // Q3: offered load above what the link takes (rate, pacing, GCC).
  'rate-1m': () => ({
    page: { codec: 'VP8', mode: 'replace', prefix: 'key', rateKbps: 1000, durationS: 20, fps: 30 },
    link: { up: { rateMbps: 2, delayMs: 20, queue: { ms: 300 } }, down: { rateMbps: 2, delayMs: 20, queue: { ms: 300 } } },
  }),
  'rate-3m': () => ({
    page: { codec: 'VP8', mode: 'replace', prefix: 'key', rateKbps: 3000, durationS: 20, fps: 30 },
    link: { up: { rateMbps: 2, delayMs: 20, queue: { ms: 300 } }, down: { rateMbps: 2, delayMs: 20, queue: { ms: 300 } } },
  }),
  // Q4: reverse link dead 15-25 s; the datachannel rides the same link (own relay) beside it.
  'dead-reverse-delta': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'delta', rateKbps: 800, durationS: 35, fps: 30 }, link: DEAD_REVERSE, dcRateKbps: 800 }),
  'dead-reverse': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'key', rateKbps: 800, durationS: 35, fps: 30 }, link: DEAD_REVERSE, dcRateKbps: 800 }),
  'dead-reverse-append': () => ({ page: { codec: 'VP8', mode: 'append', prefix: 'delta', rateKbps: 800, durationS: 35, fps: 30 }, link: DEAD_REVERSE, dcRateKbps: 800 }),
  fps60: () => ({
    page: { codec: 'VP8', mode: 'replace', prefix: 'key', rateKbps: 1000, durationS: 10, fps: 60 },
    link: { up: { rateMbps: 2, delayMs: 20, queue: { ms: 300 } }, down: { rateMbps: 2, delayMs: 20, queue: { ms: 300 } } },
  }),
  gen120: () => ({
    page: { codec: 'VP8', mode: 'replace', prefix: 'key', rateKbps: 1000, durationS: 10, fps: 120, generator: true },
    link: { up: { rateMbps: 2, delayMs: 20, queue: { ms: 300 } }, down: { rateMbps: 2, delayMs: 20, queue: { ms: 300 } } },
  }),
  'att-follow-nopli': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'key', rateKbps: 600, followEstimate: 0.9, noPli: true, durationS: 50, fps: 30 }, link: attLink(), dcRateKbps: 600 }),
  'att-follow': () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'key', rateKbps: 600, followEstimate: 0.9, durationS: 50, fps: 30 }, link: attLink(), dcRateKbps: 600 }),
  att: () => ({ page: { codec: 'VP8', mode: 'replace', prefix: 'key', rateKbps: 600, durationS: 50, fps: 30 }, link: attLink(), dcRateKbps: 600 }),
};

async function relayFor(link: LinkPair, pathId: number, epochMs: number, seed: number): Promise<PathRelay> {
  const rng = new Rng(seed);
  return startPathRelay({ pathId, up: buildLink<Buffer>(link.up, rng), down: buildLink<Buffer>(link.down, new Rng(seed + 1)), epochMs });
}

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  if (names.length === 0 || names.includes('--list')) {
    console.log(`cases: ${Object.keys(CASES).join(' ')}`);
    return;
  }
  for (const n of names) if (!CASES[n]) throw new Error(`unknown case ${n}; cases: ${Object.keys(CASES).join(' ')}`);
  const outDir = join(REPO_ROOT, 'out/experiments/rtp-carrier');
  mkdirSync(outDir, { recursive: true });
  const server = await startPageServer();
  const browser = await launchChromium();
  try {
    for (const name of names) {
      const c = CASES[name]();
      const page = await browser.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') console.error(`[page] ${m.text()}`);
      });
      page.on('pageerror', (e) => console.error(`[page] ${e.message}`));
      await page.goto(server.url('tools/experiments/rtp-carrier/index.html'));
      await page.waitForFunction(() => typeof window.runCase === 'function', undefined, { timeout: 30_000 });
      const relays: PathRelay[] = [];
      const epochMs = performance.now();
      const cfg: CaseConfig = { ...c.page };
      if (c.link) {
        const r = await relayFor(c.link, 0, epochMs, 1);
        relays.push(r);
        cfg.relay = { portA: r.portA, portB: r.portB };
        if (c.dcRateKbps) {
          const r2 = await relayFor(c.link, 1, epochMs, 1);
          relays.push(r2);
          cfg.dc = { relay: { portA: r2.portA, portB: r2.portB }, rateKbps: c.dcRateKbps, maxBufferedBytes: 256 * 1024, messageBytes: 1000 };
        }
      }
      const pageStartMs = performance.now() - epochMs;
      const t = performance.now();
      const result = await page.evaluate((x) => window.runCase(x), cfg);
      const relayStats = relays.map((r) => {
        const st = r.stats();
        return { up: { ...st.up, queueDelay: { ...st.up.queueDelay, recentMs: undefined } }, down: { ...st.down, queueDelay: { ...st.down.queueDelay, recentMs: undefined } }, relay: st.relay };
      });
      await Promise.all(relays.map((r) => r.close()));
      await page.close();
      writeFileSync(join(outDir, `${name}.json`), JSON.stringify({ name, case: c, pageStartMs, wallS: (performance.now() - t) / 1000, relayStats, result }, null, 1));
      console.log(`${name}: done in ${((performance.now() - t) / 1000).toFixed(1)} s -> ${join(outDir, `${name}.json`)}`);
    }
  } finally {
    await browser.close();
    await server.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
