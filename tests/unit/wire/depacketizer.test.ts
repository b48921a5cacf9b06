import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NalClass, Priority } from '../../../src/core/types.js';
import { Rng } from '../../../src/core/rng.js';
import {
  Depacketizer,
  FAR_AHEAD_FRAMES,
  Packetizer,
  RESYNC_AFTER,
  WireError,
  decodePacket,
  encodePacket,
  retransmissionBody,
  type AssembledFrame,
  type EncodedFrameInput,
  type MediaMessage,
  type PacketizedFragment,
} from '../../../src/wire/index.js';

function frag(frameId: number, fragIndex: number, fragCount: number, over: Partial<MediaMessage> = {}): MediaMessage {
  return {
    streamId: 1,
    flowSeq: 0,
    frameId,
    fragIndex,
    fragCount,
    keyFrame: false,
    nalClass: NalClass.Delta,
    priority: Priority.Media,
    captureUs: frameId * 33_333,
    retransmission: false,
    payload: Uint8Array.from([frameId & 0xff, fragIndex & 0xff]),
    ...over,
  };
}

/** Sends a fragment through the real wire (encode envelope, decode) like the receiver sees it. */
function overWire(f: PacketizedFragment | Uint8Array, pathId: number): MediaMessage {
  const body = f instanceof Uint8Array ? f : f.body;
  const r = decodePacket(encodePacket({ pathId, pathSeq: 1, sendTimeUs: 1 }, 'media', body));
  if (!r.ok || r.packet.body.kind !== 'media') throw new Error('wire round trip failed');
  return r.packet.body.media;
}

