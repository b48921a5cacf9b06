/**
 * summary.md section of `npm run bench -- --explain-freezes`: the freeze
 * attribution of sim/freeze-explain.ts summed per configuration. One table
 * of causes (freeze count, frozen seconds, share of the configuration's
 * frozen time, how many of them had another path with spare capacity), then
 * the longest freezes of each multipath configuration one by one. Path
 * names are the scenario's (`wifi`/`cellular`, a carrier's name, ...).
 */
import { type FreezeCause, causeLabel } from '../../sim/freeze-explain.js';
import { bestSingle } from './best-single.js';
import type { BenchEntry } from './report.js';

/** Longest freezes listed one by one per multipath configuration. */
const LISTED = 15;

/** The cause of `c` without the path name: `late:network+rtx`, `keyframe-wait`, ... */
export function coarseLabel(c: FreezeCause): string {
  if (c.cause === 'late') return `late:${c.where}${c.retransmitted ? '+rtx' : ''}`;
  if (c.cause !== 'no-frames' && c.path < 0) return `${c.cause}:unsent`;
  return c.cause;
}

interface Row {
  count: number;
  ms: number;
  usable: number;
  resendMs: number;
  resent: number;
}

/** The section's lines; [] when no run has freeze causes. */
export function renderFreezeCauses(entries: readonly BenchEntry[]): string[] {
  const withCauses = entries.filter((e) => e.result.freezeCauses !== undefined);
  if (withCauses.length === 0) return [];
  const configs = [...new Set(withCauses.map((e) => e.config))];
  const lines = [
    '## Freeze causes (`--explain-freezes`, stream 0, sim/freeze-explain.ts)',
    '',
    'Per configuration over every variant and seed: the cause of each freeze (the frame after the last one shown: never encoded = `no-frames`; never decoded, picture back at a key frame = `keyframe-wait`, at a later delta frame = `skipped`; decoded late = `late`, split by `loss` on its path (recovered), `sender` (capture -> last packet sent took longer than the network) or `network`, `+rtx` when its last packet was a retransmission), with how many had another path up with spare capacity (>= max(300 kbps, half the encoder target)) during the freeze, and for recovered losses the mean time from the first transmission of a lost packet to its retransmission (NACK round).',
    '',
    '| config | cause | freezes | frozen s | share % | other path usable | resend after ms |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const cfg of configs) {
    const rows = new Map<string, Row>();
    let total = 0;
    for (const e of withCauses.filter((x) => x.config === cfg)) {
      for (const c of e.result.freezeCauses ?? []) {
        const k = coarseLabel(c);
        const r = rows.get(k) ?? { count: 0, ms: 0, usable: 0, resendMs: 0, resent: 0 };
        r.count++;
        r.ms += c.ms;
        if (c.otherPathUsable) r.usable++;
        if (c.resendMs >= 0) {
          r.resendMs += c.resendMs;
          r.resent++;
        }
        rows.set(k, r);
        total += c.ms;
      }
    }
    const sorted = [...rows.entries()].sort((a, b) => b[1].ms - a[1].ms);
    for (const [k, r] of sorted)
      lines.push(
        `| ${cfg} | ${k} | ${r.count} | ${(r.ms / 1000).toFixed(2)} | ${total > 0 ? ((100 * r.ms) / total).toFixed(0) : '0'} | ${r.usable} | ${r.resent > 0 ? Math.round(r.resendMs / r.resent) : '-'} |`,
      );
  }
  lines.push('');
  for (const cfg of configs) {
    const all = withCauses
      .filter((e) => e.config === cfg && e.result.scheduler !== 'single')
      .flatMap((e) => (e.result.freezeCauses ?? []).map((c) => ({ e, c })))
      .sort((a, b) => b.c.ms - a.c.ms)
      .slice(0, LISTED);
    if (all.length === 0) continue;
    lines.push(
      `### ${cfg}: the ${all.length} longest freezes`,
      '',
      '| variant | seed | at s | ms | cause | frame: capture -> first / last sent, -> arrived (lost: resent after) ms | lost | other usable | target Mbps | per path: capacity / sent Mbps (state) | key frame requests |',
      '| --- | ---: | ---: | ---: | --- | --- | ---: | --- | ---: | --- | ---: |',
    );
    for (const { e, c } of all) {
      const names = e.result.paths.map((p) => p.name);
      const paths = c.paths.map((p) => `${names[p.id] ?? p.id} ${p.capacityMbps} / ${p.sentMbps}${p.up ? (p.enabled ? '' : ' (disabled)') : ' (down)'}`).join('; ');
      lines.push(
        `| ${e.variant} | ${e.result.seed} | ${c.atS.toFixed(2)} | ${c.ms} | ${causeLabel(c, names)} | ${c.frameId}: ${c.firstSendMs} / ${c.senderMs}, ${c.networkMs < 0 ? `lost${c.resendMs >= 0 ? ` (${c.resendMs})` : ''}` : c.networkMs} | ${c.lost} | ${c.otherPathUsable ? 'yes' : 'no'} | ${c.targetMbps} | ${paths} | ${c.keyframeRequests} |`,
      );
    }
    lines.push('');
  }
  lines.push(...renderAlignedFreezes(withCauses));
  lines.push(...renderKeyframeWaits(withCauses));
  return lines;
}

