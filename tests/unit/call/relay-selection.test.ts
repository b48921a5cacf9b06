/** RelaySelection (src/call/relay-selection.ts): the discounted UCB over ICE RTTs, on a fake clock and fake path RTTs. */
import { describe, expect, it } from 'vitest';
import { resolveRelaySelection } from '../../../src/call/relay-selection-config.js';
import { RelaySelection } from '../../../src/call/relay-selection.js';

/** Drive the paths over `seconds` of 1 s slots; rtt(relay, tS) gives a path's RTT on that relay. */
function run(sel: RelaySelection, start: number[], seconds: number, rtt: (relay: number, tS: number) => number) {
  const on = [...start];
  const switches: Array<{ tS: number; pathId: number; relay: number }> = [];
  for (let t = 1; t <= seconds; t++) {
    for (const s of sel.onSlot(t * 1000, (id) => ({ relay: on[id], rttMs: rtt(on[id], t), switching: false }))) {
      switches.push({ tS: t, ...s });
      on[s.pathId] = s.relay;
    }
  }
  return { on, switches };
}

describe('RelaySelection', () => {
  it('tries each relay once, settles on the fastest, moves off it once it got slow, and seldom retries it', () => {
    const sel = new RelaySelection([[0, 1]], 10_000, 0);
    const rtt = (relay: number, t: number) => (relay === 0 ? (t < 60 ? 30 : 400) : 100);
    const on: number[] = [];
    let cur = 0;
    const switches: Array<{ tS: number; relay: number }> = [];
    for (let t = 1; t <= 180; t++) {
      for (const s of sel.onSlot(t * 1000, () => ({ relay: cur, rttMs: rtt(cur, t), switching: false }))) {
        switches.push({ tS: t, relay: s.relay });
        cur = s.relay;
      }
      on.push(cur);
    }
    // Relay 1 tried after the first dwell, left by the bail-out 3 s later (a third of relay 0's reward).
    expect(switches.slice(0, 2)).toEqual([
      { tS: 10, relay: 1 },
      { tS: 13, relay: 0 },
    ]);
    // Stable while relay 0 was the fastest.
    expect(switches.filter((s) => s.tS > 13 && s.tS < 60)).toEqual([]);
    // Relay 0 is left within a slot of its first slow sample (its dwell long over).
    expect(switches.find((s) => s.tS >= 60)).toEqual({ tS: 60, relay: 1 });
    // Afterwards it is retried now and then (its best sample ever, §3.2), and left again by the bail-out.
    const slowShare = on.slice(60).filter((r) => r === 0).length / on.slice(60).length;
    expect(slowShare, JSON.stringify(switches)).toBeLessThan(0.15);
    // No switch sooner than the bail-out's 3 s after the previous one.
    for (let i = 1; i < switches.length; i++) expect(switches[i].tS - switches[i - 1].tS).toBeGreaterThanOrEqual(3);
  });

  it('keeps paths apart: each path its own relays and dwell; a single-relay path never switches', () => {
    const sel = new RelaySelection([[0, 2], [1]], 5000, 0);
    const { switches } = run(sel, [0, 1], 40, (relay) => [20, 20, 200][relay]);
    expect(switches.every((s) => s.pathId === 0 && (s.relay === 0 || s.relay === 2))).toBe(true);
    expect(switches[0]).toEqual({ tS: 5, pathId: 0, relay: 2 });
    expect(sel.describe(0).map((d) => d.relay)).toEqual([0, 2]);
    expect(sel.describe(0)[0].reward).toBeCloseTo(50, 0);
  });

  it('bails out of a relay that got slow early in the call, when the exploration term would keep it', () => {
    const sel = new RelaySelection([[0, 2]], 3000, 0);
    const { switches } = run(sel, [0], 40, (relay, t) => (relay === 0 ? (t < 15 ? 25 : 500) : 130));
    expect(switches.slice(0, 2).map((s) => s.relay)).toEqual([2, 0]);
    const off = switches.find((s) => s.tS >= 15);
    expect(off?.relay).toBe(2);
    expect(off!.tS).toBeLessThanOrEqual(16);
  });

  it('no sample, no decision during a switch or before the relay in use was measured', () => {
    const sel = new RelaySelection([[0, 1]], 0, 0);
    expect(sel.onSlot(1000, () => ({ relay: 0, switching: false }))).toEqual([]);
    expect(sel.onSlot(2000, () => ({ relay: 0, rttMs: 30, switching: true }))).toEqual([]);
    expect(sel.describe(0)[0].samples).toBe(0);
    expect(sel.onSlot(3000, () => ({ relay: 0, rttMs: 30, switching: false }))).toEqual([{ pathId: 0, relay: 1 }]);
  });

  it('checks its options', () => {
    expect(resolveRelaySelection('ucb', 2, 3)).toMatchObject({
      intervalMs: 1000,
      minDwellMs: 10_000,
      relaysOf: [
        [0, 1, 2],
        [0, 1, 2],
      ],
    });
    expect(() => resolveRelaySelection('ucb', 2, 0)).toThrow(/needs relays/);
    expect(() => resolveRelaySelection({ policy: 'ucb', relaysOf: [[0, 3]] }, 1, 3)).toThrow(/relaysOf\[0\]/);
    expect(() => resolveRelaySelection({ policy: 'ucb', relaysOf: [[1, 1]] }, 1, 3)).toThrow(/distinct/);
    expect(() => resolveRelaySelection({ policy: 'ucb', intervalMs: 0 }, 1, 3)).toThrow(/intervalMs/);
    expect(() => resolveRelaySelection({ policy: 'x' } as never, 1, 3)).toThrow(/policy/);
  });
});
