import { describe, expect, it } from 'vitest';
import type { PathStats } from '../../../tools/emulator/relay.js';
import { checkPathUsage, downForWholeRun, formatPathTraffic, pathTraffic } from '../../../tools/harness/path-usage.js';
import { parseScenario } from '../../../sim/net/scenario.js';

const link = (delivered: number, bytes: number) =>
  ({
    sent: delivered,
    sentBytes: bytes,
    delivered,
    deliveredBytes: bytes,
    dropped: { queue: 0, loss: 0, blackhole: 0, invalid: 0 },
    droppedBytes: 0,
    queuedPackets: 0,
    queuedBytes: 0,
    propagatingPackets: 0,
    queueDelay: { count: 0, meanMs: 0, maxMs: 0, recentMs: [] },
  }) as unknown as PathStats['up'];
const stats = (upBytes: number[]): PathStats[] =>
  upBytes.map((b, i) => ({
    pathId: i,
    name: `p${i}`,
    up: link(Math.round(b / 1000), b),
    down: link(10, 1000),
    relay: { noPeerDrops: 0, sendErrors: 0, peerChanges: 0, sourcesA: 0, sourcesB: 0, natDrops: 0, natMappings: 0 },
  }));
const scenario = (downPeriods: Array<Array<[number, number]>> = [[], []]) =>
  parseScenario({ name: 't', paths: downPeriods.map((d, i) => ({ name: `p${i}`, up: { rateMbps: 5, delayMs: 20, ...(d.length ? { downPeriods: d } : {}) } })) }, '/');

describe('path usage check', () => {
  it('shares come from relay bytes delivered', () => {
    const t = pathTraffic(stats([3_000_000, 1_000_000]));
    expect(t.map((p) => p.sharePct)).toEqual([75, 25]);
    expect(formatPathTraffic(t)[1]).toContain('25% of media');
  });

  it('flags an enabled path that carried nothing (the dead second path), and passes when both carry', () => {
    const dead = checkPathUsage(pathTraffic(stats([5_000_000, 0])), scenario(), [0, 1], 20);
    expect(dead.ok).toBe(false);
    expect(dead.problems).toHaveLength(1);
    expect(dead.problems[0]).toMatch(/^path 1 \(p1\) carried 0\.00% of the media/);
    expect(checkPathUsage(pathTraffic(stats([5_000_000, 200_000])), scenario(), [0, 1], 20).ok).toBe(true);
  });

  it('flags below 1 % (not at 1 %), and nothing at all delivered flags every enabled path', () => {
    expect(checkPathUsage(pathTraffic(stats([9_950_000, 50_000])), scenario(), [0, 1], 20).ok).toBe(false); // 0.5 %
    expect(checkPathUsage(pathTraffic(stats([9_900_000, 100_000])), scenario(), [0, 1], 20).ok).toBe(true); // 1 %
    expect(checkPathUsage(pathTraffic(stats([0, 0])), scenario(), [0, 1], 20).problems).toHaveLength(2);
  });

  it('only checks enabled paths; a path blackholed for the whole run is exempt, a partly blackholed one is not', () => {
    expect(checkPathUsage(pathTraffic(stats([5_000_000, 0])), scenario(), [0], 20).ok).toBe(true); // single:0
    expect(checkPathUsage(pathTraffic(stats([0, 5_000_000])), scenario(), [0], 20).ok).toBe(false);
    const s = scenario([
      [],
      [
        [0, 12],
        [10, 30],
      ],
    ]);
    expect(downForWholeRun(s, 1, 20)).toBe(true);
    expect(checkPathUsage(pathTraffic(stats([5_000_000, 0])), s, [0, 1], 20)).toMatchObject({ ok: true, checked: [0] });
    const partly = scenario([[], [[5, 15]]]);
    expect(downForWholeRun(partly, 1, 20)).toBe(false);
    expect(checkPathUsage(pathTraffic(stats([5_000_000, 0])), partly, [0, 1], 20).ok).toBe(false);
  });

  it('a path without relay counters is a problem, not a pass', () => {
    expect(checkPathUsage(pathTraffic(stats([5_000_000])), scenario(), [0, 1], 20).problems[0]).toMatch(/no relay counters/);
  });
});
