import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { DEFAULT_FEEDBACK_RATE_MBPS, DEFAULT_SCENARIO, ScenarioError, buildLink, linkConfigFromSpec, loadScenario, parseScenario, scaleScenarioRates } from '../../../sim/net/scenario.js';
import { TraceError, meanRateBps } from '../../../sim/net/traces.js';

const SCENARIOS = join(__dirname, '../../../sim/net/scenarios');
const TRACES = join(__dirname, '../../../../shared/traces');
const HAVE_SHARED = existsSync(TRACES);

function errorPath(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError);
    return (e as ScenarioError).path;
  }
  throw new Error('expected a ScenarioError');
}

const ok = (up: object, extra: object = {}): object => ({ name: 't', paths: [{ up }], ...extra });

describe('scenario files', () => {
  for (const name of ['default', 'capacity-drop', 'delay-spike', 'loss5', 'blackhole']) {
    it(`${name}.json loads and builds links`, () => {
      const s = loadScenario(join(SCENARIOS, `${name}.json`));
      expect(s.name).toBe(name);
      expect(s.paths.length).toBe(2);
      for (const p of s.paths) {
        expect(buildLink(p.up, new Rng(1)).stats().sent).toBe(0);
        buildLink(p.down, new Rng(2));
      }
    });
  }

  it('default.json equals DEFAULT_SCENARIO (8 Mbps/30 ms; 4 Mbps/60 ms 1% loss; ~150 ms queues)', () => {
    expect(loadScenario(join(SCENARIOS, 'default.json'))).toEqual(DEFAULT_SCENARIO);
    const [p0, p1] = DEFAULT_SCENARIO.paths;
    expect([p0.up.rateMbps, p0.up.delayMs, p1.up.rateMbps, p1.up.delayMs, p1.up.loss]).toEqual([8, 30, 4, 60, 0.01]);
    expect(((p0.up.queue?.bytes ?? 0) * 8) / (8e6 / 1000)).toBe(150);
    expect(((p1.up.queue?.bytes ?? 0) * 8) / (4e6 / 1000)).toBe(150);
  });

  it('capacity-drop.json: path 1 goes 8 -> 0.5 Mbps for 20 s', () => {
    const s = loadScenario(join(SCENARIOS, 'capacity-drop.json'));
    const link = buildLink(s.paths[1].up, new Rng(1));
    expect(link.capacityAtMs(19_999)).toBe(1000);
    expect(link.capacityAtMs(20_000)).toBe(62.5);
    expect(link.capacityAtMs(39_999)).toBe(62.5);
    expect(link.capacityAtMs(40_000)).toBe(1000);
  });

  it('delay-spike.json: path 1 +150 ms for 20 s, in both directions', () => {
    const s = loadScenario(join(SCENARIOS, 'delay-spike.json'));
    for (const spec of [s.paths[1].up, s.paths[1].down]) {
      const link = buildLink(spec, new Rng(1));
      expect([link.delayAtMs(19_000), link.delayAtMs(25_000), link.delayAtMs(41_000)]).toEqual([60, 210, 60]);
    }
  });

  it('blackhole.json: path 0 is down 5 s mid-call in both directions', () => {
    const s = loadScenario(join(SCENARIOS, 'blackhole.json'));
    for (const spec of [s.paths[0].up, s.paths[0].down]) {
      const link = buildLink(spec, new Rng(1));
      expect([link.isDownAt(24.9e6), link.isDownAt(25e6), link.isDownAt(29.9e6), link.isDownAt(30e6)]).toEqual([false, true, true, false]);
    }
  });

  it.skipIf(!HAVE_SHARED)('carriers.json resolves the shared mahimahi traces relative to the scenario file', () => {
    const s = loadScenario(join(SCENARIOS, 'carriers.json'));
    expect(s.paths[0].up.trace).toBe(join(TRACES, 'mahimahi/Verizon-LTE-short.up'));
    const cfg = linkConfigFromSpec(s.paths[1].up);
    expect(meanRateBps(cfg.capacity) / 1e6).toBeCloseTo(13.32, 1);
  });
});

