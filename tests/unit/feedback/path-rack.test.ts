import { describe, expect, it } from 'vitest';
import { PathRack } from '../../../src/feedback/path-rack.js';

const arr = (...seqs: number[]) => seqs.map((pathSeq) => ({ pathSeq, arrivalUs: 0 }));

describe('PathRack (RFC 8985 §6.2 per path)', () => {
  it('declares a packet lost once a later-sent one is delivered and the reorder window has passed', () => {
    const r = new PathRack();
    // pathSeq 0..3 sent 10 ms apart, flowSeqs 100..103; 1 is lost.
    for (let i = 0; i < 4; i++) r.onSent(i, i * 10_000, 100 + i);
    // Report at 60 ms lists 0 and 2: RACK.xmit_ts = 20 ms, RACK.rtt = 40 ms. Packet 1 (sent 10 ms)
    // is due at 10 + 40 + reoWnd: with a 5 ms window that is 55 ms <= 60 ms: lost.
    expect(r.onReport(arr(0, 2), 60_000, 5_000)).toEqual([101]);
    // Packet 3 was sent after RACK.xmit_ts: not judged.
    expect(r.c.lost).toBe(1);
    expect(r.nextCheckUs).toBe(Number.POSITIVE_INFINITY);
  });

  it('holds a packet inside the reorder window and declares it lost on the timer', () => {
    const r = new PathRack();
    for (let i = 0; i < 3; i++) r.onSent(i, i * 10_000, i);
    // Delivered 0 and 2 at 60 ms (rtt 40 ms); packet 1 due at 10 + 40 + 15 = 65 ms.
    expect(r.onReport(arr(0, 2), 60_000, 15_000)).toEqual([]);
    expect(r.nextCheckUs).toBe(65_000);
    expect(r.detect(64_000, 15_000)).toEqual([]);
    expect(r.detect(65_000, 15_000)).toEqual([1]);
  });

  it('a packet reordered within the window is not lost; one delivered after being declared lost counts as spurious', () => {
    const r = new PathRack();
    for (let i = 0; i < 4; i++) r.onSent(i, i * 10_000, i);
    expect(r.onReport(arr(0, 2), 60_000, 15_000)).toEqual([]);
    expect(r.onReport(arr(1), 62_000, 15_000)).toEqual([]);
    expect(r.c.lost).toBe(0);
    // Packet 3 declared lost (a later packet delivered), then reported after all.
    r.onSent(4, 40_000, 4);
    expect(r.onReport(arr(4), 100_000, 5_000)).toEqual([3]);
    r.onReport(arr(3), 110_000, 5_000);
    expect(r.c.spurious).toBe(1);
    expect(r.c.spuriousMedia).toBe(1);
  });

  it('never returns non-media or copies for a resend, but reports the delivery of copies', () => {
    const r = new PathRack();
    r.onSent(0, 0, -1); // FEC or padding
    r.onSent(1, 1_000, 7, false); // probe copy of flowSeq 7
    r.onSent(2, 2_000, 8);
    r.onSent(3, 3_000, 9, false);
    const delivered: number[] = [];
    expect(r.onReport(arr(3), 100_000, 1_000, (f) => delivered.push(f))).toEqual([8]);
    expect(delivered).toEqual([9]);
    expect(r.c.lost).toBe(3);
    expect(r.c.lostMedia).toBe(1);
  });

  it('ignores unknown, malformed and forgotten seqs; stays bounded across wrap and jumps', () => {
    const r = new PathRack(16);
    for (let i = 0; i < 40; i++) r.onSent((0xffff_fff0 + i) >>> 0, i * 1_000, i);
    const bad = [{ pathSeq: -1 }, { pathSeq: 1.5 }, null, { pathSeq: 12345 }] as unknown as { pathSeq: number }[];
    expect(r.onReport(bad, 50_000, 1_000)).toEqual([]);
    // Newest 16 are kept (seqs 0xffff_fff0 + 24..39, wrapped); delivering the newest marks the older kept ones lost.
    const lost = r.onReport(arr((0xffff_fff0 + 39) >>> 0), 200_000, 1_000);
    expect(lost).toEqual(Array.from({ length: 15 }, (_, k) => 24 + k));
    r.onSent(5_000_000, 300_000, 99); // a far jump resets the window
    expect(r.onReport(arr(5_000_000), 310_000, 1_000)).toEqual([]);
  });

  it('rejects a bad capacity', () => {
    expect(() => new PathRack(0)).toThrow(RangeError);
    expect(() => new PathRack(Number.NaN)).toThrow(RangeError);
  });
});
