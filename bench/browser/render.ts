/**
 * Output of the browser benchmark: summary.md (one table row per compared
 * configuration) and a self-contained report.html (uPlot inlined, as
 * tools/harness/report.ts does) with per-second fps, latency, goodput and
 * PSNR per configuration.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { BenchResult } from './metrics.js';
import { OUTAGE_MIN_GAP_MS } from './outages.js';

/** What results.json holds. */
export interface BenchResults {
  version: 1;
  scenario: string;
  source: { kind: 'y4m' | 'synthetic'; file?: string; width: number; height: number; fps: number; frames: number; track: string };
  codec: string;
  durationS: number;
  /** PSNR/SSIM sampling: every `sampleEvery`-th source frame id. */
  quality: { sampleEvery: number; ssim: boolean };
  createdAt: string;
  notes: string[];
  results: BenchResult[];
}

const f = (x: number | null | undefined, d = 1): string => (x === null || x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(d));
const mbps = (bps: number): string => (bps / 1e6).toFixed(2);

/**
 * Load per core (1-minute load average / cores) above which a configuration's
 * real-time numbers are flagged. The run itself (two Chromium pages, the
 * emulator, the bench) keeps a quiet 2-core machine at a load of 2-5; at 10-12
 * (helpers' simulator jobs on top) our call's audio mouth-to-ear grew to
 * 1.8-2.8 s and its video latency to 0.8 s while Chromium's native stack
 * (C++ threads) degraded far less, so an A/B between them measures the load.
 */
export const OVERLOAD_PER_CORE = 2.5;

/** The configurations whose 1-minute load average (start or end) was over {@link OVERLOAD_PER_CORE} per core, as `name (start / end on N cores)`. */
export function overloadedRuns(r: BenchResults): string[] {
  return r.results.flatMap((x) => {
    const l = (x.extras as { loadAvg1m?: { start?: number; end?: number; cores?: number } } | undefined)?.loadAvg1m;
    if (!l || typeof l.start !== 'number' || typeof l.end !== 'number') return [];
    const cores = l.cores && l.cores > 0 ? l.cores : 1;
    return Math.max(l.start, l.end) > OVERLOAD_PER_CORE * cores ? [`${x.name} (${l.start} / ${l.end} on ${cores} cores)`] : [];
  });
}

