/**
 * `npm run bench:browser -- --scenario FILE.json|default
 *    [--compare converge,minrtt,native-webrtc:0,native-webrtc:1] [--duration S]
 *    [--video FILE.y4m | --synthetic] [--fec path|webrtc-table|none] [--codec h264|vp8|vp9|av1]
 *    [--max-bitrate BPS] [--track canvas|generator] [--sample-every N] [--no-ssim] [--no-source-check] [--no-audio] [--native-audio] [--dc-worker receiver|both] [--rtp-carrier | --no-rtp-carrier] [--rtp-carrier-attach stall|connect] [--pacer burstMs=40,pacingFactor=2.5] [--departure-times | --no-departure-times] [--seed N] [--out DIR]`
 *
 * Compares our multipath call (one entry per scheduler) with plain Chromium
 * WebRTC over one path at a time, each through the same emulated paths, with
 * frame ids drawn into the picture: fps, freezes, draw->display latency,
 * PSNR/SSIM, keyframe requests, goodput; and (ours) audio from the fake
 * microphone: concealment and mouth-to-ear p95 (`--no-audio` turns it off). Writes DIR/results.json,
 * DIR/summary.md and DIR/report.html (default DIR: out/bench-browser/<scenario>).
 */
import { type CliValues, numberOption, runCli, UsageError } from '../../tools/cli.js';
import { compareEntriesHelp, parseCompare } from '../compare.js';
import { fecPolicyNames } from '../../src/fec/factory.js';
import { runBench } from './run.js';
import { DEFAULT_SCENARIO, loadScenario } from '../../sim/net/scenario.js';
import { scenarioFile } from '../../sim/net/scenario-files.js';

const USAGE = `usage: npm run bench:browser -- --scenario FILE.json|default
       [--compare converge,minrtt,native-webrtc:0,native-webrtc:1] [--duration S]
       [--video FILE.y4m | --synthetic] [--fec ${fecPolicyNames().join('|')}] [--codec h264|vp8|vp9|av1]
       [--max-bitrate BPS] [--track canvas|generator] [--sample-every N] [--no-ssim] [--no-source-check] [--no-audio] [--native-audio] [--dc-worker receiver|both] [--rtp-carrier | --no-rtp-carrier] [--rtp-carrier-attach stall|connect] [--pacer K=V,...] [--departure-times | --no-departure-times] [--seed N] [--out DIR]
  --native-audio: Chromium's WebRTC sends the fake microphone too (the load our call carries with audio)
  --dc-worker: ours serves its datachannels from a worker (MultipathCallOptions.datachannelWorker) on the media
      receiver's page (where the arrival stamps are taken) or on both pages (the sender's sends then take a hop)
  --rtp-carrier: ours, MultipathCallOptions.rtpCarrier: true on both pages (attach 'connect'). Without any of the three
      carrier flags ours runs the library's default (the carrier on, attach 'stall': media on an RTP carrier while a
      path's datachannel is stalled)
  --no-rtp-carrier: ours with rtpCarrier: false (the datachannels only)
  --rtp-carrier-attach: with rtpCarrier.attach (when the carrier is negotiated: stall, the default, or connect)
  --pacer: ours, MultipathCallOptions.pacer fields (burstMs, pacingFactor; numbers), e.g. burstMs=40,pacingFactor=2.5
  --departure-times / --no-departure-times: ours, MultipathCallOptions.departureTimes true / false on both pages (send
      times at the datachannel departure); neither: the library's default. Recorded in results.json notes and extras
  --compare entries: ${compareEntriesHelp()}, native-webrtc:N; SCHED+EST or single:N+EST runs ours with that
      registered estimator instead of GCC (e.g. single:0+gcc-lossv2; bench/compare.ts)`;

const OPTIONS = {
  scenario: { type: 'string', default: 'default' },
  compare: { type: 'string', default: 'converge,minrtt,native-webrtc:0,native-webrtc:1' },
  duration: { type: 'string', default: '20' },
  video: { type: 'string' },
  synthetic: { type: 'boolean', default: false },
  fec: { type: 'string', default: 'path' },
  codec: { type: 'string', default: 'h264' },
  'max-bitrate': { type: 'string', default: '6000000' },
  track: { type: 'string', default: 'generator' },
  'sample-every': { type: 'string', default: '5' },
  'no-ssim': { type: 'boolean', default: false },
  'no-source-check': { type: 'boolean', default: false },
  'no-audio': { type: 'boolean', default: false },
  'native-audio': { type: 'boolean', default: false },
  'dc-worker': { type: 'string' },
  'rtp-carrier': { type: 'boolean', default: false },
  'no-rtp-carrier': { type: 'boolean', default: false },
  'rtp-carrier-attach': { type: 'string' },
  pacer: { type: 'string' },
  'departure-times': { type: 'boolean', default: false },
  'no-departure-times': { type: 'boolean', default: false },
  width: { type: 'string', default: '640' },
  height: { type: 'string', default: '480' },
  fps: { type: 'string', default: '30' },
  seed: { type: 'string', default: '1' },
  out: { type: 'string' },
} as const;

