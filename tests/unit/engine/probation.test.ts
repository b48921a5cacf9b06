/**
 * SenderEngineConfig.fallbackEstablishMs / probation (SenderPaths.isDemoted):
 * a path whose reports come in bursts with long silences between (an LTE
 * downlink that delivers a packet a second) is live for a few hundred ms
 * after each burst. It must neither bench a path the hysteresis demoted but
 * which reports steadily, nor (with probation) take media in those moments
 * while a path that has been reporting steadily can carry the call.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { resolveSenderConfig } from '../../../src/engine/sender-config.js';
import { SenderEngine } from '../../../src/engine/sender.js';
import { makeCall, type PathSpec } from './call-helper.js';

/** Reverse direction of a path dead for 800 ms in every second from `fromMs`: its reports arrive in 200 ms bursts. */
function burstyReports(fromMs: number, toMs: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let t = fromMs; t < toMs; t += 1000) out.push([t, t + 800]);
  return out;
}

/** A 3 Mbps call over `paths` with sender options `extra`: the 100 ms steps in [fromMs, toMs) in which path 0 was benched. */
function benchedSteps(paths: PathSpec[], extra: Record<string, unknown>, fromMs: number, toMs: number): number {
  const c = makeCall(paths, { extra: { maxBitrateBps: 3_000_000, ...extra } });
  c.run(fromMs);
  let n = 0;
  for (let t = fromMs; t < toMs; t += 100) {
    c.run(100);
    if (c.sender.stats().paths[0].demoted) n++;
  }
  return n;
}

describe('sender: paths whose reports come in bursts', () => {
  it('probation: a path live only in short bursts gets (almost) no media while a steadily reporting path carries the call', () => {
    const paths: PathSpec[] = [
      { rateMbps: 6, delayMs: 40 },
      { rateMbps: 6, delayMs: 20, reverseDown: burstyReports(3000, 12_000) },
    ];
    const media1 = (extra: { fallbackEstablishMs?: number; probation?: boolean }): number => {
      const c = makeCall(paths, { extra: { maxBitrateBps: 3_000_000, ...extra } });
      c.run(5000);
      const m = c.sender.stats().paths[1].mediaPacketsSent;
      c.run(6000);
      return c.sender.stats().paths[1].mediaPacketsSent - m;
    };
    const before = media1({ fallbackEstablishMs: 0 });
    const after = media1({}); // the defaults: fallbackEstablishMs 1000, probation on
    expect(before).toBeGreaterThan(100);
    expect(after).toBeLessThan(0.2 * before);
  });

  it('fallbackEstablishMs: a demoted path that reports steadily is not benched for a path that is live only in bursts', () => {
    const paths: PathSpec[] = [
      // Path 0 fails once (both directions, 3.0-3.5 s): the hysteresis demotes it for its hold (3 s clean).
      { rateMbps: 6, delayMs: 40, down: [[3000, 3500]] },
      { rateMbps: 6, delayMs: 20, reverseDown: burstyReports(3000, 12_000) },
    ];
    /** 100 ms steps (3.6-7 s, path 0 reporting again) in which path 0 was benched. */
    const benched0 = (fallbackEstablishMs: number): number => benchedSteps(paths, { pathHysteresis: { holdMs: 3000 }, fallbackEstablishMs }, 3600, 7000);
    expect(benched0(0)).toBeGreaterThan(5);
    expect(benched0(1000)).toBe(0);
  });
});

describe('sender: probation after a feedback gap, next to a weak backup', () => {
  it('probationMinAltFraction: a strong path whose reports resume is not benched for a backup estimated far below it', () => {
    const paths: PathSpec[] = [
      // Path 0 carries the call; its reverse direction (reports) stalls for 600 ms, its forward direction delivers.
      { rateMbps: 6, delayMs: 60, reverseDown: [[6000, 6600]] },
      // A weak backup with a shorter delay, so that its SRTT stays an alternative's (SenderPaths.isDemoted).
      { rateMbps: 0.3, delayMs: 10 },
    ];
    /** 100 ms steps (6.7-7.5 s, path 0 reporting again) in which path 0 was benched. */
    // gapMinAltFraction 0: probation's own rule (the feedback-gap rule would keep path 0 too).
    const benched0 = (probationMinAltFraction: number): number => benchedSteps(paths, { probationMinAltFraction, gapMinAltFraction: 0 }, 6700, 7500);
    expect(benched0(0)).toBeGreaterThan(3);
    expect(benched0(0.5)).toBe(0);
    expect(benched0(Number.NaN)).toBeGreaterThan(3); // a bad fraction acts as 0 (off)
  });
});

