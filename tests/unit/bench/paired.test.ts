/**
 * bench/sim/paired.ts: the paired comparison behind `npm run bench:diff`, on
 * hand-made runs (only variant, half, config, seed, freezes.totalMs and
 * goodputBps are read).
 */
import { describe, expect, it } from 'vitest';
import { pairedDiff, renderPairedDiff, runRows } from '../../../bench/sim/paired.js';

const run = (variant: string, half: 'tune' | 'check' | undefined, config: string, seed: number, freezeMs: number, goodputBps = 1e6) => ({
  variant,
  ...(half ? { half } : {}),
  config,
  seed,
  freezes: { totalMs: freezeMs, count: 1 },
  goodputBps,
});

describe('runRows', () => {
  it('reads the fields the comparison needs and rejects a file that is not a results.json', () => {
    expect(runRows([run('a', 'tune', 'converge', 1, 500)], 'f.json')).toEqual([{ variant: 'a', half: 'tune', config: 'converge', seed: 1, freezeMs: 500, goodputBps: 1e6 }]);
    expect(() => runRows({ runs: [] }, 'f.json')).toThrow(/f\.json: not a results\.json/);
    expect(() => runRows([{ variant: 'a', config: 'converge', seed: 1.5, freezes: { totalMs: 0 }, goodputBps: 0 }], 'f.json')).toThrow(/run 0: seed 1\.5/);
    expect(() => runRows([{ variant: 'a', config: 'converge', seed: 1, freezes: {}, goodputBps: 0 }], 'f.json')).toThrow(/freezes\.totalMs/);
    expect(() => runRows([null], 'f.json')).toThrow(/run 0: no variant/);
    // JSON.stringify writes a NaN total as null: not a 0 ms freeze.
    expect(() => runRows(JSON.parse(JSON.stringify([run('a', 'tune', 'converge', 1, Number.NaN)])), 'f.json')).toThrow(/freezes\.totalMs null/);
    expect(() => runRows([{ ...run('a', 'tune', 'converge', 1, 0), goodputBps: '' }], 'f.json')).toThrow(/goodputBps/);
  });
});

