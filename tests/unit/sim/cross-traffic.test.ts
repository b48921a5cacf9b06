/**
 * Cross traffic (sim/cross-traffic.ts), its scenario validation
 * (sim/net/scenario.ts `crossTraffic`) and the fairness metrics
 * (sim/fairness.ts): the TCP models fill a bottleneck alone and share it
 * between themselves, CBR keeps its rate, bad specs get JSON-path errors,
 * Jain's index reproduces the MPRTP paper's Table V/VI numbers, and a
 * simulated call with cross traffic reports both flows.
 */
import { describe, expect, it, vi } from 'vitest';
import { FractalEstimator } from '../../../src/cc/fractal.js';
import { Rng } from '../../../src/core/rng.js';
import { type CrossFlow, type CrossPacket, createCrossFlow } from '../../../sim/cross-traffic.js';
import { fairness, fairnessChecks, jainIndex, rateErrorPct } from '../../../sim/fairness.js';
import { Link } from '../../../sim/net/link.js';
import { type CrossTrafficSpec, ScenarioError, parseScenario } from '../../../sim/net/scenario.js';
import { constantRate } from '../../../sim/net/traces.js';
import { simulate } from '../../../sim/simulator.js';

/** Run model flows alone on one path (up: rateBps, delayMs, queueMs; down: 100 Mbps) for durationS. */
function runFlows(specs: CrossTrafficSpec[], o: { rateBps: number; delayMs: number; queueMs: number; durationS: number }) {
  const up = new Link<CrossPacket>({ capacity: constantRate(o.rateBps), delay: o.delayMs, queue: { ms: o.queueMs } }, new Rng(1));
  const down = new Link<CrossPacket>({ capacity: constantRate(100e6), delay: o.delayMs }, new Rng(2));
  const endUs = o.durationS * 1e6;
  const flows: CrossFlow[] = specs.map((s, i) => createCrossFlow(i, s, { up, down, wrap: (p) => p }, endUs));
  let now = 0;
  while (now < endUs) {
    for (const f of flows) if (f.nextWakeUs() <= now) f.onTimer(now);
    for (const d of up.poll(now)) flows[d.item.x].onDelivered(d.item, now);
    for (const d of down.poll(now)) flows[d.item.x].onDelivered(d.item, now);
    let next = now + 1000;
    for (const f of flows) next = Math.min(next, f.nextWakeUs());
    next = Math.min(next, up.nextEventUs() ?? Infinity, down.nextEventUs() ?? Infinity);
    now = Math.max(next, now + 1);
  }
  return { flows: flows.map((f) => f.stats()), link: up.stats() };
}

describe('cross-traffic models', () => {
  it.each(['reno', 'cubic'] as const)('%s alone fills a 2 Mbps / 100 ms / 300 ms-queue bottleneck and sees drop-tail losses', (kind) => {
    const r = runFlows([{ path: 0, kind, startS: 0 }], { rateBps: 2e6, delayMs: 50, queueMs: 300, durationS: 60 });
    const bps = (r.flows[0].bytesDelivered * 8) / 60;
    expect(bps).toBeGreaterThan(0.85 * 2e6);
    expect(bps).toBeLessThanOrEqual(2e6 * 1.001);
    expect(r.flows[0].lossEvents).toBeGreaterThan(3);
    expect(r.link.dropped.queue).toBeGreaterThan(0);
    expect(r.flows[0].timeouts).toBeLessThan(5);
  });

  it('two Reno flows share the bottleneck (Jain >= 0.9) and CUBIC does not starve Reno', () => {
    const rr = runFlows(
      [
        { path: 0, kind: 'reno', startS: 0 },
        { path: 0, kind: 'reno', startS: 5 },
      ],
      { rateBps: 4e6, delayMs: 20, queueMs: 100, durationS: 90 },
    );
    expect(jainIndex(rr.flows.map((f) => f.bytesDelivered))).toBeGreaterThan(0.9);
    const rc = runFlows(
      [
        { path: 0, kind: 'reno', startS: 0 },
        { path: 0, kind: 'cubic', startS: 0 },
      ],
      { rateBps: 4e6, delayMs: 20, queueMs: 100, durationS: 90 },
    );
    expect(rc.flows[0].bytesDelivered).toBeGreaterThan(0.15 * (rc.flows[0].bytesDelivered + rc.flows[1].bytesDelivered));
  });

  it('cbr sends its rate from start to stop only', () => {
    const r = runFlows([{ path: 0, kind: 'cbr', startS: 2, stopS: 8, rateMbps: 0.5 }], { rateBps: 2e6, delayMs: 10, queueMs: 100, durationS: 10 });
    expect((r.flows[0].bytesDelivered * 8) / 6).toBeGreaterThan(0.49e6);
    expect((r.flows[0].bytesDelivered * 8) / 6).toBeLessThan(0.51e6);
  });
});

