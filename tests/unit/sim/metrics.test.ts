import { describe, expect, it } from 'vitest';
import { type DecodedFrame, framesDropped, freezeStats, latencyStats, PacketTransmission, perSecondQoe, streamQoe } from '../../../sim/metrics.js';
import { encodeFec, encodeMedia, encodePacket } from '../../../src/wire/encode.js';

/** Decode times (µs) from a list of intervals (ms), starting at `startUs`. */
function times(intervalsMs: number[], startUs = 0): number[] {
  const out = [startUs];
  for (const ms of intervalsMs) out.push(out[out.length - 1] + ms * 1000);
  return out;
}

describe('freezeStats (WebRTC: interval >= max(3 avg, avg + 150 ms), avg over last 30 incl. current, >= 5 intervals)', () => {
  it('no freeze at a steady 30 fps', () => {
    expect(freezeStats(times(new Array(100).fill(1000 / 30))).count).toBe(0);
  });

  it('one 500 ms gap after 9 intervals of 33.3 ms is one freeze of 500 ms', () => {
    // avg = (9 * 33.333 + 500) / 10 = 80 -> threshold max(240, 230) = 240 <= 500
    const f = freezeStats(times([...new Array(9).fill(100 / 3), 500, ...new Array(10).fill(100 / 3)]));
    expect(f.count).toBe(1);
    expect(f.totalMs).toBeCloseTo(500, 6);
    expect(f.maxMs).toBeCloseTo(500, 6);
    expect(f.list[0].atUs).toBeCloseTo(300_000, 0);
  });

  it('a 200 ms gap is not a freeze at 30 fps (threshold ~ avg + 150 with the gap in the average)', () => {
    // 29 x 33.33 + 200 -> avg = (966.67 + 200) / 30 = 38.89 -> threshold max(116.7, 188.9) = 188.9 <= 200: freeze
    expect(freezeStats(times([...new Array(29).fill(100 / 3), 200])).count).toBe(1);
    // 185 ms: avg = 38.39 -> threshold 188.4 > 185: no freeze
    expect(freezeStats(times([...new Array(29).fill(100 / 3), 185])).count).toBe(0);
  });

  it('needs 5 intervals before detecting', () => {
    expect(freezeStats(times([33, 33, 33, 1000])).count).toBe(0);
    expect(freezeStats(times([33, 33, 33, 33, 1000])).count).toBe(1);
  });

  it('3x rule dominates at low frame rates: 10 fps, 450 ms gap', () => {
    // 9 x 100 + 450: avg = 135 -> threshold max(405, 285) = 405 <= 450
    expect(freezeStats(times([...new Array(9).fill(100), 450])).count).toBe(1);
    // 9 x 100 + 380: avg = 128 -> max(384, 278) = 384 > 380
    expect(freezeStats(times([...new Array(9).fill(100), 380])).count).toBe(0);
  });
});