/** The carrier flags to MultipathCallOptions.rtpCarrier; none given: the library's default, attach 'stall'. */
function rtpCarrierOption(on: boolean, off: boolean, attach: string | undefined): boolean | 'connect' | 'stall' {
  if (off && (on || attach !== undefined)) throw new UsageError('--no-rtp-carrier excludes --rtp-carrier and --rtp-carrier-attach');
  if (off) return false;
  if (attach === undefined) return on ? true : 'stall';
  if (attach !== 'connect' && attach !== 'stall') throw new UsageError(`--rtp-carrier-attach must be stall or connect, got ${attach}`);
  return attach;
}

function dcWorker(v: string | undefined): 'receiver' | 'both' | undefined {
  if (v === undefined) return undefined;
  if (v !== 'receiver' && v !== 'both') throw new UsageError(`--dc-worker must be receiver or both, got ${v}`);
  return v;
}

/** `--pacer burstMs=40,pacingFactor=2.5` -> MultipathCallOptions.pacer. */
function pacerOption(v: string | undefined): { burstMs?: number; pacingFactor?: number } | undefined {
  if (v === undefined) return undefined;
  const out: { burstMs?: number; pacingFactor?: number } = {};
  for (const kv of v.split(',').filter(Boolean)) {
    const [k, x] = kv.split('=');
    const n = Number(x);
    if ((k !== 'burstMs' && k !== 'pacingFactor') || x === undefined || !(Number.isFinite(n) && n >= 0)) {
      throw new UsageError(`--pacer: want burstMs=MS,pacingFactor=F (numbers >= 0), got "${kv}"`);
    }
    out[k] = n;
  }
  return out;
}

/** `--departure-times` / `--no-departure-times` -> MultipathCallOptions.departureTimes; neither: undefined (the library's default). */
function departureTimesOption(on: boolean, off: boolean): boolean | undefined {
  if (on && off) throw new UsageError('--departure-times excludes --no-departure-times');
  return on ? true : off ? false : undefined;
}

async function main(values: CliValues<typeof OPTIONS>): Promise<number> {
  const num = numberOption;
  const scenario = values.scenario === 'default' ? DEFAULT_SCENARIO : loadScenario(scenarioFile(values.scenario!));
  const scenarioName = scenario.name ?? 'default';
  const codec = values.codec!;
  if (!['h264', 'vp8', 'vp9', 'av1'].includes(codec)) throw new UsageError(`--codec must be h264, vp8, vp9 or av1, got ${codec}`);
  const track = values.track!;
  if (track !== 'canvas' && track !== 'generator') throw new UsageError(`--track must be canvas or generator, got ${track}`);
  if (values.video && values.synthetic) throw new UsageError('--video and --synthetic exclude each other');
  const configs = parseCompare(values.compare!, { numPaths: scenario.paths.length, defaultFec: values.fec, native: true, estimators: true });
  const { results, outDir } = await runBench({
    scenario,
    configs,
    durationS: num('duration', values.duration, 3, 3600),
    video: values.video,
    synthetic: values.synthetic,
    width: num('width', values.width, 64, 3840),
    height: num('height', values.height, 48, 2160),
    fps: num('fps', values.fps, 1, 60),
    codec,
    maxBitrateBps: num('max-bitrate', values['max-bitrate'], 0, 100e6),
    track,
    sampleEvery: num('sample-every', values['sample-every'], 1, 1000),
    ssim: !values['no-ssim'],
    sourceCheck: !values['no-source-check'],
    audio: !values['no-audio'],
    nativeAudio: values['native-audio'],
    datachannelWorker: dcWorker(values['dc-worker']),
    rtpCarrier: rtpCarrierOption(values['rtp-carrier'] === true, values['no-rtp-carrier'] === true, values['rtp-carrier-attach']),
    pacer: pacerOption(values.pacer),
    departureTimes: departureTimesOption(values['departure-times'] === true, values['no-departure-times'] === true),
    seed: num('seed', values.seed, 0, 2 ** 31),
    out: values.out ?? `out/bench-browser/${scenarioName.replace(/[^\w.-]+/g, '_')}`,
    log: (l) => process.stderr.write(`${l}\n`),
  });
  const { renderSummaryMd } = await import('./render.js');
  process.stdout.write(`\n${renderSummaryMd(results)}\nresults: ${outDir}/results.json, ${outDir}/summary.md, ${outDir}/report.html\n`);
  const unused = results.results.flatMap((r) => (r.pathUsage?.problems ?? []).map((p) => `${r.name}: ${p}`));
  if (unused.length) {
    process.stderr.write(`bench:browser: an enabled path carried (almost) no media:\n${unused.map((u) => `  ${u}`).join('\n')}\n`);
    return 1;
  }
  return results.results.every((r) => r.frames.displayed > 0) ? 0 : 1;
}

runCli(OPTIONS, USAGE, 'bench:browser', main);