describe('sender: a feedback gap next to a weak backup (gapMinAltFraction)', () => {
  // Path 0 carries the call; its reverse direction (reports) stalls for 400 ms (suspect, not down: the
  // path manager's downAfterMs is 500 ms), its forward direction delivers. Path 1 is a weak backup.
  const paths: PathSpec[] = [
    { rateMbps: 6, delayMs: 60, reverseDown: [[6000, 6400]] },
    { rateMbps: 0.3, delayMs: 10 },
  ];
  /** Media packets path 0 / path 1 were given in 6.0-7.5 s, and the mean encoder target (bps) then. */
  const gap = (gapMinAltFraction: number): { media0: number; media1: number; meanTargetBps: number } => {
    const c = makeCall(paths, { extra: { maxBitrateBps: 3_000_000, gapMinAltFraction } });
    c.run(6000);
    const before = c.sender.stats().paths.map((p) => p.mediaPacketsSent);
    let sum = 0;
    for (let t = 0; t < 1500; t += 50) {
      c.run(50);
      sum += c.sender.targetBitrateBps();
    }
    const after = c.sender.stats().paths.map((p) => p.mediaPacketsSent);
    return { media0: after[0] - before[0], media1: after[1] - before[1], meanTargetBps: sum / 30 };
  };

  it('keeps the silent strong path carrying the call and the encoder target up', () => {
    const off = gap(0);
    const on = gap(0.5);
    // Off: the call moves to the 0.3 Mbps backup while path 0 is suspect, then probation benches path 0.
    expect(on.meanTargetBps).toBeGreaterThan(2 * off.meanTargetBps);
    expect(on.media0).toBeGreaterThan(2 * off.media0);
    expect(on.media1).toBeLessThan(off.media1);
  });

  it('does not keep a path whose packets sent in the silence the receiver NACKs (a blackhole of both directions)', () => {
    /** Media packets path 0 was given in 6.2-6.5 s (its reports stop at ~6.0 s either way). */
    const media0 = (spec: PathSpec): number => {
      const c = makeCall([spec, paths[1]], { extra: { maxBitrateBps: 3_000_000, gapMinAltFraction: 0.5 } });
      c.run(6200);
      const m = c.sender.stats().paths[0].mediaPacketsSent;
      c.run(300);
      return c.sender.stats().paths[0].mediaPacketsSent - m;
    };
    const feedbackGap = media0(paths[0]);
    const blackhole = media0({ rateMbps: 6, delayMs: 60, down: [[6000, 6400]] });
    expect(feedbackGap).toBeGreaterThan(20);
    expect(blackhole).toBeLessThan(0.5 * feedbackGap);
  });

  it('does not keep a silent path whose alternative can carry the call', () => {
    const strong: PathSpec[] = [paths[0], { rateMbps: 6, delayMs: 10 }];
    const benched = (gapMinAltFraction: number): number => benchedSteps(strong, { gapMinAltFraction }, 6500, 7300);
    expect(benched(0.5)).toBeGreaterThan(3);
    expect(benched(0.5)).toBe(benched(0));
  });
});

