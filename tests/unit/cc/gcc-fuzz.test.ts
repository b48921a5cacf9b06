/** Property tests: garbage in never throws and never yields a NaN / negative / infinite rate. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GccEstimator } from '../../../src/cc/gcc.js';
import type { PathReport } from '../../../src/core/types.js';

const num = fc.oneof(fc.double(), fc.integer({ min: -10, max: 5000 }), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0xffff_ffff, 2 ** 53, -0, 1e300));
const seq = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: -5, max: 2 ** 32 + 5 }), num);

const arrival = fc.oneof(
  fc.record({ pathSeq: seq, arrivalUs: num }),
  fc.record({ pathSeq: fc.integer({ min: 0, max: 300 }), arrivalUs: fc.integer({ min: 0, max: 20_000_000 }) }),
  fc.constant(null),
  fc.anything(),
);

const report = fc.oneof(
  fc.record({
    pathId: fc.integer({ min: 0, max: 10 }),
    beginSeq: seq,
    endSeq: seq,
    arrivals: fc.array(arrival, { maxLength: 40 }),
    reportTimeUs: num,
  }),
  fc.anything(),
);

type Op = { kind: 'send'; seq: number; size: number; dt: number } | { kind: 'report'; report: unknown; dt: number } | { kind: 'tick'; dt: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('send' as const), seq: seq, size: num, dt: fc.integer({ min: 0, max: 20_000 }) }),
  fc.record({ kind: fc.constant('report' as const), report, dt: fc.integer({ min: 0, max: 100_000 }) }),
  fc.record({ kind: fc.constant('tick' as const), dt: fc.oneof(fc.integer({ min: 0, max: 2_000_000 }), num) }),
);

function checkFinite(g: GccEstimator): void {
  const bad: string[] = [];
  const t = g.targetRateBps();
  if (!(Number.isFinite(t) && t >= 100_000 && t <= 50_000_000)) bad.push(`target ${t}`);
  for (const [k, v] of Object.entries(g.stats())) if (typeof v === 'number' && Number.isNaN(v)) bad.push(k);
  if (!(Number.isFinite(g.srttMs()) && g.srttMs() > 0)) bad.push('srtt');
  if (!(Number.isFinite(g.minRttMs()) && g.minRttMs() > 0)) bad.push('minRtt');
  if (!(g.lossRate() >= 0 && g.lossRate() <= 1)) bad.push('loss');
  if (!(g.inflightBytes() >= 0 && Number.isFinite(g.inflightBytes()))) bad.push('inflight');
  const acked = g.ackedRateBps();
  if (acked !== undefined && !(Number.isFinite(acked) && acked >= 0)) bad.push('acked');
  if (bad.length > 0) expect(bad).toEqual([]);
}

describe('GccEstimator under garbage (fast-check)', () => {
  it('random sends, reports (unknown/duplicate/reordered seqs, lying or NaN times) and ticks never throw or yield a bad rate', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const g = new GccEstimator({ historyPackets: 256 });
        let now = 0;
        for (const o of ops) {
          if (o.kind === 'send') {
            now += o.dt;
            g.onPacketSent({ pathSeq: o.seq, sizeBytes: o.size, sendTimeUs: now });
          } else if (o.kind === 'report') {
            now += o.dt;
            g.onReport(o.report as PathReport, now);
          } else {
            g.onTick(Number.isFinite(o.dt) && o.dt >= 0 ? (now += o.dt) : o.dt);
          }
          checkFinite(g);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('plausible traffic with shuffled, duplicated and time-warped reports stays sane', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: -200_000, max: 200_000 }), fc.boolean()), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        (chunks, base) => {
          const g = new GccEstimator();
          let now = 0;
          let s = 0;
          const sent: number[] = [];
          for (const [n, warp, dup] of chunks) {
            for (let k = 0; k < n; k++) {
              const q = (base + s++) >>> 0;
              g.onPacketSent({ pathSeq: q, sizeBytes: 1200, sendTimeUs: now });
              sent.push(q);
              now += 1000;
            }
            const pick = sent.slice(-n - 5).filter((_, i) => (i * 7 + n) % 3 !== 0);
            const arrivals = pick.map((p, i) => ({ pathSeq: p, arrivalUs: 1e12 + now + warp * (i % 2 ? 1 : -1) }));
            const r: PathReport = { pathId: 0, beginSeq: pick[0] ?? base, endSeq: pick[pick.length - 1] ?? base, arrivals, reportTimeUs: 1e12 + now + warp };
            g.onReport(r, now + 40_000);
            if (dup) g.onReport(r, now + 41_000);
            g.onTick(now + 42_000);
            now += 50_000;
            checkFinite(g);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
