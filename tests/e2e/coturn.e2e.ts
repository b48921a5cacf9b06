/**
 * tools/harness/coturn.ts against the real turnserver (Debian's coturn, which .ci/run installs; the relays
 * e2e needs it too): a listening port some other socket already holds is not fatal. No browser.
 */
import { type Socket, createSocket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { startCoturn } from '../../tools/harness/coturn.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

describe('startCoturn', () => {
  it('starts below the ephemeral port range and moves to other ports when its first port is taken', async () => {
    // The default first slot (by pid), as startCoturn computes it; a socket takes its listening port first.
    const first = 20_000 + ((process.pid * 7) % 500) * 20;
    const squatter: Socket = createSocket('udp4');
    await new Promise<void>((res, rej) => {
      squatter.once('error', (e) => rej(new Error(`test setup: cannot hold 127.0.0.1:${first} (${e.message})`)));
      squatter.bind(first, '127.0.0.1', () => res());
    });
    cleanups.push(() => new Promise<void>((res) => squatter.close(() => res())));
    const lines: string[] = [];
    const set = await startCoturn(1, { log: (l) => lines.push(l) });
    cleanups.push(() => set.close());
    expect(set.relays[0].port).not.toBe(first);
    expect(set.relays[0].port).toBeGreaterThanOrEqual(20_000);
    expect(set.relays[0].relayPorts[1]).toBeLessThan(32_768);
    expect(lines.some((l) => /retrying on other ports/.test(l))).toBe(true);
  }, 30_000);
});