describe('pairedDiff', () => {
  // Two pairs per half, seeds 1-3; best single paths only on the base side.
  const base = runRows(
    [
      ...[1, 2, 3].flatMap((s) => [
        run('t1', 'tune', 'converge', s, 1000),
        run('t2', 'tune', 'converge', s, 0),
        run('c1', 'check', 'converge', s, [2000, 3000, 4000][s - 1]),
        run('c2', 'check', 'converge', s, 500),
        run('t1', 'tune', 'single:0', s, 3000, 1e6),
        run('t1', 'tune', 'single:1', s, 3000, 2e6),
        run('t2', 'tune', 'single:0', s, 0),
        run('c1', 'check', 'single:0', s, 1000),
        run('c2', 'check', 'single:1', s, 1000),
      ]),
      run('c2', 'check', 'converge', 4, 9000), // no partner on the new side
    ],
    'base',
  );
  const next = runRows(
    [1, 2, 3].flatMap((s) => [
      run('t1', 'tune', 'converge', s, 1000),
      run('t2', 'tune', 'converge', s, 300),
      run('c1', 'check', 'converge', s, [1000, 1500, 2600][s - 1]),
      run('c2', 'check', 'converge', s, 500),
    ]),
    'new',
  );

  it('pairs runs by variant and seed and gives per-seed half totals with the delta and its standard error', () => {
    const d = pairedDiff(base, next);
    expect(d.unmatchedBase).toBe(1);
    expect(d.unmatchedNew).toBe(0);
    expect(d.singles).toEqual({ base: 'own', new: 'other' });
    const check = d.groups.find((g) => g.group === 'check');
    expect(check?.seeds).toEqual([1, 2, 3]);
    expect(check?.baseTotalMs).toEqual([2500, 3500, 4500]);
    expect(check?.newTotalMs).toEqual([1500, 2000, 3100]);
    // Per-seed deltas -1000, -1500, -1400: mean -1300, sd 264.6, SE 152.8.
    expect(check?.deltaMs).toBeCloseTo(-1300, 6);
    expect(check?.deltaSeMs).toBeCloseTo(264.575 / Math.sqrt(3), 2);
    expect(check?.worst).toBeUndefined();
    const tune = d.groups.find((g) => g.group === 'tune');
    expect(tune?.deltaMs).toBeCloseTo(300, 6);
    expect(tune?.deltaSeMs).toBe(0);
    expect(tune?.worst?.variant).toBe('t2');
    expect(d.groups.map((g) => g.group)).toEqual(['tune', 'check', 'all']);
  });

  it("judges each pair against the best single path (least freeze, ties by goodput) with report.ts's bound", () => {
    const d = pairedDiff(base, next);
    const c1 = d.pairs.find((p) => p.variant === 'c1');
    // c1: converge 3000 ms on base vs best single 1000 (+500 slack): over; new 1700: over.
    expect(c1?.baseBestMs).toBe(1000);
    expect(c1?.baseOk).toBe(false);
    expect(c1?.newOk).toBe(false);
    const t1 = d.pairs.find((p) => p.variant === 't1');
    expect(t1?.baseGoodputRatio).toBeCloseTo(0.5, 6); // the tie goes to single:1 (2 Mbps), listed second
    const t2 = d.pairs.find((p) => p.variant === 't2');
    expect(t2?.baseOk).toBe(true);
    expect(t2?.newOk).toBe(true); // 300 ms <= 0 + 500
    const all = d.groups.find((g) => g.group === 'all');
    expect(all?.baseBestMs).toBe(3000 + 0 + 1000 + 1000);
    expect(all?.baseWithin).toBe(3); // c1 is over on both sides
    expect(all?.newWithin).toBe(3);
  });

  it('totals per seed only over the seeds every pair of the group has, and says which were left out', () => {
    const more = runRows(
      [...next.map((r) => ({ variant: r.variant, half: r.half, config: r.config, seed: r.seed, freezes: { totalMs: r.freezeMs }, goodputBps: r.goodputBps })), run('c2', 'check', 'converge', 4, 100)],
      'new',
    );
    const d = pairedDiff(base, more);
    const check = d.groups.find((g) => g.group === 'check');
    expect(d.pairs.find((p) => p.variant === 'c2')?.seeds).toEqual([1, 2, 3, 4]);
    expect(check?.seeds).toEqual([1, 2, 3]);
    expect(check?.baseTotalMs).toEqual([2500, 3500, 4500]);
    expect(check?.partialSeeds).toEqual([4]);
    expect(renderPairedDiff(d)).toContain('check: seeds 4 left out of the totals');
  });

  it('refuses duplicate runs and a pair in different halves on the two sides', () => {
    expect(() => pairedDiff([...base, ...base], next)).toThrow(/base: two runs of converge on t1 with seed 1/);
    const moved = runRows([run('t1', 'check', 'converge', 1, 1000)], 'new');
    expect(() => pairedDiff(base, moved)).toThrow(/t1: seed 1 is in half tune in base, check in new/);
  });

  it('no best single when a single path lacks one of the seeds, and goodput counts in the acceptance', () => {
    const partial = runRows(
      [1, 2, 3].flatMap((s) => [run('a', 'tune', 'converge', s, 2000), run('a', 'tune', 'single:0', s, 3000)]).concat([run('a', 'tune', 'single:1', 1, 0), run('a', 'tune', 'single:1', 2, 0)]),
      'b',
    );
    expect(pairedDiff(partial, partial).pairs[0].baseBestMs).toBeUndefined();
    const b = runRows([run('a', 'tune', 'converge', 1, 0, 2e6), run('a', 'tune', 'single:0', 1, 0, 2e6)], 'b');
    const d = pairedDiff(b, runRows([run('a', 'tune', 'converge', 1, 0, 0.5e6)], 'n'));
    expect(d.pairs[0].newGoodputOk).toBe(false);
    expect(d.groups.map((g) => [g.baseMet, g.newMet])).toEqual([
      [true, false],
      [true, false],
    ]);
  });

  it('refuses two sets with no run in common instead of comparing nothing', () => {
    const other = runRows([run('t1', 'tune', 'converge', 7, 0)], 'other');
    expect(() => pairedDiff(base, other)).toThrow(/no run of converge has the same variant and seed/);
    expect(() => pairedDiff(base, next, 'minrtt')).toThrow(/no run of minrtt/);
  });

  it('renders one row per group and, on request, per pair', () => {
    const text = renderPairedDiff(pairedDiff(base, next), { pairs: true });
    expect(text).toContain('| check | 2 | 1,2,3 | 3.50 (2.50 / 3.50 / 4.50) | 2.20 (1.50 / 2.00 / 3.10) | -1.30 +- 0.15 |');
    expect(text).toContain('Unpaired runs left out: 1 only in base, 0 only in new.');
    expect(text).toMatch(/\| c1 \| check \| 3\.00 .* \| \*\*yes\*\* \/ \*\*yes\*\* \|/);
  });
});