describe('sender: a clean return ends probation (cleanReturn)', () => {
  // Path 0 carries the call; its reports are held for 600 ms (down after 500 ms; an LTE downlink stall, the
  // backlog arrives at its end) while its forward direction delivers every packet. Path 1 is a weak backup
  // with a shorter delay (an alternative for SenderPaths.isDemoted).
  const gapPaths: PathSpec[] = [
    { rateMbps: 6, delayMs: 60, reverseStall: [[6000, 6600]] },
    { rateMbps: 0.3, delayMs: 10 },
  ];
  /** 100 ms steps (6.8-7.5 s, path 0 reporting again) in which path 0 was benched; gapMinAltFraction 0 isolates probation. */
  const benched0 = (paths: PathSpec[], cleanReturn: boolean): number => benchedSteps(paths, { cleanReturn, gapMinAltFraction: 0 }, 6800, 7500);

  it('a path back from a feedback gap with its packets delivered is not benched', () => {
    expect(benched0(gapPaths, false)).toBeGreaterThan(3);
    expect(benched0(gapPaths, true)).toBe(0);
  });

  it('a path back from a blackhole (its packets lost) stays on probation', () => {
    const blackhole: PathSpec[] = [{ rateMbps: 6, delayMs: 60, down: [[6000, 6600]] }, gapPaths[1]];
    expect(benched0(blackhole, true)).toBeGreaterThan(3);
    expect(benched0(blackhole, true)).toBe(benched0(blackhole, false));
  });

  it('a weaker path back from a feedback gap stays on probation next to a stronger live path', () => {
    // Path 1 (4 Mbps) carries a share whose backlog's reports, 200 ms apart, resolve 20+ packets each (a
    // clean return) next to a 20 Mbps path 0 estimated far above it.
    const paths: PathSpec[] = [
      { rateMbps: 20, delayMs: 40 },
      { rateMbps: 4, delayMs: 20, reverseStall: [[6000, 6600]] },
    ];
    /** 100 ms steps (6.8-7.5 s) in which path 1 was benched. */
    const benched1 = (cleanReturn: boolean): number => {
      const c = makeCall(paths, { extra: { maxBitrateBps: 8_000_000, cleanReturn }, receiver: { reportIntervalMs: 200 } });
      c.run(6800);
      let n = 0;
      for (let t = 6800; t < 7500; t += 100) {
        c.run(100);
        if (c.sender.stats().paths[1].demoted) n++;
      }
      return n;
    };
    expect(benched1(false)).toBeGreaterThan(3);
    expect(benched1(true)).toBe(benched1(false));
  });

  it('a path live only in short bursts stays on probation', () => {
    const paths: PathSpec[] = [
      { rateMbps: 6, delayMs: 40 },
      { rateMbps: 6, delayMs: 20, reverseDown: burstyReports(3000, 12_000) },
    ];
    const media1 = (cleanReturn: boolean): number => {
      const c = makeCall(paths, { extra: { maxBitrateBps: 3_000_000, cleanReturn } });
      c.run(5000);
      const m = c.sender.stats().paths[1].mediaPacketsSent;
      c.run(6000);
      return c.sender.stats().paths[1].mediaPacketsSent - m;
    };
    expect(media1(true)).toBeLessThanOrEqual(media1(false) + 5);
  });
});

describe('sender: a feedback gap past the path manager down time (gapKeepMs)', () => {
  // Path 0 carries the call; its reports are held for 900 ms (down after 500 ms) while its forward
  // direction delivers. Path 1 is a weak backup (below the gap rule's default 0.1 of path 0's rate).
  const weak: PathSpec = { rateMbps: 0.3, delayMs: 10 };
  /** Media packets path 0 was given in 6.55-6.85 s (past its 500 ms down time, inside the 900 ms silence). */
  const media0 = (spec: PathSpec, gapKeepMs: number): number => {
    const c = makeCall([spec, weak], { extra: { maxBitrateBps: 3_000_000, gapKeepMs } });
    c.run(6550);
    const m = c.sender.stats().paths[0].mediaPacketsSent;
    c.run(300);
    return c.sender.stats().paths[0].mediaPacketsSent - m;
  };

  it('keeps the silent strong path carrying the call past its down time', () => {
    const gap: PathSpec = { rateMbps: 6, delayMs: 60, reverseStall: [[6000, 6900]] };
    const off = media0(gap, 0);
    const on = media0(gap, 1000);
    // The congestion-window pushback holds the encoder target low in the silence: few packets, but on path 0.
    expect(on).toBeGreaterThanOrEqual(5);
    expect(off).toBeLessThanOrEqual(1);
  });

  it('does not keep a path whose forward direction is dead too (the receiver NACKs what it sent)', () => {
    const gap = media0({ rateMbps: 6, delayMs: 60, reverseStall: [[6000, 6900]] }, 1000);
    const blackhole = media0({ rateMbps: 6, delayMs: 60, down: [[6000, 6900]] }, 1000);
    expect(blackhole).toBeLessThan(0.3 * gap);
  });
});

describe('sender: clean return and the feedback-gap keep are on by default (stop 37)', () => {
  it('defaults: cleanReturn true, gapKeepMs 1000 (a silent strong path still carries the call at 6.55-6.85 s)', () => {
    expect(resolveSenderConfig({ clock: new ManualClock() }).cleanReturn).toBe(true);
    const spec: PathSpec = { rateMbps: 6, delayMs: 60, reverseStall: [[6000, 6900]] };
    const c = makeCall([spec, { rateMbps: 0.3, delayMs: 10 }], { extra: { maxBitrateBps: 3_000_000 } });
    c.run(6550);
    const m = c.sender.stats().paths[0].mediaPacketsSent;
    c.run(300);
    expect(c.sender.stats().paths[0].mediaPacketsSent - m).toBeGreaterThanOrEqual(5);
  });

  it('gapKeepMs must be a finite number of ms >= 0', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new SenderEngine({ clock: new ManualClock(), scheduler: 'converge', fec: 'none', gapKeepMs: bad })).toThrow(/gapKeepMs must be a finite number of ms >= 0/);
    }
    expect(() => new SenderEngine({ clock: new ManualClock(), scheduler: 'converge', fec: 'none', gapKeepMs: 0 })).not.toThrow();
  });
});
