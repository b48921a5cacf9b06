import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { ConvergeScheduler } from '../../../src/sched/converge.js';
import { SchedError } from '../../../src/sched/errors.js';
import { PathManager } from '../../../src/sched/path-manager.js';
import type { PathEvent } from '../../../src/sched/types.js';
import { media, path } from './helpers.js';

function connected(ids: number[], clock: ManualClock): PathManager {
  const pm = new PathManager();
  for (const id of ids) {
    pm.addPath(id, clock.nowUs());
    pm.onTransportState(id, 'connected', clock.nowUs());
  }
  return pm;
}

describe('PathManager', () => {
  it('reports add and connect as events from tick, oldest first', () => {
    const clock = new ManualClock();
    const pm = connected([0, 2], clock);
    const ev = pm.tick(clock.nowUs());
    expect(ev.map((e) => `${e.type}:${e.pathId}`)).toEqual(['path-added:0', 'path-up:0', 'path-added:2', 'path-up:2']);
    expect(pm.tick(clock.nowUs())).toEqual([]);
    expect(pm.isUp(0)).toBe(true);
    expect(pm.isUp(1)).toBe(false);
    expect(pm.pathIds()).toEqual([0, 2]);
    expect(pm.addPath(0, 0)).toBe(false);
  });

  it('declares a silent path down within 1 s while data is sent, and up when reports resume', () => {
    const clock = new ManualClock();
    const pm = connected([0, 1], clock);
    pm.tick(clock.nowUs());
    const events: PathEvent[] = [];
    let lastReportUs = 0;
    // 0-2 s: both paths carry data every 10 ms and get reports every 50 ms.
    // From 2 s on, path 1 dies: no more reports, data still sent on it.
    for (let t = 0; t <= 4000; t += 10) {
      clock.setUs(t * 1000);
      pm.onDataSent(0, clock.nowUs());
      pm.onDataSent(1, clock.nowUs());
      if (t % 50 === 0) {
        pm.onReport(0, clock.nowUs());
        if (t < 2000) {
          pm.onReport(1, clock.nowUs());
          lastReportUs = clock.nowUs();
        }
      }
      events.push(...pm.tick(clock.nowUs()));
    }
    const down = events.filter((e) => e.type === 'path-down');
    expect(down).toHaveLength(1);
    expect(down[0].pathId).toBe(1);
    expect(down[0].reason).toMatch(/no receiver report/);
    expect(down[0].atUs - lastReportUs).toBeGreaterThanOrEqual(800_000);
    expect(down[0].atUs - lastReportUs).toBeLessThan(1_000_000);
    expect(pm.isUp(1)).toBe(false);
    expect(pm.isUp(0)).toBe(true);
    expect(pm.needsKeepalive(1)).toBe(true);

    clock.advanceMs(30);
    pm.onReport(1, clock.nowUs());
    const ev = pm.tick(clock.nowUs());
    expect(ev).toEqual([{ type: 'path-up', pathId: 1, atUs: clock.nowUs(), reason: 'receiver reports resumed' }]);
    expect(pm.isUp(1)).toBe(true);
    expect(pm.needsKeepalive(1)).toBe(false);
  });

  it('does not declare an idle path down (nothing sent, nothing to report)', () => {
    const clock = new ManualClock();
    const pm = connected([0], clock);
    pm.tick(0);
    clock.advanceMs(10_000);
    expect(pm.tick(clock.nowUs())).toEqual([]);
    expect(pm.isUp(0)).toBe(true);
    // Sending starts: the silence is measured from the first unreported send.
    pm.onDataSent(0, clock.nowUs());
    clock.advanceMs(799);
    expect(pm.tick(clock.nowUs())).toEqual([]);
    clock.advanceMs(1);
    expect(pm.tick(clock.nowUs()).map((e) => e.type)).toEqual(['path-down']);
  });

  it("takes the transport's 'new' state (a restarted RTCPeerConnection) as down, not as a bad call", () => {
    const clock = new ManualClock();
    const pm = connected([0], clock);
    pm.onTransportState(0, 'new', clock.nowUs());
    expect(pm.isUp(0)).toBe(false);
    expect(pm.transportState(0)).toBe('new');
    expect(pm.stats.invalidCalls).toBe(0);
  });

  it('follows transport failure and reconnection immediately', () => {
    const clock = new ManualClock();
    const pm = connected([0], clock);
    pm.tick(0);
    clock.advanceMs(5);
    pm.onTransportState(0, 'failed', clock.nowUs());
    expect(pm.isUp(0)).toBe(false);
    // Reports cannot bring a failed transport back.
    pm.onReport(0, clock.nowUs());
    expect(pm.isUp(0)).toBe(false);
    pm.onTransportState(0, 'connected', clock.nowUs());
    pm.removePath(0, clock.nowUs());
    expect(pm.tick(clock.nowUs()).map((e) => `${e.type}:${e.reason}`)).toEqual(['path-down:transport failed', 'path-up:transport connected', 'path-down:path removed', 'path-removed:path removed']);
    expect(pm.pathIds()).toEqual([]);
  });

  it('reports path-disabled / path-enabled by diffing scheduler.isEnabled', () => {
    const clock = new ManualClock();
    const pm = connected([0, 1], clock);
    pm.tick(0);
    const s = new ConvergeScheduler();
    const paths = [path(0, 15, 30), path(1, 5, 30)];
    s.schedule(media(40), paths, 0);
    expect(pm.tick(0, s)).toEqual([]);
    s.onQoeFeedback({ pathId: 1, alpha: -10, fcdMs: 10, seq: 1 }, 0);
    s.schedule(media(40), paths, 0);
    expect(pm.tick(1000, s).map((e) => `${e.type}:${e.pathId}`)).toEqual(['path-disabled:1']);
    for (let t = 20; t <= 1000; t += 20) s.schedule(media(10), paths, t * 1000); // Eq. 3 holds: re-enable
    expect(pm.tick(1_000_000, s).map((e) => `${e.type}:${e.pathId}`)).toEqual(['path-enabled:1']);
  });

  it('is bounded and counts misuse instead of crashing', () => {
    const pm = new PathManager({ maxEvents: 3 });
    expect(() => pm.addPath(8, 0)).toThrow(SchedError);
    expect(() => pm.addPath(-1, 0)).toThrow(/invalid path id/);
    for (let id = 0; id < 4; id++) pm.addPath(id, 0);
    const ev = pm.tick(0);
    expect(ev.map((e) => e.pathId)).toEqual([1, 2, 3]);
    expect(pm.stats.droppedEvents).toBe(1);
    pm.onReport(7, 0);
    pm.onDataSent(6, 0);
    pm.removePath(5, 0);
    expect(pm.stats.unknownPathCalls).toBe(3);
    pm.onTransportState(0, 'bogus' as never, 0);
    pm.onReport(0, Number.NaN);
    expect(pm.stats.invalidCalls).toBe(2);
    expect(() => new PathManager({ downAfterMs: 0 })).toThrow(SchedError);
  });
});
