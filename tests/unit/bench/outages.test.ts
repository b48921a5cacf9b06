import { describe, expect, it } from 'vitest';
import { linkOutages, mergeSpans, splitFreezes } from '../../../bench/browser/outages.js';
import { parseMahimahi } from '../../../sim/net/traces.js';

/** A mahimahi trace: one opportunity per ms in [0, 10 s), one per second in [10 s, 15 s), none in [15 s, 16 s), dense again to 20 s. */
function trace(): string {
  const t: number[] = [];
  for (let ms = 1; ms < 10_000; ms++) t.push(ms);
  for (let ms = 11_000; ms < 15_000; ms += 1000) t.push(ms);
  for (let ms = 16_000; ms <= 20_000; ms++) t.push(ms);
  return t.join('\n');
}

describe('linkOutages', () => {
  const capacity = parseMahimahi(trace(), 'test');

  it('finds a sparse stretch (one packet a second) as one outage, gaps merged', () => {
    expect(linkOutages({ capacity }, 0, 20_000)).toEqual([[10_000, 16_000]]);
  });

  it('ignores gaps shorter than minGapMs and clips to the asked span', () => {
    expect(linkOutages({ capacity }, 0, 20_000, 2001)).toEqual([]);
    expect(linkOutages({ capacity }, 0, 20_000, 1500)).toEqual([[14_001, 16_000]]);
    expect(linkOutages({ capacity }, 12_500, 20_000)).toEqual([[12_500, 16_000]]);
    expect(linkOutages({ capacity }, 0, 9_000)).toEqual([]);
  });

  it('follows the trace offset and the loop, and adds down periods', () => {
    expect(linkOutages({ capacity, traceOffsetMs: 5_000 }, 0, 20_000)).toEqual([[5_000, 11_000]]);
    expect(linkOutages({ capacity }, 20_000, 40_000)).toEqual([[30_000, 36_000]]);
    expect(linkOutages({ capacity, downPeriods: [[1_000, 2_000]] }, 0, 20_000)).toEqual([
      [1_000, 2_000],
      [10_000, 16_000],
    ]);
  });

  it('rejects a bad span', () => {
    expect(() => linkOutages({ capacity }, 5, 1)).toThrow(RangeError);
    expect(() => linkOutages({ capacity }, 0, 1, 0)).toThrow(RangeError);
  });
});

describe('splitFreezes', () => {
  it('splits freeze time into uplink outage, downlink-only outage and outside, after the latency shift', () => {
    // Downlink out 10-20 s, uplink out 13-15 s; shifted by 500 ms: 10.5-20.5 and 13.5-15.5.
    const s = splitFreezes(
      [
        [11_000, 16_000], // 2 s in the uplink outage, 3 s downlink-only
        [20_000, 22_000], // 0.5 s downlink-only, 1.5 s outside
        [30_000, 30_400], // outside
      ],
      [[13_000, 15_000]],
      [[10_000, 20_000]],
      500,
    );
    expect(s.inUplinkOutageMs).toBe(2_000);
    expect(s.inDownlinkOnlyOutageMs).toBe(3_500);
    expect(s.outsideMs).toBe(1_900);
    expect(s.downlinkOutages).toEqual([[10_500, 20_500]]);
  });

  it('merges spans', () => {
    expect(
      mergeSpans([
        [5, 6],
        [0, 2],
        [2, 3],
        [7, 7],
      ]),
    ).toEqual([
      [0, 3],
      [5, 6],
    ]);
  });
});