function shuffle<T>(a: T[], rng: Rng): T[] {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

function h264Au(key: boolean, size: number, seed: number): Uint8Array {
  const parts: number[] = [];
  if (key) parts.push(0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x1f, 0x8c, 0, 0, 1, 0x68, 0xce, 0x3c, 0x80);
  parts.push(0, 0, 0, 1, key ? 0x65 : 0x41);
  for (let i = 0; i < size; i++) parts.push(((i * 131 + seed) % 254) + 1); // no zero bytes: no fake start codes
  return Uint8Array.from(parts);
}

describe('Depacketizer round trip', () => {
  it('property: shuffled, duplicated fragments across paths reassemble every frame exactly once (H.264 and VP8)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<'h264' | 'vp8'>('h264', 'vp8'),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 6000 })), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        fc.nat({ max: 2 ** 32 - 1 }),
        (codec, specs, seed, dupRate, firstFrameId) => {
          const rng = new Rng(seed);
          const p = new Packetizer({ streamId: 1, mtuBytes: 600 });
          const frames: EncodedFrameInput[] = specs.map(([key, size], i) => ({
            streamId: 1,
            frameId: (firstFrameId + i) >>> 0,
            keyFrame: key,
            captureUs: 1000 + i * 33_333,
            data: codec === 'h264' ? h264Au(key, size, i) : Uint8Array.from({ length: size }, (_, k) => (k + i) & 0xff),
            codec,
          }));
          const sends: { m: MediaMessage; pathId: number }[] = [];
          for (const fr of frames) {
            for (const f of p.packetize(fr)) {
              const pathId = Math.floor(rng.next() * 3);
              sends.push({ m: overWire(f, pathId), pathId });
              if (rng.next() < dupRate) sends.push({ m: overWire(retransmissionBody(f.body), 7), pathId: 7 });
            }
          }
          shuffle(sends, rng);
          const d = new Depacketizer();
          const out = new Map<number, AssembledFrame>();
          let t = 0;
          for (const s of sends) {
            const r = d.insert(s.m, s.pathId, (t += 10));
            if (r.status === 'completed') {
              expect(out.has(r.frame!.frameId)).toBe(false);
              out.set(r.frame!.frameId, r.frame!);
            } else {
              expect(['stored', 'duplicate']).toContain(r.status);
            }
          }
          expect(out.size).toBe(frames.length);
          for (const fr of frames) {
            const a = out.get(fr.frameId)!;
            expect(Buffer.from(a.data).equals(Buffer.from(fr.data))).toBe(true);
            expect(a.keyFrame).toBe(fr.keyFrame);
            expect(a.captureUs).toBe(fr.captureUs);
            expect(a.firstArrivalUs).toBeLessThanOrEqual(a.lastArrivalUs);
            expect(new Set(a.arrivals.map((x) => x.fragIndex)).size).toBe(a.arrivals.length);
          }
          const st = d.stats();
          expect(st.framesCompleted).toBe(frames.length);
          expect(st.packetsIn).toBe(sends.length);
          expect(st.packetsStored + st.duplicates).toBe(sends.length);
          expect(d.pendingFrames()).toBe(0);
          expect(d.pendingPackets()).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('arrival records carry path, time, class, retransmission and recovered flags', () => {
    const d = new Depacketizer();
    expect(d.insert(frag(5, 1, 2, { retransmission: true, nalClass: NalClass.Key }), 2, 500).status).toBe('stored');
    const r = d.insert(frag(5, 0, 2), 0, 400, true);
    expect(r.status).toBe('completed');
    expect(Array.from(r.frame!.data)).toEqual([5, 0, 5, 1]);
    expect(r.frame!.firstArrivalUs).toBe(400);
    expect(r.frame!.lastArrivalUs).toBe(500);
    expect(r.frame!.arrivals).toEqual([
      { fragIndex: 1, pathId: 2, arrivalUs: 500, nalClass: NalClass.Key, retransmission: true, recovered: false },
      { fragIndex: 0, pathId: 0, arrivalUs: 400, nalClass: NalClass.Delta, retransmission: false, recovered: true },
    ]);
    expect(d.stats().packetsRecovered).toBe(1);
  });

  it('duplicates: before completion ignored; after completion flagged late and never re-emitted', () => {
    const d = new Depacketizer();
    expect(d.insert(frag(1, 0, 2), 0, 1).status).toBe('stored');
    expect(d.insert(frag(1, 0, 2), 1, 2)).toMatchObject({ status: 'duplicate', lateForCompletedFrame: false });
    expect(d.insert(frag(1, 1, 2), 0, 3).status).toBe('completed');
    expect(d.insert(frag(1, 1, 2), 1, 4)).toMatchObject({ status: 'duplicate', lateForCompletedFrame: true });
    expect(d.insert(frag(1, 0, 2), 1, 5)).toMatchObject({ status: 'duplicate', lateForCompletedFrame: true });
    const st = d.stats();
    expect(st.duplicates).toBe(3);
    expect(st.duplicatesAfterComplete).toBe(2);
    expect(st.framesCompleted).toBe(1);
  });

  it('frame ids wrap at 2^32', () => {
    const d = new Depacketizer();
    const ids = [2 ** 32 - 2, 2 ** 32 - 1, 0, 1];
    for (const id of ids) expect(d.insert(frag(id, 0, 1), 0, 1).status).toBe('completed');
    // far-ahead measured in serial arithmetic across the wrap
    expect(d.insert(frag(FAR_AHEAD_FRAMES + 2, 0, 1), 0, 1).status).toBe('rejected');
    expect(d.insert(frag(FAR_AHEAD_FRAMES, 0, 1), 0, 1).status).toBe('completed');
  });
});

describe('Depacketizer against lying packets', () => {
  it('conflicting fragCount / keyFrame / captureUs is rejected without harming the frame', () => {
    const d = new Depacketizer();
    expect(d.insert(frag(3, 0, 3), 0, 1).status).toBe('stored');
    expect(d.insert(frag(3, 1, 4), 0, 2)).toMatchObject({ status: 'rejected' });
    expect(d.insert(frag(3, 1, 3, { keyFrame: true }), 0, 2)).toMatchObject({ status: 'rejected' });
    expect(d.insert(frag(3, 1, 3, { captureUs: 1 }), 0, 2)).toMatchObject({ status: 'rejected' });
    expect(d.stats().rejectedConflict).toBe(3);
    expect(d.insert(frag(3, 1, 3), 0, 3).status).toBe('stored');
    const r = d.insert(frag(3, 2, 3), 0, 4);
    expect(r.status).toBe('completed');
    expect(Array.from(r.frame!.data)).toEqual([3, 0, 3, 1, 3, 2]);
  });

  it('invalid fields are rejected (counted), never thrown', () => {
    const d = new Depacketizer({ maxPackets: 100 });
    const bad: [MediaMessage, number, number][] = [
      [frag(1, 2, 2), 0, 1],
      [frag(1, 0, 0), 0, 1],
      [frag(1, 0, 101), 0, 1], // more fragments than maxPackets can ever hold
      [frag(1, -1, 2), 0, 1],
      [frag(1, 0, 2, { payload: [1, 2] as unknown as Uint8Array }), 0, 1],
      [frag(1, 0, 2, { captureUs: Number.NaN }), 0, 1],
      [frag(-1, 0, 2), 0, 1],
      [frag(1, 0, 2), 8, 1],
      [frag(1, 0, 2), 0, Number.POSITIVE_INFINITY],
      [null as unknown as MediaMessage, 0, 1],
    ];
    for (const [m, path, t] of bad) expect(d.insert(m, path, t).status).toBe('rejected');
    expect(d.stats().rejectedInvalid).toBe(bad.length);
    expect(d.pendingFrames()).toBe(0);
  });

  it('a frame id far ahead is rejected; a sustained jump (sender restart) resyncs', () => {
    const d = new Depacketizer();
    expect(d.insert(frag(100, 0, 1), 0, 1).status).toBe('completed');
    expect(d.insert(frag(100 + FAR_AHEAD_FRAMES + 1, 0, 2), 0, 1).status).toBe('rejected');
    expect(d.stats().rejectedFarAhead).toBe(1);
    expect(d.pendingFrames()).toBe(0);
    // legit traffic keeps flowing and resets the streak
    expect(d.insert(frag(101, 0, 1), 0, 1).status).toBe('completed');
    const base = 5_000_000;
    let statuses: string[] = [];
    for (let i = 0; i < RESYNC_AFTER; i++) statuses.push(d.insert(frag(base + i, 0, 1), 0, 1).status);
    expect(statuses.slice(0, RESYNC_AFTER - 1).every((s) => s === 'rejected')).toBe(true);
    expect(statuses[RESYNC_AFTER - 1]).toBe('completed');
    expect(d.stats().resyncs).toBe(1);
    statuses = [base + RESYNC_AFTER, base + RESYNC_AFTER + 1].map((id) => d.insert(frag(id, 0, 1), 0, 1).status);
    expect(statuses).toEqual(['completed', 'completed']);
    // the old range is now far behind: stale
    expect(d.insert(frag(102, 0, 1), 0, 1).status).toBe('stale');
  });

  it('maxFrameBytes bounds one frame', () => {
    const d = new Depacketizer({ maxFrameBytes: 10 });
    const big = (i: number): MediaMessage => frag(1, i, 3, { payload: new Uint8Array(4) });
    expect(d.insert(big(0), 0, 1).status).toBe('stored');
    expect(d.insert(big(1), 0, 1).status).toBe('stored');
    expect(d.insert(big(2), 0, 1)).toMatchObject({ status: 'rejected' });
    expect(d.insert(frag(2, 0, 1, { payload: new Uint8Array(11) }), 0, 1)).toMatchObject({ status: 'rejected' });
    expect(d.stats().rejectedTooLarge).toBe(2);
    expect(d.pendingFrames()).toBe(1);
  });

  it('fuzz: random garbage mixed with a real stream never throws, never emits a frame twice or corrupted, stays bounded', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), (seed) => {
        const rng = new Rng(seed);
        const d = new Depacketizer({ maxPackets: 64, maxFrames: 16, maxStreams: 4, completedWindow: 32 });
        const p = new Packetizer({ streamId: 1, mtuBytes: 300 });
        const sent = new Map<number, Uint8Array>();
        const emitted = new Set<number>();
        for (let i = 0; i < 40; i++) {
          const data = Uint8Array.from({ length: 1 + Math.floor(rng.next() * 1500) }, () => Math.floor(rng.next() * 256));
          sent.set(i, data);
          const frags = shuffle(p.packetize({ streamId: 1, frameId: i, keyFrame: false, captureUs: i, data, codec: 'vp8' }), rng);
          for (const f of frags) {
            const garbage: MediaMessage = {
              streamId: rng.next() < 0.5 ? 1 : Math.floor(rng.next() * 10),
              flowSeq: 0,
              frameId: Math.floor(rng.next() * 2 ** 32),
              fragIndex: Math.floor(rng.next() * 40) - 2,
              fragCount: Math.floor(rng.next() * 40) - 2,
              keyFrame: rng.next() < 0.5,
              nalClass: NalClass.Delta,
              priority: Priority.Media,
              captureUs: Math.floor(rng.next() * 1e9),
              retransmission: false,
              payload: new Uint8Array(Math.floor(rng.next() * 50)),
            };
            for (const m of [f as MediaMessage, garbage]) {
              const r = d.insert(m, Math.floor(rng.next() * 9), rng.next() * 1e6);
              if (r.status === 'completed' && r.frame!.streamId === 1 && sent.has(r.frame!.frameId)) {
                const id = r.frame!.frameId;
                expect(emitted.has(id)).toBe(false);
                emitted.add(id);
                expect(Buffer.from(r.frame!.data).equals(Buffer.from(sent.get(id)!))).toBe(true);
              }
              expect(d.pendingPackets()).toBeLessThanOrEqual(64);
              expect(d.pendingFrames()).toBeLessThanOrEqual(16);
            }
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe('Depacketizer bounds and dropBefore', () => {
  it('maxFrames evicts the OLDEST incomplete frame, never a newer one; older-than-all is stale', () => {
    const d = new Depacketizer({ maxFrames: 3 });
    for (const id of [10, 11, 12]) expect(d.insert(frag(id, 0, 2), 0, 1).status).toBe('stored');
    expect(d.insert(frag(9, 0, 2), 0, 1).status).toBe('stale'); // older than everything buffered
    expect(d.stats().framesEvicted).toBe(0);
    expect(d.insert(frag(13, 0, 2), 0, 1).status).toBe('stored'); // evicts 10
    expect(d.stats().framesEvicted).toBe(1);
    expect(d.insert(frag(10, 1, 2), 0, 1).status).toBe('stale'); // 10 was given up
    for (const id of [11, 12, 13]) expect(d.insert(frag(id, 1, 2), 0, 1).status).toBe('completed');
    expect(d.pendingFrames()).toBe(0);
  });

  it('maxPackets evicts the oldest frame to make room for a newer one', () => {
    const d = new Depacketizer({ maxPackets: 4 });
    d.insert(frag(1, 0, 3), 0, 1);
    d.insert(frag(1, 1, 3), 0, 1);
    d.insert(frag(2, 0, 3), 0, 1);
    d.insert(frag(2, 1, 3), 0, 1);
    expect(d.pendingPackets()).toBe(4);
    const r = d.insert(frag(2, 2, 3), 0, 1);
    expect(r.status).toBe('completed');
    expect(d.stats()).toMatchObject({ framesEvicted: 1, packetsEvicted: 2 });
    expect(d.pendingPackets()).toBe(0);
    // when the oldest frame is the one receiving the fragment, it is the one given up
    d.insert(frag(3, 0, 3), 0, 1);
    d.insert(frag(3, 1, 3), 0, 1);
    d.insert(frag(4, 0, 3), 0, 1);
    d.insert(frag(4, 1, 3), 0, 1);
    expect(d.insert(frag(3, 2, 3), 0, 1).status).toBe('stale');
    expect(d.insert(frag(4, 2, 3), 0, 1).status).toBe('completed');
  });

  it('flood of incomplete frames far apart: memory bounded, a completed frame is still delivered once, new frames still complete', () => {
    const d = new Depacketizer({ maxPackets: 256, maxFrames: 32 });
    expect(d.insert(frag(0, 0, 1), 0, 1).status).toBe('completed');
    let newest = 0;
    const done: number[] = [];
    for (let i = 1; i <= 5000; i++) {
      newest += 9_000; // far apart but each within FAR_AHEAD of the previous
      const id = newest >>> 0;
      d.insert(frag(id, 0, 50), 0, i); // never completed
      expect(d.pendingFrames()).toBeLessThanOrEqual(32);
      expect(d.pendingPackets()).toBeLessThanOrEqual(256);
      if (i % 500 === 0) {
        // a real, complete frame right after the newest still gets through
        const real = (newest + 1) >>> 0;
        d.insert(frag(real, 1, 2), 1, i);
        const r = d.insert(frag(real, 0, 2), 1, i);
        expect(r.status).toBe('completed');
        done.push(real);
      }
    }
    expect(done.length).toBe(10);
    expect(d.stats().framesEvicted).toBeGreaterThan(4000);
    // the first completed frame is not re-delivered by a late duplicate
    expect(d.insert(frag(0, 0, 1), 0, 1).status).not.toBe('completed');
  });

  it('a flood on another stream does not starve the real stream', () => {
    const d = new Depacketizer({ maxPackets: 64, maxFrames: 8 });
    let delivered = 0;
    for (let i = 0; i < 2000; i++) {
      d.insert(frag(i * 3, 0, 2, { streamId: 66 }), 0, i); // incomplete junk stream
      d.insert(frag(i, 1, 2), 1, i);
      if (d.insert(frag(i, 0, 2), 1, i).status === 'completed') delivered++;
    }
    expect(delivered).toBe(2000);
    expect(d.pendingFrames()).toBeLessThanOrEqual(8);
  });

  it('dropBefore discards older incomplete frames and makes them stale', () => {
    const d = new Depacketizer();
    for (const id of [5, 6, 7, 8]) d.insert(frag(id, 0, 2), 0, 1);
    expect(d.dropBefore(1, 7)).toBe(2);
    expect(d.pendingFrames()).toBe(2);
    expect(d.stats()).toMatchObject({ framesDropped: 2, packetsDropped: 2 });
    expect(d.insert(frag(5, 1, 2), 0, 1).status).toBe('stale');
    expect(d.insert(frag(6, 0, 2), 0, 1).status).toBe('stale');
    expect(d.insert(frag(7, 1, 2), 0, 1).status).toBe('completed');
    expect(d.dropBefore(1, 3)).toBe(0); // floor never moves back
    expect(d.insert(frag(4, 0, 1), 0, 1).status).toBe('stale');
    expect(d.dropBefore(9, 100)).toBe(0); // unknown stream: sets its floor
    expect(d.insert(frag(99, 0, 1, { streamId: 9 }), 0, 1).status).toBe('stale');
    expect(() => d.dropBefore(1, -1)).toThrowError(WireError);
  });

  it('completed-id memory is a bounded window; beyond it old frames are stale, never re-emitted', () => {
    const d = new Depacketizer({ completedWindow: 4 });
    for (let id = 1; id <= 10; id++) expect(d.insert(frag(id, 0, 1), 0, 1).status).toBe('completed');
    expect(d.insert(frag(9, 0, 1), 0, 1)).toMatchObject({ status: 'duplicate', lateForCompletedFrame: true });
    expect(d.insert(frag(1, 0, 1), 0, 1).status).toBe('stale');
    expect(d.insert(frag(6, 0, 1), 0, 1).status).toBe('stale');
  });

  it('maxStreams evicts the least recently active stream', () => {
    const d = new Depacketizer({ maxStreams: 2 });
    d.insert(frag(1, 0, 2, { streamId: 1 }), 0, 1);
    d.insert(frag(1, 0, 2, { streamId: 2 }), 0, 1);
    d.insert(frag(2, 0, 2, { streamId: 1 }), 0, 1); // stream 1 active again
    d.insert(frag(1, 0, 2, { streamId: 3 }), 0, 1); // evicts stream 2
    expect(d.stats()).toMatchObject({ streamsEvicted: 1, framesEvicted: 1 });
    expect(d.insert(frag(1, 1, 2, { streamId: 1 }), 0, 1).status).toBe('completed');
    expect(d.pendingFrames()).toBe(2);
  });

  it('constructor rejects bad bounds', () => {
    expect(() => new Depacketizer({ maxPackets: 0 })).toThrowError(WireError);
    expect(() => new Depacketizer({ maxFrames: 1.5 })).toThrowError(WireError);
  });

  describe('memory budget', () => {
    const big = (frameId: number, fragIndex: number, fragCount: number, n: number, streamId = 1) => frag(frameId, fragIndex, fragCount, { streamId, payload: new Uint8Array(n) });

    it('keeps every fragment while under maxBytes, then evicts the oldest incomplete frame', () => {
      const d = new Depacketizer({ maxBytes: 10 * (1000 + 96) });
      for (let f = 0; f < 5; f++) for (let k = 0; k < 2; k++) expect(d.insert(big(f, k, 3, 1000), 0, 0).status).toBe('stored');
      expect(d.stats().framesEvicted).toBe(0);
      expect(d.pendingBytes()).toBe(10 * 1096);
      expect(d.insert(big(5, 0, 3, 1000), 0, 0).status).toBe('stored');
      const st = d.stats();
      expect(st.framesEvictedBudget).toBe(1);
      expect(d.pendingFrames()).toBe(5);
      expect(d.pendingBytes()).toBeLessThanOrEqual(10 * 1096);
      // Frame 0 was the oldest: its late fragment is stale, the others still complete.
      expect(d.insert(big(0, 2, 3, 1000), 0, 0).status).toBe('stale');
      expect(d.insert(big(1, 2, 3, 1000), 0, 0).status).toBe('completed');
    });

    it('evicts incomplete frames older than maxAgeMs, with or without new traffic', () => {
      const d = new Depacketizer({ maxAgeMs: 1000 });
      d.insert(big(1, 0, 2, 100), 0, 0);
      d.insert(big(2, 0, 2, 100), 0, 500_000);
      d.insert(big(3, 0, 2, 100), 0, 1_200_000); // sweep at 1.2 s: frame 1 is 1.2 s old
      expect(d.stats().framesExpired).toBe(1);
      expect(d.pendingFrames()).toBe(2);
      expect(d.expire(5_000_000)).toBe(2);
      expect(d.pendingFrames()).toBe(0);
      expect(d.pendingBytes()).toBe(0);
    });

    it('copies a payload that is a small view of a large buffer', () => {
      const d = new Depacketizer();
      const slab = new Uint8Array(64 * 1024);
      slab.set([7, 8, 9], 100);
      d.insert(frag(1, 0, 2, { payload: slab.subarray(100, 103) }), 0, 0);
      expect(d.stats().payloadsCopied).toBe(1);
      slab.fill(0); // the stored copy does not change
      const r = d.insert(frag(1, 1, 2, { payload: Uint8Array.from([1]) }), 0, 0);
      expect(Array.from(r.frame!.data)).toEqual([7, 8, 9, 1]);
    });

    it('many streams of delta fragments stay within the budget', () => {
      const d = new Depacketizer({ maxBytes: 1 << 20 });
      for (let s = 0; s < 16; s++) for (let p = 0; p < 1100; p++) d.insert(big(p, 0, 2, 1000, s), 0, p * 1000);
      expect(d.pendingBytes()).toBeLessThanOrEqual(1 << 20);
    });
  });
});
