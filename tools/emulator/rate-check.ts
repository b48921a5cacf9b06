/**
 * Emulator fidelity check: offer more than a path's capacity through a real
 * {@link startPathRelay} on 127.0.0.1 and measure what comes out. A timing
 * measurement on a real clock: on a loaded machine the event loop delivers
 * late and the measured rate falls, so callers that assert on it keep wide
 * margins (the unit test) and the precise number is printed by
 * `npm run bench:micro`.
 */
import { type Socket, createSocket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { Rng } from '../../src/core/rng.js';
import { Link } from '../../sim/net/link.js';
import { constantRate } from '../../sim/net/traces.js';
import { DEFAULT_OVERHEAD_BYTES, type PathRelayStats, startPathRelay } from './relay.js';

export interface SaturatedRateOptions {
  /** Link capacity, bps. */
  capacityBps: number;
  /** Offered load, bps (above the capacity so the drop-tail queue fills). */
  offeredBps: number;
  /** One-way delay, ms. */
  delayMs: number;
  /** Drop-tail queue, ms at the capacity. */
  queueMs: number;
  /** Whole run, ms; the rate is measured over [500 ms, durationMs - 100 ms]. */
  durationMs: number;
}

export interface SaturatedRateResult {
  /** Delivered rate in the measurement window, bps (IP/UDP overhead counted as the relay charges it). */
  deliveredBps: number;
  /** The relay's counters at the end (queue drops, send errors). */
  stats: PathRelayStats;
}

async function udpPeer(): Promise<Socket> {
  const s = createSocket('udp4');
  await new Promise<void>((res) => s.bind(0, '127.0.0.1', () => res()));
  return s;
}

/**
 * Runs one saturated path for `durationMs` real milliseconds and returns the
 * delivered rate. Sockets and the relay are closed before it resolves.
 * Throws when the window is empty (`durationMs` < 700).
 */
export async function measureSaturatedRate(opts: SaturatedRateOptions): Promise<SaturatedRateResult> {
  const from = 500;
  const to = opts.durationMs - 100;
  if (to <= from) throw new Error(`measureSaturatedRate: durationMs ${opts.durationMs} leaves no measurement window`);
  const up = new Link<Buffer>({ capacity: constantRate(opts.capacityBps), delay: opts.delayMs, queue: { ms: opts.queueMs } }, new Rng(1));
  const down = new Link<Buffer>({ capacity: constantRate(100e6), delay: opts.delayMs }, new Rng(2));
  const relay = await startPathRelay({ pathId: 0, up, down });
  const a = await udpPeer();
  const b = await udpPeer();
  try {
    const payload = 1172;
    const wire = payload + DEFAULT_OVERHEAD_BYTES;
    const arrivals: number[] = [];
    b.on('message', () => arrivals.push(performance.now()));
    relay.setPeer('b', '127.0.0.1', b.address().port);
    const t0 = performance.now();
    let sentBytes = 0;
    const buf = Buffer.alloc(payload);
    await new Promise<void>((res) => {
      const iv = setInterval(() => {
        const el = performance.now() - t0;
        if (el >= opts.durationMs) {
          clearInterval(iv);
          res();
          return;
        }
        while (sentBytes * 8 < (opts.offeredBps * el) / 1000) {
          a.send(buf, relay.portA, '127.0.0.1');
          sentBytes += wire;
        }
      }, 2);
    });
    const n = arrivals.filter((t) => t >= t0 + from && t < t0 + to).length;
    return { deliveredBps: (n * wire * 8) / ((to - from) / 1000), stats: relay.stats() };
  } finally {
    await Promise.all([a, b].map((s) => new Promise<void>((res) => s.close(() => res()))));
    await relay.close();
  }
}
