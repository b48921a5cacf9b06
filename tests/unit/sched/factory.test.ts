import { describe, expect, it } from 'vitest';
import type { ConvergeScheduler } from '../../../src/sched/converge.js';
import { SchedError } from '../../../src/sched/errors.js';
import { createScheduler, isSchedulerName, registerScheduler, resolveScheduler, schedulerNames } from '../../../src/sched/factory.js';
import { RoundRobinScheduler } from '../../../src/sched/roundrobin.js';
import type { Scheduler, SchedulerName } from '../../../src/sched/types.js';
import { lola, registerAllStrategies, roundrobin, SCHEDULER_NAMES } from '../../../src/strategies.js';

describe('scheduler registry before registerAllStrategies', () => {
  // Runs first in this file (vitest runs a file's tests in order, each file in its own module graph).
  it('has only the default, and names the way to get the others', () => {
    expect(schedulerNames()).toEqual(['converge']);
    expect(isSchedulerName('lola')).toBe(false);
    expect(() => createScheduler('lola')).toThrow(/multipath-rtc\/strategies/);
    // An entry works without registering it; an instance passes through.
    expect(resolveScheduler(lola).name).toBe('lola');
    const rr = new RoundRobinScheduler();
    expect(resolveScheduler(rr)).toBe(rr);
    expect(() => resolveScheduler({} as Scheduler)).toThrow(SchedError);
    registerScheduler(roundrobin);
    registerScheduler(roundrobin); // the same entry again: no-op
    expect(schedulerNames()).toEqual(['converge', 'roundrobin']);
    expect(() => registerScheduler('roundrobin', { summary: 'another', create: () => new RoundRobinScheduler() })).toThrow(/already registered/);
  });
});

describe('createScheduler', () => {
  it('builds every named scheduler', () => {
    registerAllStrategies();
    expect([...SCHEDULER_NAMES].sort()).toEqual(['aggdeliv', 'blest', 'converge', 'ecf', 'lola', 'minrtt', 'mrtp', 'mtput', 'overlay-ucb', 'roundrobin', 'single']);
    expect(schedulerNames()).toEqual(expect.arrayContaining([...SCHEDULER_NAMES]));
    for (const name of SCHEDULER_NAMES) {
      expect(createScheduler(name, { singlePath: 0 }).name).toBe(name);
    }
  });

  it('passes converge overrides', () => {
    const s = createScheduler('converge', { converge: { probeIntervalMs: 250 } }) as ConvergeScheduler;
    expect(s.config.probeIntervalMs).toBe(250);
    expect(s.config.reenableChecks).toBe(3);
  });

  it('throws coded errors for unknown names and a missing or bad singlePath', () => {
    const code = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(SchedError);
        return (e as SchedError).code;
      }
      return undefined;
    };
    expect(code(() => createScheduler('no-such' as SchedulerName))).toBe('unknown-scheduler');
    expect(code(() => createScheduler('single'))).toBe('missing-single-path');
    expect(code(() => createScheduler('single', { singlePath: 9 }))).toBe('invalid-path-id');
    expect(code(() => createScheduler('converge', { converge: { maxBoost: 0.5 } }))).toBe('invalid-config');
    expect(() => createScheduler('no-such' as SchedulerName)).toThrow(/unknown scheduler "no-such"/);
  });

  it('recognises scheduler names', () => {
    expect(isSchedulerName('minrtt')).toBe(true);
    expect(isSchedulerName('MINRTT')).toBe(false);
    expect(isSchedulerName(3)).toBe(false);
  });

  it('takes an app-registered scheduler by name, once, after the built-ins', () => {
    const make = (): Scheduler => {
      const inner = new RoundRobinScheduler();
      return { name: 'test-reverse', schedule: (b, p, n) => inner.schedule(b, p, n), onQoeFeedback: () => {}, isEnabled: (id) => inner.isEnabled(id) };
    };
    registerScheduler('test-reverse', { summary: 'test', create: make });
    expect(schedulerNames().at(-1)).toBe('test-reverse');
    expect(isSchedulerName('test-reverse')).toBe(true);
    expect(createScheduler('test-reverse').name).toBe('test-reverse');
    expect(() => registerScheduler('test-reverse', { summary: 'again', create: make })).toThrow(/already registered/);
    expect(() => registerScheduler('Bad Name', { summary: 'x', create: make })).toThrow(SchedError);
  });
});
