/**
 * Worker thread of bench/sim/main.ts: runs {@link simulate} for each job it is
 * sent ({ id, opts }) and posts back { id, result, wallMs } or { id, error }.
 */
import { parentPort } from 'node:worker_threads';
import { type SimOptions, simulate } from '../../sim/simulator.js';

parentPort?.on('message', (msg: { id: number; opts: SimOptions }) => {
  const t0 = performance.now();
  try {
    const result = simulate(msg.opts);
    parentPort?.postMessage({ id: msg.id, result, wallMs: performance.now() - t0 });
  } catch (e) {
    parentPort?.postMessage({ id: msg.id, error: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e) });
  }
});
