/**
 * Paired comparison of two sets of simulator runs (the `results.json` of
 * `npm run bench`): the same variants and seeds run on a base and on a
 * change. A run's freeze moves by 0.2-1 s per seed on the cellular suite from
 * timing alone (a few µs change which packet a drop-tail queue loses), so a
 * half's 3-seed total moves by ~1-2 s between seed sets of the same code
 * (docs/results.md, stop 37). The comparison therefore pairs runs by
 * (variant, seed), gives each half's total per seed, the mean delta with its
 * standard error over seeds (sd of the per-seed deltas / sqrt(seeds)), the
 * worst pair, and issue 10's acceptance on each side with the definitions of
 * bench/sim/report.ts (`PAIR_FREEZE_SLACK_MS`, `TOTAL_FREEZE_RATIO`).
 *
 * Pure: rows in, numbers out (bench/sim/diff.ts is the command line).
 */
import { PAIR_FREEZE_SLACK_MS, PAIR_GOODPUT_RATIO, TOTAL_FREEZE_RATIO } from './report.js';

/** What a results.json entry must hold for the comparison (other fields are ignored). */
export interface RunRow {
  variant: string;
  half?: 'tune' | 'check';
  config: string;
  seed: number;
  /** Total frozen time of the run (ms). */
  freezeMs: number;
  /** Goodput (bps). */
  goodputBps: number;
  /** The run's overrides (`--sender`, `--receiver`, ...), as results.json records them. */
  options?: unknown;
}

/**
 * The rows of one parsed results.json.
 * @param label the file's name, for error messages
 * @throws Error naming the file and the entry when the file is not an array of runs
 *   with a string `variant` and `config`, an integer `seed`, a finite
 *   `freezes.totalMs` and `goodputBps`.
 */
export function runRows(json: unknown, label: string): RunRow[] {
  if (!Array.isArray(json)) throw new Error(`${label}: not a results.json of npm run bench (expected an array of runs)`);
  return json.map((e: unknown, i) => {
    const r = (e ?? {}) as Record<string, unknown>;
    const freezes = (r.freezes ?? {}) as Record<string, unknown>;
    const bad = (what: string) => new Error(`${label}: run ${i}: ${what}`);
    if (typeof r.variant !== 'string' || typeof r.config !== 'string') throw bad('no variant / config');
    if (!Number.isInteger(r.seed)) throw bad(`seed ${String(r.seed)} is not an integer`);
    // Numbers only: JSON.stringify writes NaN / Infinity as null, and Number(null) is 0.
    const freezeMs = typeof freezes.totalMs === 'number' ? freezes.totalMs : Number.NaN;
    const goodputBps = typeof r.goodputBps === 'number' ? r.goodputBps : Number.NaN;
    if (!Number.isFinite(freezeMs) || freezeMs < 0) throw bad(`freezes.totalMs ${String(freezes.totalMs)} is not a number >= 0`);
    if (!Number.isFinite(goodputBps) || goodputBps < 0) throw bad(`goodputBps ${String(r.goodputBps)} is not a number >= 0`);
    const half = r.half === 'tune' || r.half === 'check' ? r.half : undefined;
    return { variant: r.variant, ...(half ? { half } : {}), config: r.config, seed: r.seed as number, freezeMs, goodputBps, ...(r.options !== undefined ? { options: r.options } : {}) };
  });
}

/** One pair (variant) compared. Freeze values are means over the paired seeds (ms). */
export interface PairDiff {
  variant: string;
  half?: 'tune' | 'check';
  seeds: number[];
  baseMs: number[];
  newMs: number[];
  baseMeanMs: number;
  newMeanMs: number;
  deltaMs: number;
  /** The best single path's mean freeze on each side (ms; undefined when no single:* runs cover the pair's seeds). */
  baseBestMs?: number;
  newBestMs?: number;
  baseOk?: boolean;
  newOk?: boolean;
  /** Goodput over the best single path's, each side (undefined without singles). */
  baseGoodputRatio?: number;
  newGoodputRatio?: number;
  /** Goodput >= PAIR_GOODPUT_RATIO x the best single path's, each side. */
  baseGoodputOk?: boolean;
  newGoodputOk?: boolean;
}