/** Closed intervals [from, to] in s. */
type Span = readonly [number, number];

/** Length (s) of the union of `spans`. */
export function unionS(spans: readonly Span[]): number {
  const sorted = [...spans].filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const [a, b] of sorted) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}

/** Length (s) of (union of `a`) ∩ (union of `b`): |A| + |B| - |A ∪ B|. */
export function overlapS(a: readonly Span[], b: readonly Span[]): number {
  return Math.max(0, unionS(a) + unionS(b) - unionS([...a, ...b]));
}

const spansOf = (e: BenchEntry): Span[] => (e.result.freezeSpans ?? e.result.freezeCauses?.map((c) => [c.atS, c.ms] as const) ?? []).map(([atS, ms]) => [atS, atS + ms / 1000] as const);

/** Per variant: its seeds' frozen seconds split by whether the other side was frozen at the same time. */
interface Aligned {
  /** Frozen s of the multipath configuration while the best single path was frozen too. */
  together: number;
  /** Frozen s of the multipath configuration while the best single path played. */
  alone: number;
  /** Frozen s of the best single path while the multipath configuration played. */
  rescued: number;
  seeds: number;
  best: string;
}

/**
 * Each multipath configuration's freezes laid over those of the variant's
 * best single path (the `single:i` with the least frozen time over the
 * seeds, as in the per-pair table), seed by seed, in simulated time: frozen
 * time both share (the trace took both down: the other path did not rescue
 * the call), frozen time only the multipath configuration has (multipath
 * made it worse), and the best single path's frozen time the multipath
 * configuration played through (multipath rescued it). Seconds per seed.
 * Needs `--explain-freezes` and `single:*` configurations in the run; [] otherwise.
 */
