import { parseScenario } from '../../../sim/net/scenario.js';

/** Two constant-rate paths (5 Mbps / 20 ms, 3 Mbps / 40 ms, 150 ms queues): the simulator tests' small call. */
export const twoConstantPaths = parseScenario(
  {
    name: 'two-constant',
    paths: [
      { name: 'a', up: { rateMbps: 5, delayMs: 20, queue: { ms: 150 } } },
      { name: 'b', up: { rateMbps: 3, delayMs: 40, queue: { ms: 150 } } },
    ],
  },
  '.',
);