/** One half (or all pairs) compared. Totals are sums over pairs of the per-seed values (ms). */
export interface GroupDiff {
  group: 'tune' | 'check' | 'all';
  pairs: number;
  seeds: number[];
  /** Per seed (in `seeds` order): the group's total freeze on each side (ms). */
  baseTotalMs: number[];
  newTotalMs: number[];
  baseMeanMs: number;
  newMeanMs: number;
  deltaMs: number;
  /** Standard error of `deltaMs` over seeds (ms); NaN with one seed. */
  deltaSeMs: number;
  /** Best single paths' total, each side (ms; undefined unless every pair has singles). */
  baseBestMs?: number;
  newBestMs?: number;
  /** Pairs within best single + PAIR_FREEZE_SLACK_MS, each side. */
  baseWithin?: number;
  newWithin?: number;
  /** The pair whose mean freeze grew most; undefined when none grew. */
  worst?: PairDiff;
  /** Seeds paired for some pairs of the group but not all: left out of the per-seed totals. */
  partialSeeds: number[];
  /** Issue 10's acceptance of the group, each side: every pair within the freeze bound and the goodput ratio, total <= TOTAL_FREEZE_RATIO x the best single paths'. */
  baseMet?: boolean;
  newMet?: boolean;
}

export interface PairedDiff {
  config: string;
  pairs: PairDiff[];
  groups: GroupDiff[];
  /** Runs of `config` on one side with no partner (same variant and seed) on the other. */
  unmatchedBase: number;
  unmatchedNew: number;
  /** Where the best single paths came from: each side's own singles, or the other side's when it has none. */
  singles: { base: 'own' | 'other' | 'none'; new: 'own' | 'other' | 'none' };
}

const key = (variant: string, seed: number) => `${variant}\u0000${seed}`;

function sd(xs: readonly number[]): number {
  if (xs.length < 2) return Number.NaN;
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
}

const avg = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);

/**
 * Best single path per variant: the `single:*` config with the least mean
 * freeze over `seeds` (ties: higher goodput), as bench/sim/report.ts
 * `comparePairs` picks it; undefined when no single config covers every seed.
 */
function bestSingle(rows: readonly RunRow[], variant: string, seeds: readonly number[]): { freezeMs: number; goodputBps: number } | undefined {
  const by = new Map<string, Map<number, RunRow>>();
  for (const r of rows) {
    if (r.variant !== variant || !r.config.startsWith('single:')) continue;
    let m = by.get(r.config);
    if (!m) by.set(r.config, (m = new Map()));
    m.set(r.seed, r);
  }
  let best: { freezeMs: number; goodputBps: number } | undefined;
  for (const m of by.values()) {
    // A single path missing one of the seeds: no best single (picking among the others could pick a worse one).
    if (!seeds.every((s) => m.has(s))) return undefined;
    const f = avg(seeds.map((s) => (m.get(s) as RunRow).freezeMs));
    const g = avg(seeds.map((s) => (m.get(s) as RunRow).goodputBps));
    if (!best || f < best.freezeMs || (f === best.freezeMs && g > best.goodputBps)) best = { freezeMs: f, goodputBps: g };
  }
  return best;
}

/**
 * Compare `config` (default converge) between two sets of runs, paired by
 * (variant, seed). Best single paths come from each side's own `single:*`
 * runs, or from the other side's when a side has none (a change to the
 * scheduler alone leaves single paths as they were).
 * @throws Error when no run of `config` has a partner on the other side.
 */
