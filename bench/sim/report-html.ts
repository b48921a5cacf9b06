/**
 * report.html of `npm run bench` (bench/sim/main.ts): self-contained uPlot
 * charts per variant (per-path capacity vs sending rate, fps, IFD/FCD,
 * latency CDFs) from the first seed of each configuration.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type BenchEntry, renderSummary } from './report.js';

function uplotAssets(): { js: string; css: string } {
  const require = createRequire(import.meta.url);
  return {
    js: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    css: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
  };
}

/** Self-contained HTML: per variant (first 4), charts from the first seed of each configuration. */
export function renderHtml(scenario: string, entries: BenchEntry[]): string {
  const { js, css } = uplotAssets();
  const variants = [...new Set(entries.map((e) => e.variant))].slice(0, 4);
  const data = variants.map((v) => {
    const seen = new Set<string>();
    const runs = entries.filter((e) => e.variant === v && !seen.has(e.config) && seen.add(e.config));
    return {
      variant: v,
      runs: runs.map((e) => ({
        config: e.config,
        t: e.result.perSecond.map((p) => p.t),
        fps: e.result.perSecond.map((p) => p.fps),
        ifd: e.result.perSecond.map((p) => p.ifdMeanMs),
        fcd: e.result.perSecond.map((p) => p.fcdMeanMs),
        p95: e.result.perSecond.map((p) => p.latencyP95Ms),
        target: e.result.perSecond.map((p) => p.targetBitrateBps / 1e6),
        paths: e.result.paths.map((p) => ({
          id: p.id,
          name: p.name,
          cap: e.result.perSecond.map((s) => (s.paths[p.id]?.capacityBps ?? 0) / 1e6),
          send: e.result.perSecond.map((s) => (s.paths[p.id]?.sendRateBps ?? 0) / 1e6),
          rate: e.result.perSecond.map((s) => (s.paths[p.id]?.rateBps ?? 0) / 1e6),
        })),
        cdf: e.result.latencyCdfMs,
      })),
    };
  });
  const summary = renderSummary(scenario, entries, { seeds: 0, streams: entries[0]?.result.streams ?? 1, wallS: 0, fec: [...new Set(entries.map((e) => e.result.fecPolicy))] });
  const payload = JSON.stringify({ data, summary }).replace(/</g, '\\u003c');
  return `<!doctype html><html><head><meta charset="utf-8"><title>multipath-rtc simulator: ${scenario}</title>
<style>${css} body{font:13px system-ui,sans-serif;margin:16px} .chart{margin:8px 0;display:inline-block} pre{background:#f6f6f6;padding:8px;overflow:auto}</style>
</head><body><h2>multipath-rtc simulator: ${scenario}</h2><pre id="summary"></pre><div id="charts"></div>
<script>${js}</script>
<script>
const P = ${payload};
document.getElementById('summary').textContent = P.summary;
const colors = ['#1f77b4','#d62728','#2ca02c','#9467bd','#ff7f0e','#8c564b','#e377c2','#7f7f7f','#17becf','#bcbd22'];
const root = document.getElementById('charts');
function chart(parent, title, xs, series, yLabel, xLabel) {
  const el = document.createElement('div'); el.className = 'chart'; parent.appendChild(el);
  new uPlot({ title, width: 640, height: 240, scales: { x: { time: false } }, axes: [{ label: xLabel || 'time (s)' }, { label: yLabel }],
    series: [{ label: 'x' }, ...series.map((s, i) => ({ label: s.label, stroke: s.color || colors[i % colors.length], width: 1.4, dash: s.dash }))] },
    [xs, ...series.map(s => s.data)], el);
}
for (const v of P.data) {
  const h = document.createElement('h3'); h.textContent = v.variant + ' (first seed)'; root.appendChild(h);
  const sec = document.createElement('div'); root.appendChild(sec);
  for (const r of v.runs) {
    chart(sec, r.config + ': capacity vs sending rate (Mbps)', r.t, [
      ...r.paths.map((p, i) => ({ label: p.name + ' capacity', data: p.cap, color: colors[i], dash: [4, 4] })),
      ...r.paths.map((p, i) => ({ label: p.name + ' sent', data: p.send, color: colors[i] })),
      { label: 'encoder target', data: r.target, color: '#000' }], 'Mbps');
  }
  const t = v.runs[0] ? v.runs[0].t : [];
  chart(sec, 'decoded fps', t, v.runs.map(r => ({ label: r.config, data: r.fps })), 'fps');
  chart(sec, 'IFD: mean inter-frame decode interval (ms)', t, v.runs.map(r => ({ label: r.config, data: r.ifd })), 'ms');
  chart(sec, 'FCD: frame completion delay, receiver rolling mean (ms)', t, v.runs.map(r => ({ label: r.config, data: r.fcd })), 'ms');
  chart(sec, 'latency p95 per second (ms)', t, v.runs.map(r => ({ label: r.config, data: r.p95 })), 'ms');
  const pct = Array.from({ length: 51 }, (_, i) => i * 2);
  chart(sec, 'latency CDF (quantile plot): percentile -> ms', pct, v.runs.map(r => ({ label: r.config, data: r.cdf })), 'ms', 'percentile');
}
</script></body></html>`;
}