describe('crossTraffic validation', () => {
  const base = { name: 'x', durationS: 30, paths: [{ name: 'a', up: { rateMbps: 2 } }, { up: { rateMbps: 2 } }] };
  const bad = (crossTraffic: unknown, where: string) => {
    let err: unknown;
    try {
      parseScenario({ ...base, crossTraffic }, '.');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScenarioError);
    expect((err as ScenarioError).path).toBe(where);
  };
  it('accepts a valid list (path by index or name) and rejects bad flows with the JSON path', () => {
    const s = parseScenario(
      {
        ...base,
        crossTraffic: [
          { path: 'a', kind: 'cubic', startS: 1 },
          { path: 1, kind: 'cbr', startS: 0, stopS: 10, rateMbps: 1 },
        ],
      },
      '.',
    );
    expect(s.crossTraffic).toEqual([
      { path: 0, kind: 'cubic', startS: 1 },
      { path: 1, kind: 'cbr', startS: 0, stopS: 10, rateMbps: 1 },
    ]);
    bad({}, '$.crossTraffic');
    bad([{ path: 2, kind: 'reno' }], '$.crossTraffic[0].path');
    bad([{ path: 'nope', kind: 'reno' }], '$.crossTraffic[0].path');
    bad([{ path: 0, kind: 'reno', audio: true }], '$.crossTraffic[0].audio');
    bad([{ path: 0, kind: 'gcc-video', audio: 1 }], '$.crossTraffic[0].audio');
    bad([{ path: 0, kind: 'bbr' }], '$.crossTraffic[0].kind');
    bad([{ path: 0, kind: 'cbr' }], '$.crossTraffic[0].rateMbps');
    bad([{ path: 0, kind: 'reno', rateMbps: 1 }], '$.crossTraffic[0].rateMbps');
    bad([{ path: 0, kind: 'reno', startS: 5, stopS: 5 }], '$.crossTraffic[0].stopS');
    bad([{ path: 0, kind: 'reno', startS: 40 }], '$.crossTraffic[0].startS');
    bad([{ path: 0, kind: 'reno', extra: 1 }], '$.crossTraffic[0].extra');
  });
});

