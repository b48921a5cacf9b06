/**
 * Side-by-side comparison of the simulator and the browser on one scenario
 * (`npm run fidelity`): the four QoE numbers of src/feedback/qoe-metrics.ts
 * and the tolerance each must meet for the simulator to stand for the browser
 * (issue "The browser benchmark really uses every path", item 5): goodput
 * and fps within 15 %, p95 latency within 25 %, freeze total within 25 % or
 * 500 ms. Differences are relative to the browser (the measurement the
 * simulator models). Pure.
 */

/** The four numbers compared, as both instruments report them. */
export interface QoeNumbers {
  fps: number;
  /** Sum of freeze durations (ms). */
  freezeTotalMs: number;
  goodputBps: number;
  /** End-to-end latency p95 (ms). */
  latencyP95Ms: number;
}

export type MetricName = keyof QoeNumbers;

/** Tolerance of one metric: relative (fraction of the browser's value), or an absolute slack that also passes. */
export interface Tolerance {
  rel: number;
  abs?: number;
}

export const TOLERANCES: Record<MetricName, Tolerance> = {
  fps: { rel: 0.15 },
  freezeTotalMs: { rel: 0.25, abs: 500 },
  goodputBps: { rel: 0.15 },
  latencyP95Ms: { rel: 0.25 },
};

export interface MetricComparison {
  metric: MetricName;
  sim: number;
  browser: number;
  /** (sim - browser) / browser; undefined when the browser's value is 0. */
  relDiff: number | undefined;
  within: boolean;
}

/** Compare one scenario's numbers. Non-finite inputs are never within tolerance. */
export function compareQoe(sim: QoeNumbers, browser: QoeNumbers, tol: Record<MetricName, Tolerance> = TOLERANCES): MetricComparison[] {
  return (Object.keys(tol) as MetricName[]).map((metric) => {
    const s = sim[metric];
    const b = browser[metric];
    const t = tol[metric];
    const diff = s - b;
    const relDiff = b !== 0 && Number.isFinite(diff) ? diff / Math.abs(b) : undefined;
    const finite = Number.isFinite(s) && Number.isFinite(b);
    const within = finite && ((t.abs !== undefined && Math.abs(diff) <= t.abs) || (relDiff !== undefined ? Math.abs(relDiff) <= t.rel : diff === 0));
    return { metric, sim: s, browser: b, relDiff, within };
  });
}

/** Mean of the simulator's seeds. */
export function meanQoe(runs: readonly QoeNumbers[]): QoeNumbers {
  const n = runs.length;
  const m = (k: MetricName): number => (n ? runs.reduce((a, r) => a + r[k], 0) / n : NaN);
  return { fps: m('fps'), freezeTotalMs: m('freezeTotalMs'), goodputBps: m('goodputBps'), latencyP95Ms: m('latencyP95Ms') };
}

const fmt: Record<MetricName, (x: number) => string> = {
  fps: (x) => x.toFixed(1),
  freezeTotalMs: (x) => x.toFixed(0),
  goodputBps: (x) => (x / 1e6).toFixed(2),
  latencyP95Ms: (x) => x.toFixed(0),
};
const LABEL: Record<MetricName, string> = { fps: 'fps', freezeTotalMs: 'freeze total (ms)', goodputBps: 'goodput (Mbps)', latencyP95Ms: 'p95 latency (ms)' };

/** Markdown table: one row per scenario, sim / browser / difference per metric, OUT where outside tolerance. */
export function renderFidelityMd(rows: Array<{ scenario: string; durationS: number; comparisons: MetricComparison[] }>, notes: string[] = []): string {
  const metrics = Object.keys(TOLERANCES) as MetricName[];
  const head = `| scenario | s | ${metrics.map((m) => `${LABEL[m]} sim / browser (diff)`).join(' | ')} |`;
  const sep = `|${' --- |'.repeat(metrics.length + 2)}`;
  const lines = [head, sep];
  for (const r of rows) {
    const cells = metrics.map((m) => {
      const c = r.comparisons.find((x) => x.metric === m);
      if (!c) return '-';
      const d = c.relDiff === undefined ? 'n/a' : `${c.relDiff >= 0 ? '+' : ''}${(100 * c.relDiff).toFixed(0)}%`;
      return `${fmt[m](c.sim)} / ${fmt[m](c.browser)} (${d})${c.within ? '' : ' **OUT**'}`;
    });
    lines.push(`| ${r.scenario} | ${r.durationS} | ${cells.join(' | ')} |`);
  }
  lines.push(
    '',
    'Tolerances (difference relative to the browser): fps and goodput 15 %, p95 latency 25 %, freeze total 25 % or 500 ms. Metrics: src/feedback/qoe-metrics.ts (one definition for simulator, call report and browser benchmark). Simulator: mean of the seeds; browser: one `bench:browser` run of `converge`.',
  );
  for (const n of notes) lines.push('', `- ${n}`);
  return `${lines.join('\n')}\n`;
}
