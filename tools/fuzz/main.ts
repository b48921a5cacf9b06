/**
 * `npm run fuzz -- --inputs N [--seed S] [--only name,...] [--no-attacks] [--json out.json]`
 *
 * Fuzzes every decoder (wire decode, depacketizer, FEC decoder, the receiver
 * through Endpoint, the signalling protocol parser) with N inputs in total
 * (split evenly), then runs the crafted memory/CPU attacks on the receiver.
 * Prints inputs, crashes, time per input, heap growth and CPU per packet per
 * attack; exits 1 on any crash or when an attack exceeds the budgets of
 * issue 11 (heap growth > 64 MB, mean CPU > 20 µs per packet).
 * Run with `node --expose-gc` (the npm script does) for exact heap numbers.
 */
import { writeFileSync } from 'node:fs';
import { type CliValues, intOption, runCli } from '../cli.js';
import { ATTACKS, runAttack, type AttackResult } from './attacks.js';
import { TARGETS, runTarget, type TargetResult } from './targets.js';

export const MAX_HEAP_GROWTH_MB = 64;
export const MAX_MEAN_US_PER_PACKET = 20;

const USAGE = 'usage: npm run fuzz -- --inputs N [--seed S] [--only name,...] [--no-attacks] [--json out.json]';

const OPTIONS = {
  inputs: { type: 'string', default: '100000' },
  seed: { type: 'string', default: '1' },
  only: { type: 'string' },
  'no-attacks': { type: 'boolean', default: false },
  json: { type: 'string' },
} as const;

function main(values: CliValues<typeof OPTIONS>): number {
  const inputs = intOption('inputs', values.inputs, 0, Number.MAX_SAFE_INTEGER);
  const seed = intOption('seed', values.seed, -(2 ** 31), 2 ** 32 - 1);
  const only = values.only?.split(',').map((s) => s.trim().toLowerCase());
  const targets = TARGETS.filter((t) => !only || only.some((o) => t.name.toLowerCase().includes(o)));
  const perTarget = Math.ceil(inputs / Math.max(1, targets.length));

  const out = (s: string) => process.stdout.write(`${s}\n`);
  out(
    `fuzz: ${inputs} inputs over ${targets.length} targets (${perTarget} each), seed ${seed}, gc ${typeof (globalThis as { gc?: unknown }).gc === 'function' ? 'exposed' : 'NOT exposed (run node --expose-gc)'}`,
  );
  const results: TargetResult[] = [];
  for (const t of targets) {
    const r = runTarget(t, perTarget, seed);
    results.push(r);
    out(
      `  ${r.name.padEnd(22)} inputs ${String(r.inputs).padStart(9)}  crashes ${String(r.crashes).padStart(4)}  mean ${r.meanUsPerInput.toFixed(1).padStart(7)} µs  max ${(r.maxUsPerInput / 1000).toFixed(2).padStart(7)} ms  (${(r.inputs / (r.wallMs / 1000)).toFixed(0)} inputs/s)`,
    );
    if (r.reached) out(`    reached: ${r.reached}`);
    for (const e of r.examples) out(`    crash: ${e}`);
  }

  const attacks: AttackResult[] = [];
  let failed = results.some((r) => r.crashes > 0);
  if (!values['no-attacks']) {
    out('attacks (receiver through Endpoint; heap = V8 heap + ArrayBuffers retained after GC):');
    out(
      `  ${'attack'.padEnd(20)} ${'packets'.padStart(8)} ${'MB in'.padStart(7)} ${'heap +MB'.padStart(9)} ${'peak +MB'.padStart(9)} ${'µs/pkt'.padStart(7)} ${'p99 µs'.padStart(7)} ${'max µs'.padStart(8)} ${'cold'.padStart(6)}  held (fb/dp/fec MB)  memory drops`,
    );
    for (const a of ATTACKS) {
      // The first run warms the JIT up (a long call's receiver is warm); the second is reported, the first's mean shown as "cold".
      const cold = runAttack(a);
      const r = runAttack(a);
      r.coldMeanUsPerPacket = cold.meanUsPerPacket;
      attacks.push(r);
      const bad = r.heapGrowthMB > MAX_HEAP_GROWTH_MB || r.meanUsPerPacket > MAX_MEAN_US_PER_PACKET;
      if (bad) failed = true;
      const h = r.heldBytes;
      const d = Object.entries(r.memoryDrops)
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      out(
        `  ${r.name.padEnd(20)} ${String(r.packets).padStart(8)} ${(r.bytesIn / 2 ** 20).toFixed(0).padStart(7)} ${r.heapGrowthMB.toFixed(1).padStart(9)} ${r.peakGrowthMB.toFixed(1).padStart(9)} ${r.meanUsPerPacket.toFixed(2).padStart(7)} ${r.p99UsPerPacket.toFixed(1).padStart(7)} ${r.maxUsPerPacket.toFixed(0).padStart(8)} ${(r.coldMeanUsPerPacket ?? 0).toFixed(1).padStart(6)}  ${(h.frameBuffer / 2 ** 20).toFixed(1)}/${(h.depacketizer / 2 ** 20).toFixed(1)}/${(h.fec / 2 ** 20).toFixed(1)}  ${d || '-'}${bad ? '  FAIL' : ''}`,
      );
    }
    const worstHeap = attacks.reduce((m, r) => Math.max(m, r.heapGrowthMB), 0);
    const worstCpu = attacks.reduce((m, r) => Math.max(m, r.meanUsPerPacket), 0);
    out(`  worst heap growth ${worstHeap.toFixed(1)} MB (budget ${MAX_HEAP_GROWTH_MB}); worst mean CPU ${worstCpu.toFixed(2)} µs/packet (budget ${MAX_MEAN_US_PER_PACKET})`);
  }
  const crashes = results.reduce((s, r) => s + r.crashes, 0);
  out(`total: ${results.reduce((s, r) => s + r.inputs, 0)} inputs, ${crashes} crashes${failed ? ' -> FAIL' : ' -> ok'}`);
  if (values.json) writeFileSync(values.json, JSON.stringify({ inputs, seed, targets: results, attacks }, null, 2));
  return failed ? 1 : 0;
}

runCli(OPTIONS, USAGE, 'fuzz', main);