describe('fairness metrics (MPRTP §V)', () => {
  it("Jain's index: equal shares 1, one of two starved 0.5; bad values throw", () => {
    expect(jainIndex([0.3, 0.3, 0.3])).toBeCloseTo(1, 12);
    expect(jainIndex([1, 0])).toBeCloseTo(0.5, 12);
    expect(jainIndex([])).toBe(1);
    expect(() => jainIndex([1, -1])).toThrow(RangeError);
  });

  it('reproduces the paper: Table VI means (RTP 783 of 2000, MPRTP 428 + 975 of 4000) give 0.98 ± 0.03; Table V (one 3000 kbps bottleneck) 0.97 ± 0.03', () => {
    const t6 = jainIndex([783 / 2000, (428 + 975) / 4000]);
    expect(Math.abs(t6 - 0.98)).toBeLessThanOrEqual(0.03);
    const t5 = jainIndex([954 / 3000, (464 + 616) / 3000]);
    expect(Math.abs(t5 - 0.97)).toBeLessThanOrEqual(0.03);
  });

  it('rate error (Eq. 2) is the mean |SR_actual - SR_allocated| / SR_allocated in %', () => {
    expect(
      rateErrorPct([
        { actualBps: 1.2e6, allocatedBps: 1e6 },
        { actualBps: 0.9e6, allocatedBps: 1e6 },
        { actualBps: 5e5, allocatedBps: 0 },
      ]),
    ).toBeCloseTo(15, 9);
  });

  it('normalises a multipath flow by the aggregate and a single-path flow by its path, over the window all cross flows are active', () => {
    const sec = (bps: number, n: number) => new Array<number>(n).fill(bps / 8);
    const f = fairness({
      durationS: 10,
      capacityBps: [new Array(10).fill(2e6), new Array(10).fill(2e6)],
      ours: { paths: [0, 1], bytes: [sec(0.5e6, 10), sec(2e6, 10)], sent: 100, delivered: 99 },
      cross: [{ kind: 'reno', path: 0, startS: 2, stopS: 8, bytes: sec(1.5e6, 10), sent: 50, delivered: 50 }],
      rates: [],
      queueDelaysMs: [[1, 2, 3], []],
    });
    expect(f).toBeDefined();
    expect(f!.fromS).toBe(2);
    expect(f!.toS).toBe(8);
    // ours 2.5 / 4 = 0.625, reno 1.5 / 2 = 0.75 -> (1.375)^2 / (2 (0.390625 + 0.5625)) = 0.992
    expect(f!.jainIndex).toBeCloseTo(0.992, 3);
    expect(f!.flows[0].lossPct).toBe(1);
    expect(f!.queueMedianDelayMs).toEqual([2, 0]);
    expect(f!.broken).toEqual([]);
  });

  it('checks its own assumptions: a cross flow that stopped mid-window, a video flow that decoded nothing, a path without our media, a path without capacity', () => {
    const sec = (bps: number, n: number) => new Array<number>(n).fill(bps / 8);
    const base = {
      durationS: 30,
      capacityBps: [new Array(30).fill(2e6), new Array(30).fill(2e6)],
      ours: { paths: [0, 1], bytes: [sec(0.5e6, 30), sec(1e6, 30)], sent: 100, delivered: 100, mediaPackets: [new Array(30).fill(50), new Array(30).fill(80)] },
      cross: [{ kind: 'gcc-video' as const, path: 0, startS: 0, stopS: 30, bytes: sec(1e6, 30), sent: 80, delivered: 80, framesDecoded: 900 }],
      rates: [],
      queueDelaysMs: [[], []],
    };
    expect(fairnessChecks(base, 0, 30)).toEqual([]);
    // The cross flow went silent after 12 s: the slices 20-30 s (and 10-20 s holds 2 s of it) show it.
    const stopped = { ...base, cross: [{ ...base.cross[0], bytes: [...sec(1e6, 12), ...sec(0, 18)], framesDecoded: 0 }] };
    expect(fairnessChecks(stopped, 0, 30)).toEqual(['cross[0] gcc-video@0 delivered nothing in 20-30 s', 'cross[0] gcc-video@0 decoded no frame']);
    const silent = { ...base, cross: [{ ...base.cross[0], sent: 0, bytes: sec(0, 30) }] };
    expect(fairnessChecks(silent, 0, 30)).toEqual([
      'cross[0] gcc-video@0 sent nothing',
      'cross[0] gcc-video@0 delivered nothing in 0-10 s',
      'cross[0] gcc-video@0 delivered nothing in 10-20 s',
      'cross[0] gcc-video@0 delivered nothing in 20-30 s',
    ]);
    // Path 1 carried bytes (audio, padding) but no media in the window; then nothing at all.
    const noMedia = { ...base, ours: { ...base.ours, mediaPackets: [base.ours.mediaPackets[0], new Array(30).fill(0)] } };
    expect(fairnessChecks(noMedia, 0, 30)).toEqual(['our flow sent no media on path 1 in 0-30 s']);
    const idle = { ...noMedia, ours: { ...noMedia.ours, bytes: [base.ours.bytes[0], sec(0, 30)] } };
    expect(fairnessChecks(idle, 0, 30)).toEqual(['our flow delivered nothing on path 1 in 0-30 s', 'our flow sent no media on path 1 in 0-30 s']);
    const dead = { ...base, capacityBps: [base.capacityBps[0], new Array(30).fill(0)] };
    expect(fairnessChecks(dead, 0, 30)).toEqual(['path 1 has no capacity in 0-30 s']);
    // fairness() carries them.
    expect(fairness(stopped)!.broken).toHaveLength(2);
  });
});