describe('parseScenario', () => {
  it('fills defaults: path names and a generous symmetric feedback link', () => {
    const s = parseScenario(ok({ rateMbps: 2, delayMs: 40, downPeriods: [[1, 2]], schedule: [{ atS: 3, delayMs: 90, rateMbps: 1 }] }), '.');
    expect(s.paths[0].name).toBe('path0');
    expect(s.paths[0].down).toEqual({
      rateMbps: DEFAULT_FEEDBACK_RATE_MBPS,
      delayMs: 40,
      queue: { packets: 1000 },
      downPeriods: [[1, 2]],
      schedule: [{ atS: 3, delayMs: 90 }],
    });
  });

  it('converts units when building a link config', () => {
    const s = parseScenario(
      ok({
        rateMbps: 2,
        delayMs: 40,
        loss: { gilbertElliott: { pGoodToBad: 0.01, pBadToGood: 0.2, lossBad: 0.8 } },
        downPeriods: [[1, 2.5]],
        schedule: [{ atS: 3, rateMbps: 0.5, loss: 0.1 }],
      }),
      '.',
    );
    const cfg = linkConfigFromSpec(s.paths[0].up);
    expect(cfg.capacity.bytesPerMs[0]).toBe(250);
    expect(cfg.delay).toBe(40);
    expect(cfg.loss).toEqual({ kind: 'gilbertElliott', pGoodToBad: 0.01, pBadToGood: 0.2, lossBad: 0.8 });
    expect(cfg.downPeriods).toEqual([[1000, 2500]]);
    expect(cfg.schedule).toEqual([{ atMs: 3000, rateBps: 0.5e6, loss: { kind: 'bernoulli', p: 0.1 } }]);
  });

  it('rateScale multiplies every capacity of a link (trace or rate, and schedule steps), composes, and must be > 0', () => {
    const s = parseScenario(
      ok({
        rateMbps: 2,
        delayMs: 40,
        schedule: [
          { atS: 3, rateMbps: 0.5 },
          { atS: 4, rateMbps: null },
        ],
        rateScale: 0.5,
      }),
      '.',
    );
    const cfg = linkConfigFromSpec(s.paths[0].up);
    expect(cfg.capacity.bytesPerMs[0]).toBe(125);
    expect(cfg.delay).toBe(40);
    expect(cfg.schedule).toEqual([
      { atMs: 3000, rateBps: 0.25e6 },
      { atMs: 4000, rateBps: null },
    ]);
    const scaled = scaleScenarioRates(s, 0.1);
    expect(linkConfigFromSpec(scaled.paths[0].up).capacity.bytesPerMs[0]).toBeCloseTo(12.5, 9);
    expect(linkConfigFromSpec(scaled.paths[0].down).capacity.bytesPerMs[0]).toBeCloseTo((DEFAULT_FEEDBACK_RATE_MBPS * 1e6 * 0.1) / 8000, 9);
    expect(s.paths[0].up.rateScale).toBe(0.5); // the input scenario is not changed
    expect(errorPath(() => parseScenario(ok({ rateMbps: 1, rateScale: 0 }), '.'))).toBe('$.paths[0].up.rateScale');
    expect(() => scaleScenarioRates(s, -1)).toThrow(RangeError);
  });

  it.skipIf(!HAVE_SHARED)('rateScale scales a trace link: the carriers T-Mobile uplink at 0.15', () => {
    const s = loadScenario(join(SCENARIOS, 'carriers.json'));
    const full = meanRateBps(linkConfigFromSpec(s.paths[1].up).capacity);
    expect(meanRateBps(linkConfigFromSpec(scaleScenarioRates(s, 0.15).paths[1].up).capacity)).toBeCloseTo(full * 0.15, 0);
  });

  it('reports errors with the JSON path', () => {
    expect(errorPath(() => parseScenario(null, '.'))).toBe('$');
    expect(errorPath(() => parseScenario({ paths: [] }, '.'))).toBe('$.name');
    expect(errorPath(() => parseScenario({ name: 'x', paths: [] }, '.'))).toBe('$.paths');
    expect(errorPath(() => parseScenario({ name: 'x', paths: [{}] }, '.'))).toBe('$.paths[0].up');
    expect(errorPath(() => parseScenario(ok({ delayMs: 5 }), '.'))).toBe('$.paths[0].up');
    expect(errorPath(() => parseScenario(ok({ rateMbps: -1 }), '.'))).toBe('$.paths[0].up.rateMbps');
    expect(errorPath(() => parseScenario(ok({ rateMbps: 1, delayMs: 'x' }), '.'))).toBe('$.paths[0].up.delayMs');
    expect(errorPath(() => parseScenario(ok({ rateMbps: 1, rate: 2 }), '.'))).toBe('$.paths[0].up.rate');
    expect(errorPath(() => parseScenario(ok({ rateMbps: 1, loss: 2 }), '.'))).toBe('$.paths[0].up.loss');
    expect(errorPath(() => parseScenario(ok({ rateMbps: 1, loss: { gilbertElliott: { pGoodToBad: 0.1 } } }), '.'))).toBe('$.paths[0].up.loss.gilbertElliott.pBadToGood');
    expect(errorPath(() => parseScenario(ok({ rateMbps: 1, queue: {} }), '.'))).toBe('$.paths[0].up.queue');
    expect(errorPath(() => parseScenario(ok({ rateMbps: 1, queue: { packets: 1.5 } }), '.'))).toBe('$.paths[0].up.queue.packets');
    expect(errorPath(() => parseScenario(ok({ rateMbps: 1, downPeriods: [[5, 3]] }), '.'))).toBe('$.paths[0].up.downPeriods[0][1]');
    expect(errorPath(() => parseScenario(ok({ rateMbps: 1, schedule: [{ atS: 1 }] }), '.'))).toBe('$.paths[0].up.schedule[0]');
    expect(errorPath(() => parseScenario(ok({ rateMbps: 1, schedule: [{ atS: -1, rateMbps: 1 }] }), '.'))).toBe('$.paths[0].up.schedule[0].atS');
    expect(errorPath(() => parseScenario(ok({ trace: 'nope.up' }), '/tmp'))).toBe('$.paths[0].up.trace');
    expect(errorPath(() => parseScenario(ok({ rateMbps: 1, traceRun: 2 }), '.'))).toBe('$.paths[0].up.traceRun');
    expect(errorPath(() => parseScenario({ name: 'x', paths: [{ up: { rateMbps: 1 } }, { up: { rateMbps: 1 }, down: { rateMbps: 0 } }] }, '.'))).toBe('$.paths[1].down.rateMbps');
    const nine = Array.from({ length: 9 }, () => ({ up: { rateMbps: 1 } }));
    expect(errorPath(() => parseScenario({ name: 'x', paths: nine }, '.'))).toBe('$.paths');
  });

  it('loadScenario names the file; malformed trace content surfaces as a TraceError at build time', () => {
    const dir = mkdtempSync(join(tmpdir(), 'scn-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ "name": ');
    expect(() => loadScenario(bad)).toThrow(ScenarioError);
    expect(() => loadScenario(bad)).toThrow(bad);
    const wrong = join(dir, 'wrong.json');
    writeFileSync(wrong, JSON.stringify(ok({ rateMbps: 1, loss: 3 })));
    expect(() => loadScenario(wrong)).toThrow(`${wrong}: $.paths[0].up.loss`);

    writeFileSync(join(dir, 'x.up'), '1\n2\nzz\n');
    writeFileSync(join(dir, 's.json'), JSON.stringify(ok({ trace: 'x.up' })));
    const s = loadScenario(join(dir, 's.json'));
    expect(s.paths[0].up.traceFormat).toBe('mahimahi');
    try {
      buildLink(s.paths[0].up, new Rng(1));
      throw new Error('expected a TraceError');
    } catch (e) {
      expect(e).toBeInstanceOf(TraceError);
      expect((e as TraceError).line).toBe(3);
      expect((e as TraceError).file).toBe(join(dir, 'x.up'));
    }
  });
});