/** Markdown table of the configurations. */
export function renderSummaryMd(r: BenchResults): string {
  const head =
    '| configuration | fps | frames sent / decoded / displayed | freezes (count, total ms) | latency mean / p50 / p95 (ms) | PSNR mean / p5 (dB) | SSIM mean | keyframe req. | goodput (Mbps) | first frame (ms) | resolution | audio concealed % | audio mouth-to-ear p95 (ms) |';
  const sep = '|' + ' --- |'.repeat(13);
  const rows = r.results.map((x) => {
    const res = Object.entries(x.resolutions)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 2)
      .map(([k]) => k)
      .join(', ');
    return `| ${x.name} | ${f(x.fps)} | ${x.frames.sent} / ${x.frames.decoded} / ${x.frames.displayed} | ${x.freezes.count}, ${x.freezes.totalMs} | ${f(x.latencyMs.mean)} / ${f(x.latencyMs.p50)} / ${f(x.latencyMs.p95)} | ${f(x.psnr.mean, 2)} / ${f(x.psnr.p5, 2)} | ${f(x.ssim?.mean, 4)} | ${x.keyframeRequests} | ${mbps(x.goodputBps)} | ${x.firstFrameMs ?? '-'} | ${res || '-'} | ${f(x.audio?.concealedPct, 2)} | ${f(x.audio?.mouthToEarP95Ms, 0)} |`;
  });
  const src = r.source.kind === 'y4m' ? `Y4M ${r.source.file ?? ''}` : 'synthetic pattern';
  const overloaded = overloadedRuns(r);
  const lines = [
    `# Browser benchmark: scenario ${r.scenario}`,
    '',
    ...(overloaded.length
      ? [
          `**Measured on an overloaded machine** (1-minute load average over ${OVERLOAD_PER_CORE} per core, start / end): ${overloaded.join(', ')}. Our JavaScript pipeline degrades before Chromium's native stack does (latency, audio concealment, freezes): repeat these on a quiet machine before comparing them.`,
          '',
        ]
      : []),
    `${r.durationS} s per configuration; source ${src} ${r.source.width}x${r.source.height}@${r.source.fps} (${r.source.frames} frames, ${r.source.track} track); codec ${r.codec}.`,
    '',
    head,
    sep,
    ...rows,
    '',
    `fps: distinct source frames displayed per second from the first one on. Freezes: libwebrtc rule on display times. Latency: source draw -> receiver display (barcode ids, host clock). PSNR/SSIM: luma, every ${r.quality.sampleEvery}th source id (the same ids for every configuration), barcode excluded, received frame upscaled to the source size when smaller. Goodput (src/feedback/qoe-metrics.ts): media bytes delivered x 8 / seconds from the first frame on (ours: encoded bytes of decoded frames; native: RTP payload bytes received minus retransmissions). Audio (ours; target concealment <= 2 %, mouth-to-ear p95 <= 250 ms): 20 ms Opus frames from the fake microphone; concealed = webrtc-stats concealedSamples / totalSamplesReceived; mouth-to-ear = capture -> played out by the jitter buffer (the video latency's definition).`,
  ];
  const withRelay = r.results.filter((x) => x.relay);
  if (withRelay.length) {
    lines.push(
      '',
      '## What each path carried (relay counts, whole run)',
      '',
      '| configuration | path | media packets / MB delivered | share of media | feedback packets | check |',
      '| --- | --- | --- | --- | --- | --- |',
    );
    for (const x of withRelay) {
      for (const p of x.relay ?? []) {
        const checked = x.pathUsage?.checked.includes(p.pathId);
        const bad = x.pathUsage?.problems.some((q) => q.startsWith(`path ${p.pathId} `));
        lines.push(
          `| ${x.name} | ${p.pathId} (${p.name}) | ${p.up.deliveredPackets} / ${(p.up.deliveredBytes / 1e6).toFixed(2)} | ${p.sharePct}% | ${p.down.deliveredPackets} | ${bad ? '**UNUSED**' : checked ? 'ok' : 'not enabled'} |`,
        );
      }
    }
    const unused = r.results.flatMap((x) => (x.pathUsage?.problems ?? []).map((p) => `${x.name}: ${p}`));
    if (unused.length) lines.push('', '**An enabled path carried (almost) no media; this run does not measure what it claims:**', ...unused.map((u) => `- ${u}`));
  }
  const split = r.results.filter((x) => x.freezeSplit);
  if (split.length) {
    const s = (x: number) => (x / 1000).toFixed(1);
    lines.push(
      '',
      '## Where the freezes fell (s): in an outage of the media uplink, of the feedback downlink only, or outside both',
      '',
      '| configuration | frozen | in uplink outage | in downlink-only outage | outside | outages up / down (scenario s, moved by the median latency) |',
      '| --- | ---: | ---: | ---: | ---: | --- |',
    );
    const spans = (l: ReadonlyArray<readonly [number, number]>) => l.map(([a, b]) => `${s(a)}-${s(b)}`).join(', ') || '-';
    for (const x of split) {
      const f = x.freezeSplit!;
      lines.push(`| ${x.name} | ${s(x.freezes.totalMs)} | ${s(f.inUplinkOutageMs)} | ${s(f.inDownlinkOnlyOutageMs)} | ${s(f.outsideMs)} | ${spans(f.uplinkOutages)} / ${spans(f.downlinkOutages)} |`);
    }
    lines.push(
      '',
      `Outage: no delivery opportunity on the link for >= ${OUTAGE_MIN_GAP_MS} ms (touching gaps merged), union over the configuration's paths (with several paths, an outage of one while another works still counts as in an outage). Chromium's RTP media needs no acknowledgement, so a downlink-only outage costs it only its feedback (NACK, PLI, transport-cc); our media rides SCTP, whose sending waits for SACKs on the downlink.`,
    );
  }
  const dec = r.results.flatMap((x) => {
    const d = (x.extras as { decoder?: { decoded?: number; errors?: number } }).decoder;
    return d && typeof d.errors === 'number' ? [`${x.name} ${d.errors} / ${d.decoded ?? 0}`] : [];
  });
  const enc = r.results.flatMap((x) => {
    // extras.audio.sender: the sending page's audio digest (bench/browser/page/main.ts).
    const e = (x.extras as { audio?: { sender?: { encoder?: { targetBitrateBps?: number; frameDurationMs?: number; reconfigurations?: number } } } } | undefined)?.audio?.sender?.encoder;
    return e && typeof e.targetBitrateBps === 'number'
      ? [`${x.name} ${Math.round(e.targetBitrateBps / 1000)} kbps / ${Math.round(e.frameDurationMs ?? 0)} ms, ${e.reconfigurations ?? 0} change${e.reconfigurations === 1 ? '' : 's'}`]
      : [];
  });
  if (enc.length) lines.push('', `Microphone encoding at the end of the run (ours; Opus bitrate / frame duration from the paths' rate, and how many times it changed): ${enc.join(', ')}.`);
  if (dec.length) lines.push('', `Decoder errors / frames decoded (ours; the receiver's WebCodecs decoder, a delta frame without its reference is one): ${dec.join(', ')}.`);
  for (const n of r.notes) lines.push('', `- ${n}`);
  const errs = r.results.filter((x) => x.errors.length);
  if (errs.length) {
    lines.push('', '## Errors');
    for (const x of errs) lines.push(`- ${x.name}: ${x.errors.slice(0, 5).join(' | ')}`);
  }
  return `${lines.join('\n')}\n`;
}