describe('other metrics', () => {
  it('framesDropped counts ids up to the newest decoded one that never came out', () => {
    expect(framesDropped([0, 1, 2, 5, 6])).toBe(2);
    expect(framesDropped([0, 1, 2])).toBe(0);
    expect(framesDropped([])).toBe(0);
    expect(framesDropped([3])).toBe(3);
  });

  it('latencyStats: mean and type-7 percentiles', () => {
    const l = latencyStats([10, 20, 30, 40, 50]);
    expect(l.mean).toBe(30);
    expect(l.p50).toBe(30);
    expect(l.p95).toBeCloseTo(48, 9); // h = 4 * 0.95 = 3.8 -> 40 + 0.8 * 10
    expect(latencyStats([]).p95).toBe(0);
  });

  it('streamQoe: hand-computed call', () => {
    // 10 frames of 1000 bytes, decoded every 100 ms from t = 1 s, each 50 ms after capture; frame 4 lost.
    const dec: DecodedFrame[] = [];
    for (let i = 0; i < 10; i++) {
      if (i === 4) continue;
      const d = 1_000_000 + i * 100_000;
      dec.push({ frameId: i, captureUs: d - 50_000, decodedUs: d, bytes: 1000 });
    }
    const q = streamQoe(dec, 12, 2_000_000);
    expect(q.frames).toEqual({ sent: 12, decoded: 9, dropped: 1 });
    expect(q.fps).toBe(9); // 9 frames over 1 s (first decode at 1 s, end at 2 s)
    expect(q.latencyMs.p95).toBe(50);
    expect(q.goodputBps).toBe(72_000); // 9000 bytes * 8 / 1 s (first decode at 1 s to the end at 2 s)
    expect(q.framesOutOfOrder).toBe(0);
    expect(q.freezes.count).toBe(0); // 200 ms gap among 100 ms intervals: avg 111 -> threshold 333
  });

  it('perSecondQoe buckets by decode second', () => {
    const dec: DecodedFrame[] = [
      { frameId: 0, captureUs: 0, decodedUs: 100_000, bytes: 1 },
      { frameId: 1, captureUs: 900_000, decodedUs: 1_000_000, bytes: 1 },
      { frameId: 2, captureUs: 1_000_000, decodedUs: 1_200_000, bytes: 1 },
    ];
    const s = perSecondQoe(dec, 3);
    expect(s.map((x) => x.fps)).toEqual([1, 2, 0]);
    expect(s[1].latencyP50Ms).toBe(150);
    expect(s[1].ifdMeanMs).toBe(550); // (900 + 200) / 2
  });
});

describe("PacketTransmission (AggDeliv's packet transmission time)", () => {
  const media = (flowSeq: number, captureUs: number, retransmission = false) =>
    encodePacket(
      { pathId: 0, pathSeq: flowSeq, sendTimeUs: captureUs },
      'media',
      encodeMedia({ streamId: 0, flowSeq, frameId: 1, fragIndex: 0, fragCount: 1, keyFrame: false, nalClass: 0, priority: 6, captureUs, retransmission, payload: new Uint8Array(100) }),
    );

  it('counts the first copy of each media packet, arrival - capture, and nothing else', () => {
    const t = new PacketTransmission();
    t.onArrival(media(1, 1_000_000), 1_030_000); // 30 ms
    t.onArrival(media(2, 1_000_000), 1_050_000); // 50 ms
    t.onArrival(media(2, 1_000_000), 1_020_000); // a duplicate (probe copy): not counted again
    t.onArrival(media(3, 1_000_000, true), 1_400_000); // a retransmission: not counted
    t.onArrival(
      encodePacket(
        { pathId: 0, pathSeq: 9, sendTimeUs: 0 },
        'fec',
        encodeFec({ streamId: 0, baseSeq: 1, mask: new Uint8Array([3]), lengthXor: 0, parity: new Uint8Array(10), protectsPath: 0, fecSeq: 0 }),
      ),
      2_000_000,
    );
    t.onArrival(new Uint8Array([0xff, 0xff, 0xff]), 2_000_000); // malformed: ignored
    expect(t.stats()).toEqual({ mean: 40, p95: 50, max: 50, packets: 2 }); // p95: nearest rank
  });

  it('is all zeros without packets', () => {
    expect(new PacketTransmission().stats()).toEqual({ mean: 0, p95: 0, max: 0, packets: 0 });
  });

  it('keeps constant memory: p95 from a 0.1 ms histogram (nearest rank), exact mean and max, streams merged', () => {
    const a = new PacketTransmission();
    const b = new PacketTransmission();
    for (let i = 1; i <= 100; i++) (i % 2 ? a : b).add(i); // 1..100 ms over two streams
    b.add(12_345.6); // beyond the histogram's range: the last bin, max exact
    const s = PacketTransmission.merged([a, b]);
    expect(s.packets).toBe(101);
    expect(s.max).toBe(12_345.6);
    expect(s.p95).toBe(96); // rank ceil(0.95 x 101) = 96
    expect(s.mean).toBeCloseTo((5050 + 12_345.6) / 101, 1);
    expect(a.stats().p95).toBe(95); // odd values 1..99: rank 48 -> 95
  });
});
