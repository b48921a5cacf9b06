/**
 * `npm run call -- [--scenario FILE.json] [--duration S] [--codec h264|vp8|vp9|av1]
 *   [--scheduler converge|minrtt|mtput|mrtp|roundrobin|single] [--single-path N]
 *   [--fec path|webrtc-table|none] [--video FILE.y4m | --synthetic] [--out DIR] [--seed N]`
 *
 * Runs a real two-browser call over emulated paths, prints a QoE summary and
 * writes DIR/report.json and DIR/report.html (default DIR: out/call). The
 * camera shows a natural clip from ../shared/media (converted once with
 * ffmpeg, cached under out/media); `--synthetic` uses Chromium's own pattern.
 * `--scenario` takes a file or the name of one in sim/net/scenarios.
 * Exit status 1 when no frame was decoded or an enabled path carried < 1% of
 * the media (tools/harness/path-usage.ts).
 */
import { type CliValues, numberOption, runCli, UsageError } from './cli.js';
import { formatSummary } from './harness/report.js';
import { runCall } from './harness/run-call.js';
import { resolveSource } from './harness/clip.js';
import { scenarioFile } from '../sim/net/scenario-files.js';
import { fecPolicyNames, isFecPolicyName } from '../src/fec/factory.js';
import { isSchedulerName, schedulerEntry, schedulerNames } from '../src/sched/factory.js';
import { registerAllStrategies } from '../src/strategies.js';

// Every shipped strategy by name (the library registers only the defaults).
registerAllStrategies();

const USAGE = `usage: npm run call -- [--scenario FILE.json] [--duration S] [--codec h264|vp8|vp9|av1]
       [--scheduler ${schedulerNames().join('|')}] [--single-path N]
       [--fec ${fecPolicyNames().join('|')}] [--video FILE.y4m | --synthetic] [--width W --height H --fps F] [--out DIR] [--seed N] [--mtu BYTES] [--playout-max-ms MS]
  --scenario: a scenario file, or a name from sim/net/scenarios (default, carriers, capacity-drop, blackhole, ...)`;

const OPTIONS = {
  scenario: { type: 'string' },
  duration: { type: 'string', default: '30' },
  codec: { type: 'string', default: 'h264' },
  scheduler: { type: 'string', default: 'converge' },
  'single-path': { type: 'string' },
  fec: { type: 'string', default: 'path' },
  video: { type: 'string' },
  synthetic: { type: 'boolean', default: false },
  width: { type: 'string', default: '640' },
  height: { type: 'string', default: '480' },
  fps: { type: 'string', default: '30' },
  out: { type: 'string', default: 'out/call' },
  seed: { type: 'string', default: '1' },
  mtu: { type: 'string' },
  'playout-max-ms': { type: 'string' },
} as const;

async function main(values: CliValues<typeof OPTIONS>): Promise<number> {
  const num = numberOption;
  const codec = values.codec as string;
  if (!['h264', 'vp8', 'vp9', 'av1'].includes(codec)) throw new UsageError(`--codec must be h264, vp8, vp9 or av1, got ${codec}`);
  if (!isSchedulerName(values.scheduler)) throw new UsageError(`--scheduler must be one of ${schedulerNames().join(', ')}, got ${values.scheduler}`);
  if (schedulerEntry(values.scheduler)?.needsSinglePath && values['single-path'] === undefined) throw new UsageError(`--scheduler ${values.scheduler} needs --single-path N`);
  if (!isFecPolicyName(values.fec)) throw new UsageError(`--fec must be one of ${fecPolicyNames().join(', ')}, got ${values.fec}`);
  const width = num('width', values.width, 16, 3840);
  const height = num('height', values.height, 16, 2160);
  const fps = num('fps', values.fps, 1, 60);
  const log = (l: string) => process.stderr.write(`${l}\n`);
  const source = resolveSource({ video: values.video, synthetic: values.synthetic, width, height, fps, log });
  const { report, outDir } = await runCall({
    scenario: values.scenario === undefined ? undefined : scenarioFile(values.scenario),
    durationS: num('duration', values.duration, 3, 3600),
    codec: codec as 'h264',
    scheduler: values.scheduler,
    singlePath: values['single-path'] !== undefined ? num('single-path', values['single-path'], 0, 7) : undefined,
    fec: values.fec,
    video: source.file,
    source,
    width,
    height,
    fps,
    out: values.out,
    seed: num('seed', values.seed, 0, 2 ** 31),
    mtuBytes: values.mtu !== undefined ? num('mtu', values.mtu, 256, 1200) : undefined,
    playoutMaxMs: values['playout-max-ms'] !== undefined ? num('playout-max-ms', values['playout-max-ms'], 0, 10_000) : undefined,
    log,
  });
  process.stdout.write(`\n${formatSummary(report)}\n`);
  if (outDir) process.stdout.write(`\nreport: ${outDir}/report.json and ${outDir}/report.html\n`);
  if (report.pathUsage && !report.pathUsage.ok) {
    process.stderr.write(`call: an enabled path carried (almost) no media:\n${report.pathUsage.problems.map((p) => `  ${p}`).join('\n')}\n`);
    return 1;
  }
  return report.frames.decoded > 0 ? 0 : 1;
}

runCli(OPTIONS, USAGE, 'call', main);
