/**
 * `npm run bench:relays -- [--switches N] [--every S] [--scheduler NAME] [--handover hold|none] [--out DIR]`
 *
 * Issue 16's relay-switch freeze, measured: a real two-browser call whose
 * two paths run through coturn relays on 127.0.0.1 (each behind its own
 * emulated link, tools/harness/coturn.ts); every `--every` seconds one path
 * moves to a relay no path used before (paths alternate), N times. For each
 * switch it prints the longest gap between decoded frames that ends within
 * 3 s after the switch, beside the longest gap of the 3 s before it (the
 * control: what the loaded machine does with no switch), and how each page's
 * RouteSwitch ended (new pair selected after how long, path held or not).
 * Then the distribution (median, worst) over the switches, against the
 * issue's 500 ms target. Exit status 1 when a switch did not move the path
 * (no 'switched' event on either page) or no frame was decoded.
 *
 * Runs Chromium: on a shared machine wrap it in `flock /tmp/mprtc-browser.lock`.
 */
import { type CliValues, intOption, numberOption, runCli, UsageError } from './cli.js';
import { parseScenario } from '../sim/net/scenario.js';
import { runCall, SWITCH_WINDOW_MS, type RelaySwitchPlan } from './harness/run-call.js';
import { isSchedulerName, schedulerNames } from '../src/sched/factory.js';
import { registerAllStrategies } from '../src/strategies.js';

registerAllStrategies();

const USAGE = `usage: npm run bench:relays -- [--switches N (1..6)] [--every S] [--scheduler ${schedulerNames().join('|')}] [--handover hold|none] [--out DIR]`;

const OPTIONS = {
  switches: { type: 'string', default: '5' },
  every: { type: 'string', default: '6' },
  scheduler: { type: 'string', default: 'converge' },
  handover: { type: 'string', default: 'none' },
  out: { type: 'string', default: 'out/relay-switch' },
} as const;

const FIRST_SWITCH_S = 8;

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function main(values: CliValues<typeof OPTIONS>): Promise<number> {
  const n = intOption('switches', values.switches, 1, 6);
  const every = numberOption('every', values.every, 2 * (SWITCH_WINDOW_MS / 1000), 60);
  if (!isSchedulerName(values.scheduler)) throw new UsageError(`--scheduler must be one of ${schedulerNames().join(', ')}`);
  const handover = values.handover;
  if (handover !== 'hold' && handover !== 'none') throw new UsageError(`--handover must be hold or none, got ${handover}`);
  // Paths 0 and 1 start on relays 0 and 1; switch k moves path k mod 2 onto relay k + 2 (never used before,
  // so each switch allocates on a fresh coturn).
  const relays = n + 2;
  const link = (k: number) => ({ name: `relay${k}`, up: { rateMbps: 4, delayMs: 10 + 5 * (k % 3), queue: { ms: 200 } } });
  const scenario = parseScenario({ name: 'relay-switch', paths: Array.from({ length: relays }, (_, k) => link(k)) }, process.cwd());
  const plans: RelaySwitchPlan[] = Array.from({ length: n }, (_, k) => ({ atS: FIRST_SWITCH_S + k * every, pathId: k % 2, relay: k + 2 }));
  const durationS = FIRST_SWITCH_S + n * every + 2;
  const log = (l: string) => process.stderr.write(`${l}\n`);
  const { report, overlay } = await runCall({
    out: values.out,
    scenario,
    durationS,
    scheduler: values.scheduler,
    overlay: { callPaths: 2, relaySwitches: plans, relayHandover: handover },
    log,
  });
  const sw = overlay?.switches ?? [];
  const fmt = (r?: { phase: string; elapsedMs: number; held: boolean }) => (r ? `${r.phase} ${r.elapsedMs} ms${r.held ? ' held' : ''}` : '-');
  const lines = [
    `relay switches: scheduler ${values.scheduler}, handover ${handover}, ${n} switches every ${every} s`,
    '| t (s) | path -> relay | gap after (ms) | gap ended (ms after switch) | control gap before (ms) | sender page (media out) | receiver page (offerer) |',
    '|---|---|---|---|---|---|---|',
    ...sw.map((s) => `| ${s.atS} | ${s.pathId} -> ${s.relay} | ${s.gapMs} | ${s.gapEndMs} | ${s.controlGapMs} | ${fmt(s.routeSender)} | ${fmt(s.routeReceiver)} |`),
  ];
  const gaps = sw.map((s) => s.gapMs);
  const ctl = sw.map((s) => s.controlGapMs);
  if (sw.length > 0) {
    lines.push(
      '',
      `gap after switch: median ${quantile(gaps, 0.5)} ms, worst ${Math.max(...gaps)} ms, over 500 ms: ${gaps.filter((g) => g > 500).length}/${gaps.length}`,
      `control (no switch): median ${quantile(ctl, 0.5)} ms, worst ${Math.max(...ctl)} ms`,
      `frames decoded ${report.frames.decoded} of ${report.frames.sent} sent; freezes ${report.freezes.count} (${report.freezes.totalMs} ms); keyframe requests ${report.keyframeRequests}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  const moved = sw.every((s) => s.routeSender?.phase === 'switched' || s.routeReceiver?.phase === 'switched');
  if (!moved || sw.length !== n) {
    process.stderr.write('relay-switch: a switch did not move its path (no new candidate pair selected on either page)\n');
    return 1;
  }
  if (!(report.frames.decoded > 0)) return 1;
  return 0;
}

runCli(OPTIONS, USAGE, 'relay-switch', main);