function uplotAssets(): { js: string; css: string } {
  const require = createRequire(import.meta.url);
  return {
    js: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    css: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
  };
}

/** Self-contained HTML report with one series per configuration in each chart. */
export function renderReportHtml(r: BenchResults, summaryMd: string): string {
  const { js, css } = uplotAssets();
  const data = JSON.stringify(r).replace(/</g, '\\u003c');
  const md = JSON.stringify(summaryMd).replace(/</g, '\\u003c');
  return `<!doctype html><html><head><meta charset="utf-8"><title>multipath-rtc browser benchmark</title>
<style>${css} body{font:13px system-ui,sans-serif;margin:16px} .chart{margin:12px 0} pre{white-space:pre-wrap}</style>
</head><body><h2>Browser benchmark</h2><pre id="summary"></pre><div id="charts"></div>
<script>${js}</script>
<script>
const r = ${data};
document.getElementById('summary').textContent = ${md};
const colors = ['#1f77b4','#d62728','#2ca02c','#9467bd','#ff7f0e','#8c564b','#e377c2','#7f7f7f'];
const n = Math.max(0, ...r.results.map(x => x.perSecond.length));
const t = Array.from({ length: n }, (_, i) => i + 1);
function chart(title, f, yLabel) {
  const el = document.createElement('div'); el.className = 'chart';
  document.getElementById('charts').appendChild(el);
  const series = r.results.map(x => t.map((_, i) => { const p = x.perSecond[i]; const v = p ? f(p) : null; return v === undefined ? null : v; }));
  new uPlot({ title, width: 900, height: 260, scales: { x: { time: false } },
    axes: [{ label: 'time (s)' }, { label: yLabel }],
    series: [{ label: 't' }, ...r.results.map((x, i) => ({ label: x.name, stroke: colors[i % colors.length], width: 1.5, spanGaps: false }))] }, [t, ...series], el);
}
chart('Displayed fps (distinct source frames per second)', p => p.fps, 'fps');
chart('Latency draw -> display, p50 (ms)', p => p.latencyP50Ms, 'ms');
chart('Latency draw -> display, p95 (ms)', p => p.latencyP95Ms, 'ms');
chart('Goodput (Mbps)', p => p.goodputBps / 1e6, 'Mbps');
chart('PSNR (Y, dB), mean of sampled frames', p => p.psnrMean, 'dB');
</script></body></html>`;
}
