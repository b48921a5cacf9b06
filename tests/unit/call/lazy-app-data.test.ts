/**
 * src/call/lazy-app-data.ts: the app data channel loaded at first use keeps
 * AppDataChannel's synchronous contract before it loads (errors, seqs,
 * bounds), then hands over everything in order.
 */
import { describe, expect, it } from 'vitest';
import { MAX_EARLY_DATAGRAMS, LazyAppData } from '../../../src/call/lazy-app-data.js';
import { ManualClock } from '../../../src/core/clock.js';
import { AppDataChannel, AppDataError } from '../../../src/engine/app-data.js';
import type { AppDataOptions } from '../../../src/engine/app-data-types.js';

function setup(extra: Partial<AppDataOptions> = {}) {
  const clock = new ManualClock(1_000_000);
  const sent: Array<{ pathId: number; bytes: Uint8Array }> = [];
  const delivered: Array<string | Uint8Array> = [];
  const errors: Error[] = [];
  let resolve!: (c: typeof AppDataChannel) => void;
  let reject!: (e: Error) => void;
  let loads = 0;
  const load = () => {
    loads++;
    return new Promise<typeof AppDataChannel>((res, rej) => {
      resolve = res;
      reject = rej;
    });
  };
  const lazy = new LazyAppData({ clock, transmit: (pathId, bytes) => (sent.push({ pathId, bytes }), true), deliver: (d) => delivered.push(d), ...extra }, (e) => errors.push(e), load);
  return { clock, lazy, sent, delivered, errors, loads: () => loads, resolve: () => resolve(AppDataChannel), reject: (e: Error) => reject(e) };
}

const code = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return e instanceof AppDataError ? e.code : `not an AppDataError: ${String(e)}`;
  }
  return undefined;
};

describe('LazyAppData', () => {
  it('loads nothing until used, queues sends with their seqs, and hands them to the channel in order once loaded', async () => {
    const t = setup();
    t.lazy.setPathUp(0, true);
    expect(t.loads()).toBe(0);
    expect(t.lazy.send('a', true)).toBe(0);
    expect(t.lazy.send(new Uint8Array([1, 2]), true)).toBe(1);
    expect(t.lazy.send('u', false)).toBe(0); // unreliable seqs count on their own
    expect(t.loads()).toBe(1);
    expect(t.lazy.loaded).toBe(false);
    expect(t.sent).toEqual([]);
    expect(t.lazy.stats()).toMatchObject({ sent: 3, sentBytes: 4, inFlight: 2, inFlightBytes: 3 });
    expect(t.lazy.nextWakeUs()).toBe(Infinity);
    t.resolve();
    await Promise.resolve();
    await Promise.resolve();
    expect(t.lazy.loaded).toBe(true);
    expect(t.sent.length).toBe(3); // path 0 was up before the load: replayed
    expect(t.sent.every((s) => s.pathId === 0)).toBe(true);
    expect(t.lazy.stats()).toMatchObject({ sent: 3, inFlight: 2 });
    expect(t.lazy.send('b', true)).toBe(2); // the channel goes on from the front's seqs
  });

  it('throws the channel’s errors at once before it loads: bad data, too large, no path, window full', () => {
    const t = setup({ maxMessageBytes: 4, maxInFlightMessages: 2 });
    expect(code(() => t.lazy.send(42 as unknown as string, true))).toBe('bad-data');
    expect(code(() => t.lazy.send('12345', true))).toBe('too-large');
    expect(code(() => t.lazy.send('ok', false))).toBe('no-path');
    t.lazy.setPathUp(1, true);
    expect(code(() => t.lazy.send('ok', false))).toBeUndefined();
    t.lazy.removePath(1);
    expect(code(() => t.lazy.send('ok', false))).toBe('no-path');
    expect(code(() => t.lazy.send('1', true))).toBeUndefined();
    expect(code(() => t.lazy.send('2', true))).toBeUndefined();
    expect(code(() => t.lazy.send('3', true))).toBe('window-full');
  });

  it('holds early datagrams (bounded, the rest counted) and replays them once loaded', async () => {
    const t = setup();
    const msg = (seq: number) => ({ kind: 'appData' as const, appData: { seq, reliable: false, text: true, payload: new TextEncoder().encode(`m${seq}`), skip: false } });
    for (let i = 0; i < MAX_EARLY_DATAGRAMS + 10; i++) t.lazy.onMessage(0, msg(i));
    expect(t.loads()).toBe(1);
    expect(t.delivered).toEqual([]);
    expect(t.lazy.stats().dropped.bufferFull).toBe(10);
    t.resolve();
    await Promise.resolve();
    await Promise.resolve();
    expect(t.delivered.length).toBe(MAX_EARLY_DATAGRAMS);
    expect(t.delivered[0]).toBe('m0');
    expect(t.lazy.stats()).toMatchObject({ received: MAX_EARLY_DATAGRAMS, dropped: { bufferFull: 10 } });
  });

  it('reports a failed load with the messages it drops, and tries again on the next send', async () => {
    const t = setup();
    t.lazy.send('a', true);
    t.reject(new Error('chunk 404'));
    await Promise.resolve();
    await Promise.resolve();
    expect(t.errors.map((e) => e.message)).toEqual(['app data channel failed to load (1 message(s) not sent): chunk 404']);
    expect(t.lazy.stats().inFlight).toBe(0);
    expect(t.lazy.send('b', true)).toBe(0); // numbered as the channel will number it
    expect(t.loads()).toBe(2);
  });
});
