import { runCall } from './harness/run-call.js';
const codec = (process.argv[2] ?? 'vp8') as 'vp8';
const n = Number(process.argv[3] ?? 4);
for (let i = 0; i < n; i++) {
  const { report: r } = await runCall({ out: `/tmp/vp8loop/${codec}-${i}`, codec, durationS: 8 });
  console.log(codec, i, JSON.stringify(r.frames), r.fps, 'kfreq', r.keyframeRequests, 'freezes', JSON.stringify(r.freezes), 'lat', JSON.stringify(r.latencyMs));
}
