/** RouteHandover (src/call/route-handover.ts): the phases of an ICE restart and the optional hold, on fake timers. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RouteHandover, type RouteHandoverOptions, type RouteSwitchInfo } from '../../../src/call/route-handover.js';
import type { SelectedPair } from '../../../src/transport/types.js';

const pair = (port: number): SelectedPair => ({
  id: 'CP1',
  local: { address: '127.0.0.1', port, protocol: 'udp', type: 'relay' },
  remote: { address: '10.0.0.1', port: 9, protocol: 'udp', type: 'host' },
});

function setup(o: Partial<RouteHandoverOptions> = {}) {
  let now = 0;
  const current = new Map<number, SelectedPair | undefined>([
    [0, pair(1000)],
    [1, pair(2000)],
  ]);
  const holds: string[] = [];
  const reports: Array<[number, RouteSwitchInfo]> = [];
  const switched: number[] = [];
  let othersUp = true;
  const h = new RouteHandover({
    selectedPair: async (id) => current.get(id),
    knownPair: (id) => current.get(id),
    othersUp: () => othersUp,
    hold: (id, held) => holds.push(`${id}:${held}`),
    onSwitched: (id) => switched.push(id),
    report: (id, info) => reports.push([id, info]),
    nowMs: () => now,
    ...o,
  });
  const advance = async (ms: number) => {
    now += ms;
    await vi.advanceTimersByTimeAsync(ms);
  };
  return { h, current, holds, reports, switched, advance, setOthersUp: (v: boolean) => (othersUp = v) };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('RouteHandover', () => {
  it('reports started, then switched once the local candidate of the selected pair changed; no hold by default', async () => {
    const s = setup();
    s.h.begin(0, true);
    expect(s.reports).toEqual([[0, { phase: 'started', local: true, held: false, elapsedMs: 0 }]]);
    // Same route, other stats id and remote form: not a switch.
    s.current.set(0, { ...pair(1000), id: 'CP9', remote: { address: '10.0.0.1', port: 9, protocol: 'udp', type: 'prflx' } });
    await s.advance(300);
    expect(s.h.isSwitching(0)).toBe(true);
    s.current.set(0, pair(1077));
    await s.advance(100);
    expect(s.h.isSwitching(0)).toBe(false);
    expect(s.reports[1][1]).toMatchObject({ phase: 'switched', local: true, held: false, elapsedMs: 400, pair: pair(1077) });
    expect(s.switched).toEqual([0]);
    expect(s.holds).toEqual([]);
  });

  it('hold: the path is out of the schedule until the new pair, only while another path is up', async () => {
    const s = setup({ enabled: true });
    s.h.begin(0, false);
    expect(s.h.isHeld(0)).toBe(true);
    expect(s.holds).toEqual(['0:true']);
    s.current.set(0, pair(1500));
    await s.advance(100);
    expect(s.h.isHeld(0)).toBe(false);
    expect(s.holds).toEqual(['0:true', '0:false']);
    expect(s.reports.map(([, r]) => `${r.phase} ${r.held}`)).toEqual(['started true', 'switched true']);
    // The only path up is never held; a held path is released when the others go down.
    s.setOthersUp(false);
    s.h.begin(1, true);
    expect(s.h.isHeld(1)).toBe(false);
    s.setOthersUp(true);
    s.h.begin(0, true);
    expect(s.h.isHeld(0)).toBe(true);
    s.setOthersUp(false);
    s.h.onOthersChanged();
    expect(s.h.isHeld(0)).toBe(false);
    expect(s.h.isSwitching(0)).toBe(true);
  });

  it('times out after maxHoldMs without a new pair, and forget / close stop without reports', async () => {
    const s = setup({ enabled: true, maxHoldMs: 2000 });
    s.h.begin(0, true);
    await s.advance(1999);
    expect(s.h.isSwitching(0)).toBe(true);
    await s.advance(1);
    expect(s.h.isSwitching(0)).toBe(false);
    expect(s.reports[1][1]).toMatchObject({ phase: 'timed-out', held: true, elapsedMs: 2000 });
    expect(s.holds).toEqual(['0:true', '0:false']);
    expect(s.switched).toEqual([]);
    s.h.begin(1, true);
    s.h.forget(1);
    expect(s.holds.at(-1)).toBe('1:false');
    s.h.begin(0, true);
    s.h.close();
    await s.advance(5000);
    expect(s.reports.map(([, r]) => r.phase)).toEqual(['started', 'timed-out', 'started', 'started']);
  });

  it('learns the old pair from the first read when none was known', async () => {
    const s = setup({ knownPair: () => undefined });
    s.h.begin(0, true);
    await s.advance(500);
    expect(s.h.isSwitching(0)).toBe(true);
    s.current.set(0, pair(1234));
    await s.advance(100);
    expect(s.reports.at(-1)?.[1].phase).toBe('switched');
  });
});