export function pairedDiff(base: readonly RunRow[], next: readonly RunRow[], config = 'converge'): PairedDiff {
  for (const [side, rows] of [
    ['base', base],
    ['new', next],
  ] as const) {
    const seen = new Set<string>();
    for (const r of rows) {
      const k = `${r.config}\u0000${key(r.variant, r.seed)}`;
      if (seen.has(k)) throw new Error(`${side}: two runs of ${r.config} on ${r.variant} with seed ${r.seed} (a results.json given twice, or overlapping seed sets)`);
      seen.add(k);
    }
  }
  const pick = (rows: readonly RunRow[]) => new Map(rows.filter((r) => r.config === config).map((r) => [key(r.variant, r.seed), r] as const));
  const b = pick(base);
  const n = pick(next);
  const matched = [...b.keys()].filter((k) => n.has(k));
  if (matched.length === 0)
    throw new Error(`no run of ${config} has the same variant and seed on both sides (base ${b.size} runs, new ${n.size}): compare runs of the same seeds (--seeds / --first-seed)`);
  const hasSingles = (rows: readonly RunRow[]) => rows.some((r) => r.config.startsWith('single:'));
  const src = (own: readonly RunRow[], other: readonly RunRow[]): ['own' | 'other' | 'none', readonly RunRow[]] =>
    hasSingles(own) ? ['own', own] : hasSingles(other) ? ['other', other] : ['none', []];
  const [bSrc, bSingles] = src(base, next);
  const [nSrc, nSingles] = src(next, base);

  const variants = new Map<string, number[]>();
  for (const k of matched) {
    const r = b.get(k) as RunRow;
    let l = variants.get(r.variant);
    if (!l) variants.set(r.variant, (l = []));
    l.push(r.seed);
  }
  const pairs: PairDiff[] = [];
  for (const [variant, seedsUnsorted] of variants) {
    const seeds = [...seedsUnsorted].sort((x, y) => x - y);
    const bRuns = seeds.map((s) => b.get(key(variant, s)) as RunRow);
    const nRuns = seeds.map((s) => n.get(key(variant, s)) as RunRow);
    const baseMs = bRuns.map((r) => r.freezeMs);
    const newMs = nRuns.map((r) => r.freezeMs);
    const i = bRuns.findIndex((r, j) => r.half !== nRuns[j].half);
    if (i >= 0) throw new Error(`${variant}: seed ${seeds[i]} is in half ${bRuns[i].half ?? 'none'} in base, ${nRuns[i].half ?? 'none'} in new (runs of different suites?)`);
    const p: PairDiff = { variant, ...(bRuns[0].half ? { half: bRuns[0].half } : {}), seeds, baseMs, newMs, baseMeanMs: avg(baseMs), newMeanMs: avg(newMs), deltaMs: avg(newMs) - avg(baseMs) };
    const bb = bestSingle(bSingles, variant, seeds);
    const nb = bestSingle(nSingles, variant, seeds);
    if (bb) {
      p.baseBestMs = bb.freezeMs;
      p.baseOk = p.baseMeanMs <= bb.freezeMs + PAIR_FREEZE_SLACK_MS;
      p.baseGoodputRatio = bb.goodputBps > 0 ? avg(bRuns.map((r) => r.goodputBps)) / bb.goodputBps : Number.POSITIVE_INFINITY;
      p.baseGoodputOk = p.baseGoodputRatio >= PAIR_GOODPUT_RATIO;
    }
    if (nb) {
      p.newBestMs = nb.freezeMs;
      p.newOk = p.newMeanMs <= nb.freezeMs + PAIR_FREEZE_SLACK_MS;
      p.newGoodputRatio = nb.goodputBps > 0 ? avg(nRuns.map((r) => r.goodputBps)) / nb.goodputBps : Number.POSITIVE_INFINITY;
      p.newGoodputOk = p.newGoodputRatio >= PAIR_GOODPUT_RATIO;
    }
    pairs.push(p);
  }
  pairs.sort((x, y) => (x.half ?? '').localeCompare(y.half ?? '') || x.variant.localeCompare(y.variant));

  const groups: GroupDiff[] = [];
  const halves = new Set(pairs.map((p) => p.half));
  const sets: Array<['tune' | 'check' | 'all', PairDiff[]]> = [];
  if (halves.has('tune')) sets.push(['tune', pairs.filter((p) => p.half === 'tune')]);
  if (halves.has('check')) sets.push(['check', pairs.filter((p) => p.half === 'check')]);
  sets.push(['all', pairs]);
  for (const [group, ps] of sets) {
    // Per-seed totals need every pair to have the seed: use the seeds all pairs share.
    const all = [...new Set(ps.flatMap((p) => p.seeds))].sort((x, y) => x - y);
    const seeds = all.filter((s) => ps.every((p) => p.seeds.includes(s)));
    const total = (side: 'baseMs' | 'newMs') => seeds.map((s) => ps.reduce((a, p) => a + p[side][p.seeds.indexOf(s)], 0));
    const baseTotalMs = total('baseMs');
    const newTotalMs = total('newMs');
    const deltas = newTotalMs.map((v, i) => v - baseTotalMs[i]);
    const g: GroupDiff = {
      group,
      pairs: ps.length,
      seeds,
      baseTotalMs,
      newTotalMs,
      baseMeanMs: avg(baseTotalMs),
      newMeanMs: avg(newTotalMs),
      deltaMs: avg(deltas),
      deltaSeMs: sd(deltas) / Math.sqrt(deltas.length),
      partialSeeds: all.filter((s) => !seeds.includes(s)),
    };
    // Each side against its own best single paths: the freeze bound and goodput ratio per pair, the total ratio per group.
    const judge = (mean: number, best: (p: PairDiff) => number | undefined, ok: (p: PairDiff) => boolean | undefined, okG: (p: PairDiff) => boolean | undefined) => {
      if (!ps.every((p) => best(p) !== undefined)) return undefined;
      const bestMs = ps.reduce((a, p) => a + (best(p) as number), 0);
      const ratio = bestMs > 0 ? mean / bestMs : mean === 0 ? 0 : Number.POSITIVE_INFINITY;
      return { bestMs, within: ps.filter((p) => ok(p)).length, met: ps.every((p) => ok(p) === true && okG(p) === true) && ratio <= TOTAL_FREEZE_RATIO };
    };
    const jb = judge(
      g.baseMeanMs,
      (p) => p.baseBestMs,
      (p) => p.baseOk,
      (p) => p.baseGoodputOk,
    );
    const jn = judge(
      g.newMeanMs,
      (p) => p.newBestMs,
      (p) => p.newOk,
      (p) => p.newGoodputOk,
    );
    if (jb) [g.baseBestMs, g.baseWithin, g.baseMet] = [jb.bestMs, jb.within, jb.met];
    if (jn) [g.newBestMs, g.newWithin, g.newMet] = [jn.bestMs, jn.within, jn.met];
    g.worst = ps.reduce<PairDiff | undefined>((w, p) => (p.deltaMs > (w?.deltaMs ?? 0) ? p : w), undefined);
    groups.push(g);
  }
  return {
    config,
    pairs,
    groups,
    unmatchedBase: b.size - matched.length,
    unmatchedNew: n.size - matched.length,
    singles: { base: bSrc, new: nSrc },
  };
}

