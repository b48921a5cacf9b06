/**
 * `npm run bench:relay-ramp -- [--seeds N] [--scheduler converge,overlay-ucb] [--pushback-queue 350,100]`
 *
 * How fast a path takes up a better route after a relay switch, in the
 * simulator: sim/scenarios.ts relaySwitchScenario, the scenario of
 * tests/unit/sim/overlay.test.ts "a relay switch mid-call" (path a direct
 * 1 Mbps until its relay grows from 0.5 to 4 Mbps at 5 s, the oracle relay
 * policy moves it there; path b 1.5 Mbps; 200 ms drop-tail queues). For each scheduler and congestion-window pushback queue
 * (SenderEngineConfig.pushbackQueueMs) it prints path a's mean send rate over
 * seconds 8-12 per seed, the mean and the worst seed, and how many seeds stay
 * under 1.2 Mbps (the direct route it left carried 1 Mbps): a run only climbs
 * when a probe lands early and its result survives the next over-use
 * (docs/results.md, stop 41), so read the count, not only the mean.
 *
 * Checks its own assumption: every run must have moved path a onto the relay
 * at the 5 s decision and not before (else exit 1: the scenario no longer
 * measures a switch).
 */
import { type CliValues, intOption, runCli, UsageError } from '../../tools/cli.js';
import { mean } from '../../sim/metrics.js';
import { RELAY_SWITCH_AT_S, relaySwitchScenario } from '../../sim/scenarios.js';
import { simulate } from '../../sim/simulator.js';
import { isSchedulerName } from '../../src/sched/factory.js';
import { registerAllStrategies } from '../../src/strategies.js';

registerAllStrategies();

const USAGE = 'usage: npm run bench:relay-ramp -- [--seeds N (1..50)] [--scheduler NAME[,NAME]] [--pushback-queue MS[,MS]]';

const OPTIONS = {
  seeds: { type: 'string', default: '12' },
  scheduler: { type: 'string', default: 'converge,overlay-ucb' },
  'pushback-queue': { type: 'string', default: '350,100' },
} as const;

/** Seconds whose send rate is averaged (the new route's ramp, 3-7 s after the switch). */
const FROM_S = 8;
const TO_S = 12;
/** A seed under this (bps) has not taken up the 4 Mbps route: the 1 Mbps direct route it left would do as much. */
const STUCK_BPS = 1_200_000;

const scenario = relaySwitchScenario(TO_S);

function list<T>(name: string, v: string, parse: (s: string) => T): T[] {
  const out = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(parse);
  if (out.length === 0 || out.length > 8) throw new UsageError(`--${name} takes 1 to 8 comma-separated values, got '${v}'`);
  return out;
}

function main(values: CliValues<typeof OPTIONS>): number {
  const seeds = intOption('seeds', values.seeds, 1, 50);
  const schedulers = list('scheduler', values.scheduler, (s) => {
    if (!isSchedulerName(s)) throw new UsageError(`--scheduler: unknown scheduler '${s}'`);
    return s;
  });
  const queues = list('pushback-queue', values['pushback-queue'], (s) => intOption('pushback-queue', s, 0, 5000));
  const lines = [
    `relay ramp: path a's send rate at ${FROM_S}-${TO_S} s after its relay switch at ${RELAY_SWITCH_AT_S} s (Mbps), seeds 1-${seeds}`,
    '',
    '| scheduler | pushback queue (ms) | mean | worst seed | seeds < 1.2 Mbps | goodput (Mbps) | per seed |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  let bad = 0;
  for (const scheduler of schedulers) {
    for (const pushbackQueueMs of queues) {
      const rates: number[] = [];
      const goodput: number[] = [];
      for (let seed = 1; seed <= seeds; seed++) {
        const r = simulate({ scenario, scheduler, fec: 'path', seed, relayPolicy: 'oracle', sender: { pushbackQueueMs } });
        const slots = r.overlay?.slots ?? [];
        const before = slots.find((s) => s.atS === RELAY_SWITCH_AT_S - 1)?.arms[0];
        const at = slots.find((s) => s.atS === RELAY_SWITCH_AT_S)?.arms[0];
        if (before !== 0 || at !== 1) {
          process.stderr.write(`relay-ramp: ${scheduler} seed ${seed}: path a was on route ${before} before ${RELAY_SWITCH_AT_S} s and ${at} at ${RELAY_SWITCH_AT_S} s (expected 0 then 1)\n`);
          bad++;
        }
        const secs = r.perSecond.filter((x) => x.t >= FROM_S && x.t <= TO_S);
        rates.push(secs.reduce((s, x) => s + x.paths[0].sendRateBps, 0) / Math.max(1, secs.length));
        goodput.push(r.goodputBps);
      }
      const mbps = (bps: number) => (bps / 1e6).toFixed(2);
      lines.push(
        `| ${scheduler} | ${pushbackQueueMs} | ${mbps(mean(rates))} | ${mbps(Math.min(...rates))} | ${rates.filter((x) => x < STUCK_BPS).length} / ${seeds} | ${mbps(mean(goodput))} | ${rates.map(mbps).join(' ')} |`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return bad > 0 ? 1 : 0;
}

runCli(OPTIONS, USAGE, 'relay-ramp', main);
