import { describe, expect, it } from 'vitest';
import { FreezeRecorder, causeLabel } from '../../../sim/freeze-explain.js';
import type { DecodedFrame } from '../../../sim/metrics.js';
import { renderFreezeCauses } from '../../../bench/sim/report-freezes.js';
import type { BenchEntry } from '../../../bench/sim/report.js';
import type { SimResult } from '../../../sim/simulator.js';
import { encodeAudio, encodeControl, encodeFec, encodeMedia, encodePacket } from '../../../src/wire/encode.js';

const MS = 1000;
const pkt = (frameId: number, flowSeq: number, captureUs: number, opts: { key?: boolean; rtx?: boolean; streamId?: number; frag?: [number, number] } = {}) =>
  encodePacket(
    { pathId: 0, pathSeq: flowSeq, sendTimeUs: captureUs },
    'media',
    encodeMedia({
      streamId: opts.streamId ?? 0,
      flowSeq,
      frameId,
      fragIndex: opts.frag?.[0] ?? 0,
      fragCount: opts.frag?.[1] ?? 1,
      keyFrame: opts.key === true,
      nalClass: 0,
      priority: 6,
      captureUs,
      retransmission: opts.rtx === true,
      payload: new Uint8Array(100),
    }),
  );
const dec = (frameId: number, captureMs: number, decodedMs: number): DecodedFrame => ({ frameId, captureUs: captureMs * MS, decodedUs: decodedMs * MS, bytes: 100 });
const UP = [
  { id: 0, up: true, enabled: true },
  { id: 1, up: true, enabled: true },
];
/** Path 0: 0.1 Mbps, path 1: 20 Mbps. */
const capacity = (i: number) => (i === 0 ? 100_000 : 20_000_000);

/** A call at 30 fps: frames 0..n-1 captured every 33 ms, each one packet (seq = id) on `pathOf(id)`, decoded 50 ms later. */
function steady(rec: FreezeRecorder, n: number, pathOf: (id: number) => number): DecodedFrame[] {
  const out: DecodedFrame[] = [];
  for (let id = 0; id < n; id++) {
    const c = id * 33;
    rec.onFrame(id, c * MS, id === 0);
    rec.onSend(pathOf(id), pkt(id, id, c * MS), c * MS);
    rec.onArrival(pathOf(id), pkt(id, id, c * MS), (c + 40) * MS);
    out.push(dec(id, c, c + 50));
  }
  return out;
}