describe('simulate() with cross traffic', () => {
  it('reports both flows: a 1 Mbps CBR flow on path 0 keeps its rate and our flow uses the rest', () => {
    const scenario = parseScenario(
      {
        name: 'cbr-share',
        durationS: 12,
        paths: [{ up: { rateMbps: 3, delayMs: 20, queue: { ms: 200 } } }, { up: { rateMbps: 3, delayMs: 20, queue: { ms: 200 } } }],
        crossTraffic: [{ path: 0, kind: 'cbr', startS: 2, rateMbps: 1 }],
      },
      '.',
    );
    const r = simulate({ scenario, scheduler: 'converge', fec: 'none', seed: 1 });
    expect(r.crossTraffic).toHaveLength(1);
    expect(r.fairness).toBeDefined();
    const [ours, cbr] = r.fairness!.flows;
    expect(cbr.throughputBps).toBeGreaterThan(0.9e6);
    expect(cbr.throughputBps).toBeLessThan(1.1e6);
    expect(ours.throughputBps).toBeGreaterThan(1e6);
    expect(r.fairness!.fromS).toBe(2);
    expect(r.fairness!.broken).toEqual([]);
  });

  it('a fractal-video flow is a single-path FRACTaL sender (the competitor of the MPRTP paper); gcc-video is GCC', () => {
    const run = (kind: 'gcc-video' | 'fractal-video') => {
      const scenario = parseScenario(
        {
          name: `x-${kind}`,
          durationS: 6,
          paths: [{ up: { rateMbps: 2, delayMs: 20, queue: { ms: 200 } } }, { up: { rateMbps: 2, delayMs: 20, queue: { ms: 200 } } }],
          crossTraffic: [{ path: 0, kind, startS: 0 }],
        },
        '.',
      );
      const spy = vi.spyOn(FractalEstimator.prototype, 'onReport');
      try {
        // Our flow runs converge with GCC: any FRACTaL report is the cross flow's.
        const r = simulate({ scenario, scheduler: 'converge', fec: 'none', seed: 1 });
        return { r, fractalReports: spy.mock.calls.length };
      } finally {
        spy.mockRestore();
      }
    };
    const f = run('fractal-video');
    expect(f.fractalReports).toBeGreaterThan(20);
    expect(f.r.crossTraffic?.[0]).toMatchObject({ kind: 'fractal-video', path: 0 });
    expect(f.r.fairness!.flows[1].throughputBps).toBeGreaterThan(200_000);
    expect(run('gcc-video').fractalReports).toBe(0);
  });

  it('SimOptions.fractal reaches every FRACTaL sender of the run: ours and the fractal-video cross flow', () => {
    const scenario = parseScenario(
      {
        name: 'x-fractal-cfg',
        durationS: 3,
        paths: [{ up: { rateMbps: 2, delayMs: 20, queue: { ms: 200 } } }, { up: { rateMbps: 2, delayMs: 20, queue: { ms: 200 } } }],
        crossTraffic: [{ path: 0, kind: 'fractal-video', startS: 0 }],
      },
      '.',
    );
    const spy = vi.spyOn(FractalEstimator.prototype, 'onReport');
    try {
      simulate({ scenario, scheduler: 'mrtp', estimator: 'fractal', fec: 'none', seed: 1, fractal: { distortionMarginMs: 12 } });
      const floors = new Set(spy.mock.contexts.map((e) => (e as unknown as { cfg: { distortionMarginMs?: number } }).cfg.distortionMarginMs));
      // Three estimators (our two subflows and the cross flow's one), all with the option.
      expect(new Set(spy.mock.contexts).size).toBe(3);
      expect(floors).toEqual(new Set([12]));
    } finally {
      spy.mockRestore();
    }
  });

  it('a video cross flow with audio: true sends its own audio when the run has audio (a frame per 20 ms while active); without, none', () => {
    const scenario = parseScenario(
      {
        name: 'x-audio',
        durationS: 5,
        paths: [{ up: { rateMbps: 2, delayMs: 20, queue: { ms: 200 } } }, { up: { rateMbps: 2, delayMs: 20, queue: { ms: 200 } } }],
        crossTraffic: [
          { path: 1, kind: 'gcc-video', startS: 1, stopS: 4, audio: true },
          { path: 0, kind: 'gcc-video', startS: 1, stopS: 4 },
        ],
      },
      '.',
    );
    const on = simulate({ scenario, scheduler: 'converge', fec: 'none', seed: 1, audio: true });
    const frames = on.crossTraffic?.[0].audioFramesSent ?? 0;
    expect(frames).toBeGreaterThanOrEqual(145);
    expect(frames).toBeLessThanOrEqual(151);
    expect(on.crossTraffic?.[1].audioFramesSent).toBe(0);
    const off = simulate({ scenario, scheduler: 'converge', fec: 'none', seed: 1, audio: false });
    expect(off.crossTraffic?.[0].audioFramesSent).toBeUndefined();
  });
});