const s = (ms: number, d = 2) => (Number.isFinite(ms) ? (ms / 1000).toFixed(d) : '-');
const per = (xs: readonly number[]) => xs.map((x) => s(x)).join(' / ');
const signed = (ms: number) => (Number.isFinite(ms) ? `${ms >= 0 ? '+' : ''}${(ms / 1000).toFixed(2)}` : '-');
const yn = (ok: boolean | undefined) => (ok === undefined ? '-' : ok ? 'yes' : '**no**');
const ratio = (num: number, den: number | undefined) => (den === undefined ? '-' : den > 0 ? `${(num / den).toFixed(2)}x` : num === 0 ? '0.00x' : 'inf');

/** The comparison as text: one table per group, then (with `pairs`) one row per pair. */
export function renderPairedDiff(d: PairedDiff, opts: { pairs?: boolean } = {}): string {
  const lines: string[] = [];
  lines.push(`# ${d.config}: new vs base, paired by (variant, seed)`, '');
  if (d.unmatchedBase + d.unmatchedNew > 0) lines.push(`Unpaired runs left out: ${d.unmatchedBase} only in base, ${d.unmatchedNew} only in new.`, '');
  lines.push(
    `Best single paths: base from ${d.singles.base === 'own' ? 'its own' : d.singles.base === 'other' ? "new's" : 'no'} single:* runs, new from ${d.singles.new === 'own' ? 'its own' : d.singles.new === 'other' ? "base's" : 'no'}. Acceptance per pair: freeze <= best single + ${PAIR_FREEZE_SLACK_MS / 1000} s, goodput >= ${PAIR_GOODPUT_RATIO}x; per half: total <= ${TOTAL_FREEZE_RATIO}x the best single paths'.`,
    '',
    '| group | pairs | seeds | base total s (per seed) | new total s (per seed) | delta s +- SE | best single s base / new | ratio base / new | within base / new | worst pair (delta s) | met base / new |',
    '| --- | ---: | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const g of d.groups) {
    const se = Number.isFinite(g.deltaSeMs) ? ` +- ${s(g.deltaSeMs)}` : '';
    lines.push(
      `| ${g.group} | ${g.pairs} | ${g.seeds.join(',')} | ${s(g.baseMeanMs)} (${per(g.baseTotalMs)}) | ${s(g.newMeanMs)} (${per(g.newTotalMs)}) | ${signed(g.deltaMs)}${se} | ${g.baseBestMs === undefined ? '-' : s(g.baseBestMs)} / ${g.newBestMs === undefined ? '-' : s(g.newBestMs)} | ${ratio(g.baseMeanMs, g.baseBestMs)} / ${ratio(g.newMeanMs, g.newBestMs)} | ${g.baseWithin ?? '-'} / ${g.newWithin ?? '-'} of ${g.pairs} | ${g.worst ? `${g.worst.variant} (${signed(g.worst.deltaMs)})` : 'none worse'} | ${yn(g.baseMet)} / ${yn(g.newMet)} |`,
    );
  }
  for (const g of d.groups)
    if (g.partialSeeds.length > 0 || g.seeds.length === 0)
      lines.push(
        '',
        `${g.group}: ${g.seeds.length === 0 ? 'no seed is paired for every pair, no per-seed totals; ' : ''}seeds ${g.partialSeeds.join(',')} left out of the totals (not paired for every pair; --pairs lists each pair's seeds).`,
      );
  if (opts.pairs) {
    lines.push(
      '',
      '| pair | half | base s (per seed) | new s (per seed) | delta s | best single s base / new | over bound (freeze or goodput) base / new |',
      '| --- | --- | --- | --- | ---: | --- | --- |',
    );
    for (const p of d.pairs) {
      const over = (ok: boolean | undefined) => (ok === undefined ? '-' : ok ? 'no' : '**yes**');
      lines.push(
        `| ${p.variant} | ${p.half ?? '-'} | ${s(p.baseMeanMs)} (${per(p.baseMs)}) | ${s(p.newMeanMs)} (${per(p.newMs)}) | ${signed(p.deltaMs)} | ${p.baseBestMs === undefined ? '-' : s(p.baseBestMs)} / ${p.newBestMs === undefined ? '-' : s(p.newBestMs)} | ${over(p.baseOk === undefined ? undefined : p.baseOk && p.baseGoodputOk === true)} / ${over(p.newOk === undefined ? undefined : p.newOk && p.newGoodputOk === true)} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
