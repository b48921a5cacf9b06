/**
 * Short version of `npm run fuzz`: a few thousand inputs over every decoder
 * (no crash allowed) and the crafted attacks scaled down, checking that the
 * receiver's buffers stay within their byte budgets. Heap and CPU numbers are
 * printed by the CLI, not asserted here (timing on a loaded machine flakes).
 */
import { describe, expect, it } from 'vitest';
import { ATTACKS, runAttack } from '../../../tools/fuzz/attacks.js';
import { RECEIVER_BUDGET_BYTES, TARGETS, runTarget } from '../../../tools/fuzz/targets.js';

describe('fuzz (short)', () => {
  for (const t of TARGETS) {
    it(`${t.name}: 800 random / mutated / extreme inputs, no crash`, () => {
      const r = runTarget(t, 800, 12345);
      expect(r.examples).toEqual([]);
      expect(r.crashes).toBe(0);
      expect(r.inputs).toBe(800);
      // The inputs must get past the first validation check (structure-aware generation), or the run proves little.
      const depth: Record<string, RegExp> = {
        'receiver (Endpoint)': /frames assembled [1-9]\d*.*FEC-recovered [1-9]/,
        depacketizer: /frames completed [1-9]/,
        'fec decoder': /recovered [1-9]/,
        'wire decode': /media [1-9]/,
        'signalling protocol': /valid messages [1-9]/,
      };
      expect(r.reached).toMatch(depth[t.name]!);
    });
  }

  it('crafted attacks keep every receiver buffer within its budget and reset NACK on big jumps', () => {
    for (const name of ['16x1100 incomplete', 'fec pending', 'flowSeq jump 1k-32k']) {
      const base = ATTACKS.find((a) => a.name === name)!;
      // Scaled down: the first 4,000 packets.
      const r = runAttack({
        ...base,
        packets: function* () {
          let n = 0;
          for (const p of base.packets()) {
            if (n++ >= 4000) return;
            yield p;
          }
        },
      });
      expect(r.packets).toBe(4000);
      expect(r.heldBytes.frameBuffer).toBeLessThanOrEqual(RECEIVER_BUDGET_BYTES.frameBuffer);
      expect(r.heldBytes.depacketizer).toBeLessThanOrEqual(RECEIVER_BUDGET_BYTES.depacketizer);
      expect(r.heldBytes.fec).toBeLessThanOrEqual(RECEIVER_BUDGET_BYTES.fec);
      if (name === 'flowSeq jump 1k-32k') expect(r.memoryDrops.nackWindowResets).toBeGreaterThan(3900);
      else expect(r.memoryDrops.fecBudget).toBeGreaterThan(0);
    }
  });
});