describe('FreezeRecorder (sim/freeze-explain.ts)', () => {
  it('blames a frame lost on a path and recovered by a retransmission on the other: late:loss:<path>+rtx, other path usable', () => {
    const rec = new FreezeRecorder(2);
    rec.sample(0, 2_000_000, UP);
    const d = steady(rec, 10, () => 1);
    // Frame 10 (captured at 330 ms) is lost on path 0; its retransmission on path 1 arrives at 700 ms.
    rec.onFrame(10, 330 * MS, false);
    rec.onSend(0, pkt(10, 10, 330 * MS), 331 * MS);
    rec.onSend(1, pkt(10, 10, 330 * MS, { rtx: true }), 650 * MS);
    rec.onArrival(1, pkt(10, 10, 330 * MS, { rtx: true }), 700 * MS);
    d.push(dec(10, 330, 705));
    const [c] = rec.explain([{ atUs: d[9].decodedUs, ms: 705 - 347 }], d, capacity);
    expect(c.cause).toBe('late');
    expect(c.where).toBe('loss');
    expect(c.path).toBe(0);
    expect(c.frameId).toBe(10);
    expect(c.lost).toBe(1);
    expect(c.retransmitted).toBe(true);
    expect(c.resendMs).toBe(319); // sent at 331 ms, resent at 650 ms
    expect(c.otherPathUsable).toBe(true); // path 1: 20 Mbps, nothing sent on it during the freeze
    expect(c.targetMbps).toBe(2);
    expect(causeLabel(c, ['wifi', 'cellular'])).toBe('late:loss:wifi+rtx');
  });

  it('gives each freeze the per-path samples from 1 s before it to its end (pt), none without detail', () => {
    const rec = new FreezeRecorder(2);
    const detail = (pacerKB: number) => [0, 1].map((i) => ({ pacerKB: pacerKB + i, dcKB: 0, netKB: 0, netMs: 0, capMbps: 1, dropped: 0, ackedMbps: 1, estMbps: 2, sendMbps: 1, srttMs: 50 }));
    for (let k = 0; k <= 12; k++) rec.sample(k * 100 * MS, 1_000_000, UP, detail(k));
    const d = steady(rec, 10, () => 1);
    rec.onFrame(10, 330 * MS, false);
    rec.onSend(1, pkt(10, 10, 330 * MS), 331 * MS);
    rec.onArrival(1, pkt(10, 10, 330 * MS), 1000 * MS);
    d.push(dec(10, 330, 1005));
    const [c] = rec.explain([{ atUs: d[9].decodedUs, ms: 1005 - 347 }], d, capacity);
    // Freeze 347..1005 ms: samples at 0..1000 ms (from 1 s before its start), both paths.
    expect(c.pt?.t).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);
    expect(c.pt?.paths[0].map((s) => s.pacerKB)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(c.pt?.paths[1][0].pacerKB).toBe(1);
    const plain = new FreezeRecorder(2);
    plain.sample(0, 1_000_000, UP);
    const d2 = steady(plain, 10, () => 1);
    plain.onFrame(10, 330 * MS, false);
    plain.onSend(1, pkt(10, 10, 330 * MS), 331 * MS);
    plain.onArrival(1, pkt(10, 10, 330 * MS), 1000 * MS);
    d2.push(dec(10, 330, 1005));
    expect(plain.explain([{ atUs: d2[9].decodedUs, ms: 1005 - 347 }], d2, capacity)[0].pt).toBeUndefined();
  });

  it("splits each sample's send rate by kind over the 100 ms before it (pt by): first transmissions, retransmissions, copies, FEC, audio, the rest", () => {
    const rec = new FreezeRecorder(2);
    const d = steady(rec, 10, () => 1); // delta frames on path 1 at 0..297 ms
    rec.onFrame(10, 330 * MS, false);
    rec.onSend(1, pkt(20, 20, 340 * MS, { key: true }), 340 * MS); // key packet on path 1, its probe copy on path 0 at once, a resend on path 0 later
    rec.onSend(0, pkt(20, 20, 340 * MS, { key: true }), 341 * MS);
    rec.onSend(0, pkt(20, 20, 340 * MS, { key: true }), 390 * MS);
    const fec = encodeFec({ streamId: 0, baseSeq: 20, mask: new Uint8Array([1]), lengthXor: 0, parity: new Uint8Array(500), protectsPath: 0, fecSeq: 0 });
    rec.onSend(0, encodePacket({ pathId: 0, pathSeq: 90, sendTimeUs: 0 }, 'fec', fec), 370 * MS);
    const audio = encodeAudio({ streamId: 0, seq: 0, captureUs: 0, durationUs: 20_000, payload: new Uint8Array(300) });
    rec.onSend(0, encodePacket({ pathId: 0, pathSeq: 91, sendTimeUs: 0 }, 'audio', audio), 380 * MS);
    rec.onSend(0, encodeControl({ pathId: 0, pathSeq: 92, sendTimeUs: 0 }, { kind: 'padding', padding: { size: 400 } }), 390 * MS);
    rec.onSend(1, pkt(10, 10, 330 * MS), 331 * MS);
    rec.onArrival(1, pkt(10, 10, 330 * MS), 1000 * MS);
    d.push(dec(10, 330, 1005));
    const detail = [0, 1].map(() => ({ pacerKB: 0, dcKB: 0, netKB: 0, netMs: 0, capMbps: 1, dropped: 0, ackedMbps: 1, estMbps: 2, sendMbps: 1, srttMs: 50 }));
    for (let k = 0; k <= 12; k++) rec.sample(k * 100 * MS, 1_000_000, UP, detail);
    const [c] = rec.explain([{ atUs: d[9].decodedUs, ms: 1005 - 347 }], d, capacity);
    const at = (i: number, s: number) => c.pt?.paths[i][c.pt.t.indexOf(s)].by;
    const p0 = at(0, 0.4);
    expect(at(1, 0.4)?.key).toBeGreaterThan(0);
    expect(p0?.key).toBe(0);
    expect(p0?.copy).toBe(at(1, 0.4)?.key); // the same packet again at once
    expect(p0?.rtx).toBe(p0?.copy); // and again later
    expect(p0?.delta).toBe(0);
    expect(p0?.fec).toBeGreaterThanOrEqual(0.03); // >= 500 bytes in 100 ms
    expect(p0?.audio).toBeGreaterThanOrEqual(0.02);
    expect(p0?.other).toBeGreaterThanOrEqual(0.03);
    expect(at(0, 0.3)).toEqual({ key: 0, delta: 0, rtx: 0, copy: 0, fec: 0, audio: 0, other: 0 });
    expect(at(1, 0.1)?.delta).toBeGreaterThan(0); // frames 1-3 on path 1
    expect(at(1, 0.4)?.delta).toBeGreaterThan(0); // frame 10 at 331 ms
    expect(at(1, 0.5)?.delta).toBe(0);
  });

  it('splits a late frame into sender time and network time, and sees a probe copy as no retransmission', () => {
    const rec = new FreezeRecorder(2);
    rec.sample(0, 1_000_000, UP);
    const d = steady(rec, 10, () => 0);
    // Frame 10 waits 300 ms at the sender, then takes 40 ms; a probe copy goes on path 1 5 ms later and is lost.
    rec.onFrame(10, 330 * MS, false);
    rec.onSend(0, pkt(10, 10, 330 * MS), 630 * MS);
    rec.onSend(1, pkt(10, 10, 330 * MS), 635 * MS);
    rec.onArrival(0, pkt(10, 10, 330 * MS), 670 * MS);
    d.push(dec(10, 330, 675));
    const [c] = rec.explain([{ atUs: d[9].decodedUs, ms: 675 - 347 }], d, capacity);
    expect(c.cause).toBe('late');
    expect(c.where).toBe('sender');
    expect(c.senderMs).toBe(300);
    expect(c.networkMs).toBe(40);
    expect(c.retransmitted).toBe(false);
    expect(c.path).toBe(0); // the lost probe copy is no loss: the packet arrived on path 0
    expect(c.lost).toBe(0);
  });

  it('tells a key-frame wait, a skipped frame and a source that produced no frames apart', () => {
    const rec = new FreezeRecorder(2);
    rec.sample(0, 1_000_000, UP);
    const d = steady(rec, 10, () => 0);
    // Frame 10 is lost for good; the picture comes back with key frame 11.
    rec.onFrame(10, 330 * MS, false);
    rec.onSend(0, pkt(10, 10, 330 * MS), 331 * MS);
    rec.onFrame(11, 600 * MS, true);
    rec.onSend(0, pkt(11, 11, 600 * MS, { key: true }), 600 * MS);
    rec.onArrival(0, pkt(11, 11, 600 * MS, { key: true }), 640 * MS);
    d.push(dec(11, 600, 650));
    // No frame encoded from 650 to 1,500 ms; then frame 12.
    rec.onFrame(12, 1500 * MS, false);
    rec.onSend(0, pkt(12, 12, 1500 * MS), 1500 * MS);
    rec.onArrival(0, pkt(12, 12, 1500 * MS), 1540 * MS);
    d.push(dec(12, 1500, 1550));
    // Frame 13 lost, 14 (a delta frame) decoded: skipped.
    rec.onFrame(13, 1533 * MS, false);
    rec.onSend(1, pkt(13, 13, 1533 * MS), 1533 * MS);
    rec.onFrame(14, 1566 * MS, false);
    rec.onSend(0, pkt(14, 14, 1566 * MS), 1566 * MS);
    rec.onArrival(0, pkt(14, 14, 1566 * MS), 1900 * MS);
    d.push(dec(14, 1566, 1950));
    const causes = rec.explain(
      [
        { atUs: d[9].decodedUs, ms: 650 - 347 },
        { atUs: 650 * MS, ms: 900 },
        { atUs: 1550 * MS, ms: 400 },
      ],
      d,
      capacity,
    );
    expect(causes.map((c) => causeLabel(c, ['a', 'b']))).toEqual(['keyframe-wait:a', 'no-frames', 'skipped:b']);
  });

  it('says why a never-decoded frame was lost and times the key frame that ended the freeze', () => {
    const names = ['a', 'b'];
    const keyWait = (stuck: (rec: FreezeRecorder) => void) => {
      const rec = new FreezeRecorder(2);
      rec.sample(0, 1_000_000, UP);
      const d = steady(rec, 10, () => 0);
      rec.onFrame(10, 330 * MS, false);
      stuck(rec);
      rec.onReceiverKeyframeRequest(500 * MS, 'frame-buffer-timeout');
      rec.onKeyframeRequest(520 * MS);
      rec.onFrame(11, 560 * MS, true);
      rec.onSend(1, pkt(11, 11, 560 * MS, { key: true }), 600 * MS);
      rec.onArrival(1, pkt(11, 11, 560 * MS, { key: true }), 680 * MS);
      d.push(dec(11, 560, 700));
      const [c] = rec.explain([{ atUs: d[9].decodedUs, ms: 700 - 347 }], d, capacity);
      expect(causeLabel(c, names).startsWith('keyframe-wait')).toBe(true);
      return c.kf;
    };
    // Two fragments, only one sent: the sender purged the other.
    expect(keyWait((r) => r.onSend(0, pkt(10, 10, 330 * MS, { frag: [0, 2] }), 331 * MS))?.stuck).toBe('unsent');
    // Sent whole, lost, never resent.
    const lost = keyWait((r) => r.onSend(0, pkt(10, 10, 330 * MS), 331 * MS));
    expect(lost?.stuck).toBe('lost');
    // Lost, resent, the resend lost too.
    expect(
      keyWait((r) => {
        r.onSend(0, pkt(10, 10, 330 * MS), 331 * MS);
        r.onSend(0, pkt(10, 10, 330 * MS, { rtx: true }), 450 * MS);
      })?.stuck,
    ).toBe('rtx-lost');
    // Arrived (by its resend) after the receiver had asked for a key frame: it gave up too early.
    const late = keyWait((r) => {
      r.onSend(0, pkt(10, 10, 330 * MS), 331 * MS);
      r.onSend(1, pkt(10, 10, 330 * MS, { rtx: true }), 450 * MS);
      r.onArrival(1, pkt(10, 10, 330 * MS, { rtx: true }), 510 * MS);
    });
    expect(late?.stuck).toBe('late');
    expect(late?.resent).toBe(1);
    expect(late?.lastArrivalMs).toBe(510 - 347);
    // The timeline: request 153 ms after the freeze start, encoder asked at 173, key frame captured at 213, sent 40 ms later, 80 ms in the network, on path b.
    expect(lost).toMatchObject({
      requestMs: 153,
      reason: 'frame-buffer-timeout',
      requests: 1,
      encoderRequestMs: 173,
      keyCaptureMs: 213,
      keySendMs: 40,
      keyNetworkMs: 80,
      keyLost: 0,
      keyPath: 1,
      keysBefore: 0,
    });
    expect(lost?.keyBytes).toBeGreaterThan(100);
  });

  it('ignores other streams and malformed datagrams, and the bench sums causes per configuration', () => {
    const rec = new FreezeRecorder(2);
    rec.sample(0, 1_000_000, UP);
    const d = steady(rec, 10, () => 0);
    rec.onSend(0, new Uint8Array([0xff, 0xff]), 400 * MS);
    rec.onSend(0, pkt(10, 10, 330 * MS, { streamId: 1 }), 400 * MS);
    rec.onFrame(10, 330 * MS, false);
    rec.onSend(0, pkt(10, 99, 330 * MS), 331 * MS);
    rec.onArrival(0, pkt(10, 99, 330 * MS), 600 * MS);
    d.push(dec(10, 330, 610));
    const causes = rec.explain([{ atUs: d[9].decodedUs, ms: 263 }], d, capacity);
    expect(causes).toHaveLength(1);
    expect(causes[0].where).toBe('network');
    const entry = (config: string): BenchEntry => ({
      variant: 'v',
      config,
      wallMs: 0,
      result: { seed: 1, scheduler: 'converge', paths: [{ name: 'a' }, { name: 'b' }], freezeCauses: causes } as unknown as SimResult,
    });
    const md = renderFreezeCauses([entry('converge'), entry('converge')]).join('\n');
    expect(md).toContain('| converge | late:network | 2 | 0.53 | 100 | 2 | - |');
    expect(md).toContain('late:network:a');
    expect(renderFreezeCauses([{ ...entry('x'), result: { seed: 1 } as unknown as SimResult }])).toEqual([]);
  });
});