export function renderAlignedFreezes(entries: readonly BenchEntry[]): string[] {
  const singles = entries.filter((e) => e.result.scheduler === 'single');
  const multi = entries.filter((e) => e.result.scheduler !== 'single');
  if (singles.length === 0 || multi.length === 0) return [];
  const bestOf = new Map<string, string>();
  for (const v of new Set(singles.map((e) => e.variant))) {
    const per = new Map<string, { config: string; freezeMs: number; goodputBps: number; n: number }>();
    for (const e of singles.filter((x) => x.variant === v)) {
      const t = per.get(e.config) ?? { config: e.config, freezeMs: 0, goodputBps: 0, n: 0 };
      t.freezeMs += e.result.freezes.totalMs;
      t.goodputBps += e.result.goodputBps;
      t.n++;
      per.set(e.config, t);
    }
    // Means over seeds, then the per-pair table's rule (bench/sim/report.ts comparePairs).
    bestOf.set(v, bestSingle([...per.values()].map((t) => ({ ...t, freezeMs: t.freezeMs / t.n, goodputBps: t.goodputBps / t.n }))).config);
  }
  const lines: string[] = [];
  for (const cfg of new Set(multi.map((e) => e.config))) {
    const rows = new Map<string, Aligned>();
    for (const e of multi.filter((x) => x.config === cfg)) {
      const best = bestOf.get(e.variant);
      const s = best === undefined ? undefined : singles.find((x) => x.variant === e.variant && x.config === best && x.result.seed === e.result.seed);
      if (!s || best === undefined) continue;
      const m = spansOf(e);
      const b = spansOf(s);
      const both = overlapS(m, b);
      const r = rows.get(e.variant) ?? { together: 0, alone: 0, rescued: 0, seeds: 0, best };
      r.together += both;
      r.alone += unionS(m) - both;
      r.rescued += unionS(b) - both;
      r.seeds++;
      rows.set(e.variant, r);
    }
    if (rows.size === 0) continue;
    const sum = { together: 0, alone: 0, rescued: 0 };
    for (const r of rows.values()) {
      sum.together += r.together / r.seeds;
      sum.alone += r.alone / r.seeds;
      sum.rescued += r.rescued / r.seeds;
    }
    const f = (x: number) => x.toFixed(2);
    lines.push(
      `### ${cfg}: freezes against the best single path, in time`,
      '',
      "Seconds per seed. Together: both frozen at the same moment (the trace took both down; the other path did not rescue the call). Alone: only this configuration frozen (multipath made it worse). Rescued: the best single path frozen while this configuration played. Issue 10's bound per pair is together + alone <= together + rescued + 0.5 s.",
      '',
      '| variant | best single | together | alone | rescued |',
      '| --- | --- | ---: | ---: | ---: |',
      `| all (${rows.size} ${rows.size === 1 ? 'pair' : 'pairs'}) | | ${f(sum.together)} | ${f(sum.alone)} | ${f(sum.rescued)} |`,
    );
    const sorted = [...rows.entries()].filter(([, r]) => r.together + r.alone + r.rescued > 0).sort((a, b) => b[1].alone - a[1].alone || b[1].together - a[1].together);
    for (const [v, r] of sorted) lines.push(`| ${v} | ${r.best} | ${f(r.together / r.seeds)} | ${f(r.alone / r.seeds)} | ${f(r.rescued / r.seeds)} |`);
    lines.push('');
  }
  return lines;
}

/** Every `keyframe-wait` / `skipped` freeze of the multipath configurations with {@link FreezeCause.kf}: why its frame was lost, when the key frame was asked for, made, sent and received. */
function renderKeyframeWaits(entries: readonly BenchEntry[]): string[] {
  const all = entries
    .filter((e) => e.result.scheduler !== 'single')
    .flatMap((e) => (e.result.freezeCauses ?? []).filter((c) => c.kf !== undefined).map((c) => ({ e, c, kf: c.kf as NonNullable<FreezeCause['kf']> })))
    .sort((a, b) => b.c.ms - a.c.ms);
  if (all.length === 0) return [];
  const lines = [
    '### Frames never decoded: why, and the key frame that ended the freeze',
    '',
    "Times in ms from the freeze start (the last frame shown). Stuck frame: `unsent` (a fragment never sent: purged or dropped by the sender), `lost` (a fragment never arrived, never retransmitted), `rtx-lost` (retransmitted, no copy arrived), `late` (all arrived, after the receiver asked for a key frame), `complete` (all arrived before: reference chain or frame-buffer drop). Request: the receiver's first key frame request (reason), its requests sent, the sender's first request to the encoder. Key frame: captured, kB, capture -> last sent, -> last arrived, packets lost, path; earlier key frames not decoded.",
    '',
    '| config | variant | seed | at s | ms | cause | stuck frame (frags sent/of, resent, last arrival) | receiver request at (reason), requests | encoder asked at | key frame at, kB | key: send / network ms, lost, path | keys before |',
    '| --- | --- | ---: | ---: | ---: | --- | --- | --- | ---: | --- | --- | ---: |',
  ];
  for (const { e, c, kf } of all) {
    const names = e.result.paths.map((p) => p.name);
    lines.push(
      `| ${e.config} | ${e.variant} | ${e.result.seed} | ${c.atS.toFixed(2)} | ${c.ms} | ${c.cause} | ${kf.stuck} (${kf.fragsSent}/${kf.fragCount}, ${kf.resent}, ${kf.lastArrivalMs}) | ${kf.requestMs} (${kf.reason || '-'}), ${kf.requests} | ${kf.encoderRequestMs} | ${kf.keyCaptureMs}, ${(kf.keyBytes / 1000).toFixed(1)} | ${kf.keySendMs} / ${kf.keyNetworkMs}, ${kf.keyLost}, ${kf.keyPath >= 0 ? (names[kf.keyPath] ?? kf.keyPath) : '-'} | ${kf.keysBefore} |`,
    );
  }
  lines.push('');
  return lines;
}
