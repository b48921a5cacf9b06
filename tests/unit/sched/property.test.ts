/**
 * Property: every scheduler assigns every packet exactly once, only to up
 * paths, for random path snapshots, batches and QoE feedback.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_PATHS, NalClass, type Priority, type OutgoingPacket, type PathState, type QoeFeedback } from '../../../src/core/types.js';
import { createScheduler, SCHEDULER_NAMES } from '../../../src/sched/factory.js';

const num = fc.oneof({ weight: 8, arbitrary: fc.double({ min: 0, max: 1e8, noNaN: true }) }, { weight: 1, arbitrary: fc.constantFrom(0, Number.NaN, -5, Number.POSITIVE_INFINITY) });

const pathArb: fc.Arbitrary<PathState> = fc.record({
  id: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 0, max: 3 }) }, { weight: 1, arbitrary: fc.constantFrom(-1, 9, 2.5) }),
  up: fc.boolean(),
  rateBps: num,
  goodputBps: num,
  srttMs: fc.oneof(fc.double({ min: 0, max: 2000, noNaN: true }), fc.constant(Number.NaN)),
  minRttMs: fc.double({ min: 0, max: 2000, noNaN: true }),
  lossRate: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(Number.NaN)),
  inflightBytes: num,
  queuedBytes: num,
});

const packetArb: fc.Arbitrary<OutgoingPacket> = fc
  .record({
    priority: fc.constantFrom(1, 2, 3, 4, 5, 6, 6, 6, 6, 9),
    size: fc.oneof(fc.integer({ min: 1, max: 1400 }), fc.constant(0)),
    fecFor: fc.option(fc.integer({ min: -1, max: 9 }), { nil: undefined }),
    retx: fc.boolean(),
  })
  .map(({ priority, size, fecFor, retx }) => ({
    streamId: 1,
    flowSeq: 0,
    frameId: 0,
    priority: priority as Priority,
    nalClass: NalClass.Other,
    sizeBytes: size,
    body: new Uint8Array(0),
    isFec: fecFor !== undefined || priority === 5,
    protectsPath: fecFor,
    isRetransmission: retx && priority === 1,
  }));

const feedbackArb: fc.Arbitrary<QoeFeedback> = fc.record({
  pathId: fc.integer({ min: -1, max: 8 }),
  alpha: fc.oneof(fc.integer({ min: -60, max: 60 }), fc.constant(Number.NaN)),
  fcdMs: fc.double({ min: 0, max: 200, noNaN: true }),
  seq: fc.integer({ min: 0, max: 40 }),
});

const stepArb = fc.record({
  paths: fc.array(pathArb, { maxLength: 5 }),
  packets: fc.array(packetArb, { maxLength: 60 }),
  feedback: fc.array(feedbackArb, { maxLength: 3 }),
  dtMs: fc.integer({ min: 0, max: 300 }),
});

describe('every scheduler assigns every packet exactly once to an up path', () => {
  for (const name of SCHEDULER_NAMES) {
    it(name, () => {
      fc.assert(
        fc.property(fc.array(stepArb, { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 3 }), (steps, single) => {
          const s = createScheduler(name, { singlePath: single });
          let now = 0;
          for (const st of steps) {
            now += st.dtMs * 1000;
            for (const f of st.feedback) s.onQoeFeedback(f, now);
            const out = s.schedule(st.packets, st.paths, now);
            // The first snapshot entry for an id decides whether it is up.
            const upIds = new Set<number>();
            const seenIds = new Set<number>();
            for (const p of st.paths) {
              if (!Number.isInteger(p.id) || p.id < 0 || p.id >= MAX_PATHS || seenIds.has(p.id)) continue;
              seenIds.add(p.id);
              if (p.up) upIds.add(p.id);
            }
            const allowed = name === 'single' ? new Set([...upIds].filter((i) => i === single)) : upIds;
            if (allowed.size === 0) {
              expect(out).toEqual([]);
              continue;
            }
            const main = out.filter((a) => !a.probe);
            const extra = out.filter((a) => a.probe === true);
            expect(main).toHaveLength(st.packets.length);
            const seen = new Set<OutgoingPacket>();
            main.forEach((a, k) => {
              expect(a.packet).toBe(st.packets[k]); // input order, each exactly once
              seen.add(a.packet);
              expect(allowed.has(a.pathId)).toBe(true);
            });
            expect(seen.size).toBe(st.packets.length);
            if (name !== 'converge') expect(extra).toHaveLength(0);
            expect(extra.length).toBeLessThanOrEqual(1);
            for (const a of extra) {
              expect(upIds.has(a.pathId)).toBe(true);
              // A disabled path, or (converge's best-path floor) an enabled one the deadline left idle.
              expect(!s.isEnabled(a.pathId) || !main.some((m) => m.pathId === a.pathId)).toBe(true);
              expect(st.packets.includes(a.packet)).toBe(true);
            }
            if (upIds.size === 1 && name !== 'single') {
              expect(main.every((a) => upIds.has(a.pathId))).toBe(true);
            }
          }
        }),
        { numRuns: 300 },
      );
    });
  }
});
