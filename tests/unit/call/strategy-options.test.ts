/**
 * Issue 15 "options accept a name or an instance", issue 14 item 4 (bundle):
 * only the default strategies are registered until an app opts in; a call
 * and a sender engine take a registered name or an entry of
 * src/strategies.ts; an unknown name is a CallError 'bad-options' up front.
 * This file must not call registerAllStrategies (each test file has its own
 * module graph, so the registries start with the defaults here).
 */
import { describe, expect, it } from 'vitest';
import { gcc, registerEstimator } from '../../../src/cc/registry.js';
import type { BandwidthEstimator } from '../../../src/cc/types.js';
import { CallError, MultipathCall } from '../../../src/call/multipath-call.js';
import { ManualClock } from '../../../src/core/clock.js';
import { SenderEngine } from '../../../src/engine/sender.js';
import type { PathSink } from '../../../src/engine/types.js';
import { fecPolicyNames } from '../../../src/fec/factory.js';
import { registerScheduler, schedulerNames } from '../../../src/sched/factory.js';
import { lola, single, webrtcTableFec } from '../../../src/strategies.js';

const base = { signallingUrl: 'ws://127.0.0.1:1', room: 'r' };

function badOptions(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CallError);
    expect((e as CallError).code).toBe('bad-options');
    return (e as Error).message;
  }
  throw new Error('did not throw');
}

describe('strategy options', () => {
  it('registers only the defaults until the app opts in', () => {
    expect(schedulerNames()).toEqual(['converge']);
    expect(fecPolicyNames()).toEqual(['path', 'none']);
  });

  it('rejects an unregistered name in the constructor, naming the way to opt in', () => {
    expect(badOptions(() => new MultipathCall({ ...base, scheduler: 'lola' }))).toMatch(/scheduler: "lola" is not registered.*multipath-rtc\/strategies.*registerScheduler/);
    expect(badOptions(() => new MultipathCall({ ...base, fec: 'webrtc-table' }))).toMatch(/fec: "webrtc-table" is not registered.*registerFecPolicy/);
    expect(badOptions(() => new MultipathCall({ ...base, estimator: 'bbr' }))).toMatch(/estimator: "bbr"/);
    expect(badOptions(() => new MultipathCall({ ...base, scheduler: {} as never }))).toMatch(/scheduler/);
  });

  it('takes entries without registering them, and names once registered', () => {
    new MultipathCall({ ...base, scheduler: lola, fec: webrtcTableFec, estimator: gcc }).close();
    expect(schedulerNames()).toEqual(['converge']);
    registerScheduler(lola);
    new MultipathCall({ ...base, scheduler: 'lola' }).close();
  });

  it('a sender engine builds from names, entries and instances', () => {
    const clock = new ManualClock(0);
    const fromEntries = new SenderEngine({ clock, scheduler: single, singlePath: 1, fec: webrtcTableFec });
    expect(fromEntries.schedulerName).toBe('single');
    expect(fromEntries.fecPolicyName).toBe('webrtc-table');
    expect(() => new SenderEngine({ clock, scheduler: single })).toThrow(/singlePath/);
    expect(new SenderEngine({ clock }).schedulerName).toBe('converge');

    const sink = { send: () => true, bufferedAmount: () => 0 } as unknown as PathSink;
    let built = 0;
    const counting = {
      name: 'counting-gcc',
      summary: 'gcc, counted',
      create: (o: { startBps: number; maxBps: number }): BandwidthEstimator => {
        built++;
        return gcc.create(o);
      },
    };
    const s = new SenderEngine({ clock, estimator: counting });
    s.addPath(0, sink);
    expect(built).toBe(1);
    registerEstimator(counting);
    const t = new SenderEngine({ clock, estimator: 'counting-gcc' });
    t.addPath(0, sink);
    t.addPath(1, sink);
    expect(built).toBe(3);
  });
});
