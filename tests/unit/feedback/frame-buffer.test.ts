import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FrameBuffer } from '../../../src/feedback/frame-buffer.js';
import { ManualClock } from '../../../src/core/clock.js';
import { mkFrame } from './helpers.js';

const ids = (fs: { frameId: number }[]) => fs.map((f) => f.frameId);

describe('FrameBuffer', () => {
  it('releases a key frame and its chain in decode order', () => {
    const fb = new FrameBuffer();
    const clock = new ManualClock();
    expect(fb.insert(mkFrame(0, { key: true }), clock.nowUs())).toBe('stored');
    expect(fb.insert(mkFrame(1), clock.nowUs())).toBe('stored');
    expect(fb.insert(mkFrame(2), clock.nowUs())).toBe('stored');
    const out = fb.poll(clock.nowUs(), 10);
    expect(ids(out.decodable)).toEqual([0, 1, 2]);
    expect(out.keyframeNeeded).toBe(false);
    expect(out.dropped).toBe(0);
    expect(fb.lastDecodedFrameId(0)).toBe(2);
  });

  it('a delta frame waits for its missing predecessor, then both go out in order', () => {
    const fb = new FrameBuffer();
    const clock = new ManualClock();
    fb.insert(mkFrame(0, { key: true }), 0);
    expect(ids(fb.poll(0, 10).decodable)).toEqual([0]);
    fb.insert(mkFrame(2), 0);
    fb.insert(mkFrame(3), 0);
    clock.advanceMs(20);
    let out = fb.poll(clock.nowUs(), 10);
    expect(out.decodable).toEqual([]);
    expect(out.keyframeNeeded).toBe(false);
    fb.insert(mkFrame(1), clock.nowUs());
    out = fb.poll(clock.nowUs(), 10);
    expect(ids(out.decodable)).toEqual([1, 2, 3]);
  });

  it('stale and duplicate frames are refused', () => {
    const fb = new FrameBuffer();
    fb.insert(mkFrame(5, { key: true }), 0);
    fb.insert(mkFrame(7), 0);
    expect(fb.insert(mkFrame(7), 0)).toBe('duplicate');
    fb.poll(0, 0);
    expect(fb.insert(mkFrame(5), 0)).toBe('duplicate');
    expect(fb.insert(mkFrame(4), 0)).toBe('stale');
    expect(fb.insert(mkFrame(3, { key: true }), 0)).toBe('stale');
    expect(fb.stats().stale).toBe(2);
  });

  it('keepOnTimeout false: timeout follows the jitter, dependents dropped, key frame needed until one arrives', () => {
    const fb = new FrameBuffer({ minWaitMs: 50, maxWaitMs: 1000, baseWaitMs: 30, keepOnTimeout: false });
    const clock = new ManualClock();
    fb.insert(mkFrame(0, { key: true }), 0);
    fb.poll(0, 0);
    fb.insert(mkFrame(2), 0);
    fb.insert(mkFrame(3), 0);
    // jitter 100 ms -> wait = 3*100 + 30 = 330 ms
    clock.setUs(300_000);
    let out = fb.poll(clock.nowUs(), 100);
    expect(out.dropped).toBe(0);
    expect(out.keyframeNeeded).toBe(false);
    expect(fb.waitingFrames(0)).toBe(2);
    // the same elapsed time is too long for a jitter of 10 ms (wait 60 ms)
    out = fb.poll(clock.nowUs(), 10);
    expect(out.dropped).toBe(2);
    expect(out.keyframeNeeded).toBe(true);
    expect(out.keyframeNeededStreams).toEqual([0]);
    expect(out.keyframeReasons).toEqual(['frame-buffer-timeout']);
    expect(fb.waitingFrames(0)).toBe(0);
    // the late predecessor and further deltas cannot be decoded any more
    fb.insert(mkFrame(1), clock.nowUs());
    fb.insert(mkFrame(4), clock.nowUs());
    clock.advanceMs(10);
    out = fb.poll(clock.nowUs(), 10);
    expect(out.decodable).toEqual([]);
    expect(out.keyframeNeeded).toBe(true);
    // a key frame restarts decoding and clears what is older
    fb.insert(mkFrame(6, { key: true }), clock.nowUs());
    fb.insert(mkFrame(7), clock.nowUs());
    out = fb.poll(clock.nowUs(), 10);
    expect(ids(out.decodable)).toEqual([6, 7]);
    expect(out.dropped).toBe(2); // frames 1 and 4
    expect(out.keyframeNeeded).toBe(false);
    expect(fb.stats().droppedTimeout).toBe(2);
    expect(fb.stats().droppedKeyJump).toBe(2);
  });

  it('by default a timeout asks for a key frame but keeps the waiting frames: a late predecessor continues the chain', () => {
    const fb = new FrameBuffer({ minWaitMs: 50, maxWaitMs: 1000, baseWaitMs: 30 });
    const clock = new ManualClock();
    fb.insert(mkFrame(0, { key: true }), 0);
    fb.poll(0, 0);
    fb.insert(mkFrame(2), 0);
    fb.insert(mkFrame(3), 0);
    // jitter 10 ms -> wait = 3*10 + 30 = 60 ms: at 100 ms the missing frame 1 has timed out
    clock.setUs(100_000);
    let out = fb.poll(clock.nowUs(), 10);
    expect(out.dropped).toBe(0);
    expect(out.keyframeNeeded).toBe(true);
    expect(out.keyframeReasons).toEqual(['frame-buffer-timeout']);
    expect(fb.waitingFrames(0)).toBe(2);
    expect(fb.stats().timeouts).toBe(1);
    // still blocked: the request stands (the receiver's KeyframeRequester spaces the repeats)
    clock.advanceMs(10);
    expect(fb.poll(clock.nowUs(), 10).keyframeNeeded).toBe(true);
    // the retransmission of frame 1 arrives after the timeout: 1, 2, 3 and a later delta decode, the request ends
    fb.insert(mkFrame(1), clock.nowUs());
    fb.insert(mkFrame(4), clock.nowUs());
    out = fb.poll(clock.nowUs(), 10);
    expect(ids(out.decodable)).toEqual([1, 2, 3, 4]);
    expect(out.keyframeNeeded).toBe(false);
    expect(fb.stats().droppedTimeout).toBe(0);
    // the key frame the request produced still decodes after them
    fb.insert(mkFrame(5, { key: true }), clock.nowUs());
    expect(ids(fb.poll(clock.nowUs(), 10).decodable)).toEqual([5]);
  });

  it('by default a kept frame whose predecessor never comes waits for the key frame, bounded by maxAgeMs', () => {
    const fb = new FrameBuffer({ minWaitMs: 50, maxWaitMs: 1000, baseWaitMs: 30, maxAgeMs: 500 });
    fb.insert(mkFrame(0, { key: true }), 0);
    fb.poll(0, 0);
    fb.insert(mkFrame(2), 0);
    fb.insert(mkFrame(3), 0);
    expect(fb.poll(100_000, 10).keyframeNeeded).toBe(true);
    expect(fb.waitingFrames(0)).toBe(2);
    // past maxAgeMs the kept frames go, and only a key frame continues
    let out = fb.poll(600_000, 10);
    expect(out.dropped).toBe(2);
    expect(out.keyframeNeeded).toBe(true);
    fb.insert(mkFrame(1), 610_000);
    fb.insert(mkFrame(4), 610_000);
    out = fb.poll(620_000, 10);
    expect(out.decodable).toEqual([]);
    fb.insert(mkFrame(5, { key: true }), 630_000);
    fb.insert(mkFrame(6), 630_000);
    out = fb.poll(640_000, 10);
    expect(ids(out.decodable)).toEqual([5, 6]);
    expect(out.keyframeNeeded).toBe(false);
  });

  it('jumps to a later key frame while waiting for a missing one', () => {
    const fb = new FrameBuffer();
    fb.insert(mkFrame(0, { key: true }), 0);
    fb.insert(mkFrame(1), 0);
    fb.insert(mkFrame(3), 0); // 2 missing
    fb.insert(mkFrame(4), 0);
    fb.insert(mkFrame(5, { key: true }), 0);
    fb.insert(mkFrame(6), 0);
    const out = fb.poll(1000, 10);
    expect(ids(out.decodable)).toEqual([0, 1, 5, 6]);
    expect(out.dropped).toBe(2);
    expect(fb.insert(mkFrame(2), 2000)).toBe('stale');
  });

  it('at stream start, deltas wait for the key frame; without one a key frame is requested', () => {
    const fb = new FrameBuffer({ minWaitMs: 50, baseWaitMs: 30 });
    fb.insert(mkFrame(11), 0);
    fb.insert(mkFrame(12), 0);
    let out = fb.poll(10_000, 0);
    expect(out.decodable).toEqual([]);
    expect(out.keyframeNeeded).toBe(false);
    out = fb.poll(100_000, 0);
    expect(out.keyframeNeeded).toBe(true);
    fb.insert(mkFrame(10, { key: true }), 100_000); // arrives late but still useful
    out = fb.poll(100_000, 0);
    expect(ids(out.decodable)).toEqual([10, 11, 12]);
    expect(out.keyframeNeeded).toBe(false);
  });

  it('keeps streams independent', () => {
    const fb = new FrameBuffer();
    fb.insert(mkFrame(0, { key: true, streamId: 1 }), 0);
    fb.insert(mkFrame(0, { key: true, streamId: 2 }), 0);
    fb.insert(mkFrame(2, { streamId: 1 }), 0);
    fb.insert(mkFrame(1, { streamId: 2 }), 0);
    const out = fb.poll(0, 10);
    expect(out.decodable.map((f) => `${f.streamId}:${f.frameId}`)).toEqual(['1:0', '2:0', '2:1']);
    const later = fb.poll(2_000_000, 10);
    expect(later.keyframeNeededStreams).toEqual([1]);
  });

  it('handles frameId wrap-around', () => {
    const fb = new FrameBuffer();
    fb.insert(mkFrame(0xffff_fffe, { key: true }), 0);
    fb.insert(mkFrame(0), 0);
    fb.insert(mkFrame(0xffff_ffff), 0);
    expect(ids(fb.poll(0, 0).decodable)).toEqual([0xffff_fffe, 0xffff_ffff, 0]);
  });

  it('is bounded under a flood: drops the oldest, never grows, asks for a key frame', () => {
    const fb = new FrameBuffer({ maxFrames: 120 });
    fb.insert(mkFrame(0, { key: true }), 0);
    fb.poll(0, 0);
    for (let i = 2; i < 10_002; i++) fb.insert(mkFrame(i), i);
    expect(fb.waitingFrames(0)).toBe(120);
    const out = fb.poll(10_002, 0);
    expect(out.keyframeNeeded).toBe(true);
    expect(out.keyframeReasons).toEqual(['frame-buffer-overflow']);
    expect(out.dropped).toBe(10_000 - 120);
    expect(fb.stats().droppedOverflow).toBe(10_000 - 120);
    // a key frame after the flood restarts decoding
    fb.insert(mkFrame(10_100, { key: true }), 20_000);
    const o2 = fb.poll(20_000, 0);
    expect(ids(o2.decodable)).toEqual([10_100]);
    expect(fb.waitingFrames(0)).toBe(0);
  });

  it('refuses lying far-future frames but resynchronises after a sustained jump', () => {
    const fb = new FrameBuffer({ maxFrameIdJump: 1000, resyncAfterFrames: 5 });
    fb.insert(mkFrame(0, { key: true }), 0);
    fb.poll(0, 0);
    expect(fb.insert(mkFrame(1_000_000, { key: true }), 0)).toBe('dropped');
    fb.insert(mkFrame(1), 0);
    expect(ids(fb.poll(0, 0).decodable)).toEqual([1]);
    expect(fb.stats().droppedFar).toBe(1);
    // the sender really restarted its numbering
    for (let i = 0; i < 4; i++) expect(fb.insert(mkFrame(500_000 + i, { key: i === 0 }), 0)).toBe('dropped');
    expect(fb.insert(mkFrame(500_004, { key: true }), 0)).toBe('stored');
    expect(ids(fb.poll(0, 0).decodable)).toEqual([500_004]);
    expect(fb.stats().resyncs).toBe(1);
  });

  it('counts invalid frames and bounds the stream table', () => {
    const fb = new FrameBuffer({ maxStreams: 2 });
    expect(fb.insert({ ...mkFrame(1), frameId: -1 }, 0)).toBe('dropped');
    expect(fb.insert({ ...mkFrame(1), streamId: 1.5 }, 0)).toBe('dropped');
    expect(fb.insert(null as never, 0)).toBe('dropped');
    fb.insert(mkFrame(0, { key: true, streamId: 1 }), 0);
    fb.insert(mkFrame(0, { key: true, streamId: 2 }), 0);
    expect(fb.insert(mkFrame(0, { key: true, streamId: 3 }), 0)).toBe('dropped');
    expect(fb.stats().invalid).toBe(3);
    expect(fb.stats().droppedNoStream).toBe(1);
    expect(() => new FrameBuffer({ minWaitMs: 10, maxWaitMs: 5 })).toThrow(RangeError);
  });

  it('property: random/duplicated/reordered/far-future frames never throw, stay bounded, and a complete chain is delivered in order', () => {
    const garbage = fc.oneof(
      fc.record({ kind: fc.constant('far' as const), id: fc.integer({ min: 5000, max: 0xffff_ffff - 5000 }), key: fc.boolean() }),
      fc.record({ kind: fc.constant('dup' as const), id: fc.integer({ min: 0, max: 60 }), key: fc.constant(false) }),
      fc.record({ kind: fc.constant('other' as const), id: fc.nat(), key: fc.boolean() }),
      fc.record({ kind: fc.constant('nan' as const), id: fc.constant(NaN), key: fc.boolean() }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.array(fc.nat({ max: 4 }), { maxLength: 60 }), fc.array(fc.tuple(fc.nat({ max: 80 }), garbage), { maxLength: 20 }), (n, swaps, junk) => {
        const fb = new FrameBuffer({ maxFrames: 120, minWaitMs: 5000, maxWaitMs: 5000, maxFrameIdJump: 1000 });
        // chain 0 (key) .. n, locally reordered
        const order = Array.from({ length: n + 1 }, (_, i) => i);
        swaps.forEach((k, i) => {
          const a = i % (n + 1);
          const b = Math.min(n, a + k);
          if (a !== 0 && b !== 0) [order[a], order[b]] = [order[b], order[a]];
        });
        const ops: Array<() => void> = order.map((id) => () => void fb.insert(mkFrame(id, { key: id === 0 }), 0));
        const keyOp = ops[order.indexOf(0)];
        for (const [pos, g] of junk) {
          const at = Math.min(ops.length, pos);
          const f = g.kind === 'other' ? mkFrame(g.id % 1000, { key: g.key, streamId: 9 }) : g.kind === 'dup' ? mkFrame(Math.min(g.id, n)) : mkFrame(g.id, { key: g.key });
          // far-future frames must not come before the key frame sets the anchor
          ops.splice(Math.max(at, g.kind === 'far' || g.kind === 'nan' ? ops.indexOf(keyOp) + 1 : 0), 0, () => void fb.insert(f, 0));
        }
        const released: number[] = [];
        let t = 0;
        for (const op of ops) {
          op();
          t += 1000;
          const out = fb.poll(t, 20);
          for (const f of out.decodable) if (f.streamId === 0) released.push(f.frameId);
          expect(fb.stats().waiting).toBeLessThanOrEqual(120 * 2);
        }
        expect(released).toEqual(Array.from({ length: n + 1 }, (_, i) => i));
      }),
      { numRuns: 300 },
    );
  });

  it('property: released frames are in strictly increasing decode order per stream, chains unbroken', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.integer({ min: 0, max: 200 }), key: fc.boolean(), s: fc.integer({ min: 0, max: 2 }), dt: fc.integer({ min: 0, max: 100_000 }) }), { maxLength: 400 }),
        (ops) => {
          const fb = new FrameBuffer({ maxFrames: 16 });
          const last = new Map<number, number>();
          let t = 0;
          for (const o of ops) {
            t += o.dt;
            fb.insert(mkFrame(o.id, { key: o.key, streamId: o.s }), t);
            const out = fb.poll(t, 15);
            for (const f of out.decodable) {
              const prev = last.get(f.streamId);
              if (!f.keyFrame) expect(prev).toBe(f.frameId - 1);
              else if (prev !== undefined) expect(f.frameId).toBeGreaterThan(prev);
              last.set(f.streamId, f.frameId);
            }
            expect(fb.stats().waiting).toBeLessThanOrEqual(16 * 3);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('holds at most maxBytes: drops the oldest frame of the largest stream, never under budget', () => {
    const cost = 1000 + 256 + 64; // data + frame + one fragment overhead
    const fb = new FrameBuffer({ maxBytes: 10 * cost, maxAgeMs: 0 });
    // Stream 0 decodes normally while stream 1 piles up delta frames (no key frame).
    fb.insert(mkFrame(0, { key: true, size: 1000 }), 0);
    expect(ids(fb.poll(0, 10).decodable)).toEqual([0]);
    for (let i = 1; i <= 9; i++) expect(fb.insert(mkFrame(i, { streamId: 1, size: 1000 }), 0)).toBe('stored');
    expect(fb.stats().droppedBudget).toBe(0); // under budget: nothing dropped
    expect(fb.stats().bytes).toBe(9 * cost);
    fb.insert(mkFrame(10, { streamId: 1, size: 1000 }), 0);
    fb.insert(mkFrame(11, { streamId: 1, size: 1000 }), 0);
    expect(fb.stats().droppedBudget).toBe(1);
    expect(fb.waitingFrames(1)).toBe(10);
    // The well-behaved stream still gets its frame through.
    expect(fb.insert(mkFrame(1, { size: 1000 }), 0)).toBe('stored');
    const out = fb.poll(0, 10);
    expect(ids(out.decodable)).toEqual([1]);
    expect(fb.stats().bytes).toBeLessThanOrEqual(10 * cost);
    // A frame bigger than the whole budget is refused outright.
    expect(fb.insert(mkFrame(2, { size: 20 * cost }), 0)).toBe('dropped');
  });

  it('drops frames older than maxAgeMs even when no key frame comes', () => {
    const fb = new FrameBuffer({ maxAgeMs: 2000 });
    for (let i = 1; i <= 50; i++) fb.insert(mkFrame(i), i * 10_000); // deltas, no key frame
    let out = fb.poll(1_000_000, 10);
    expect(out.decodable).toEqual([]);
    expect(fb.waitingFrames(0)).toBe(50);
    out = fb.poll(2_250_000, 10); // frames stored before 0.25 s are over 2 s old
    expect(fb.stats().droppedAge).toBe(24);
    expect(out.dropped).toBe(24);
    expect(out.keyframeNeeded).toBe(true);
    fb.poll(3_000_000, 10);
    expect(fb.waitingFrames(0)).toBe(0);
    expect(fb.stats().bytes).toBe(0);
  });

  it('property: byte accounting matches what is held after any insert/poll sequence', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.integer({ min: 0, max: 60 }), stream: fc.integer({ min: 0, max: 3 }), key: fc.boolean(), size: fc.integer({ min: 0, max: 5000 }), poll: fc.boolean() }), {
          maxLength: 200,
        }),
        (ops) => {
          const fb = new FrameBuffer({ maxBytes: 20_000, maxAgeMs: 500, maxFrames: 10 });
          let t = 0;
          let released = 0;
          for (const o of ops) {
            t += 7_000;
            fb.insert(mkFrame(o.id, { streamId: o.stream, key: o.key, size: o.size }), t);
            if (o.poll) released += fb.poll(t, 10).decodable.length;
            const st = fb.stats();
            expect(st.bytes).toBeGreaterThanOrEqual(0);
            expect(st.bytes).toBeLessThanOrEqual(20_000);
            if (st.waiting === 0) expect(st.bytes).toBe(0);
          }
          expect(released).toBe(fb.stats().released);
        },
      ),
    );
  });
});

describe('FrameBuffer: temporal layers (L1T2: TL0 refs the previous TL0, TL1 refs the TL0 before it)', () => {
  /** L1T2 frame i: even = TL0 (refDistance 2, the previous TL0), odd = TL1 (refDistance 1). */
  const l1t2 = (i: number) => {
    const f = mkFrame(i, { key: i === 0 });
    if (i > 0) {
      f.temporalLayer = i % 2;
      if (i % 2 === 0) f.refDistance = 2;
    }
    return f;
  };

  it('a lost TL1 frame is skipped after the short skip wait: the next frames decode, no key frame', () => {
    const fb = new FrameBuffer();
    for (const i of [0, 1, 2]) fb.insert(l1t2(i), 0);
    expect(ids(fb.poll(0, 5, 200).decodable)).toEqual([0, 1, 2]);
    // Frame 3 (TL1) is lost; 4 (TL0, refs 2) and 5 (TL1, refs 4) arrive.
    fb.insert(l1t2(4), 100_000);
    fb.insert(l1t2(5), 110_000);
    // Not at once: the gap may be a reordered frame.
    expect(fb.poll(110_000, 5, 200).decodable).toEqual([]);
    // Skip wait = 3 x 5 + 30 = 45 ms (the 200 ms RTT is not waited for) -> decodes by 160 ms.
    const out = fb.poll(160_000, 5, 200);
    expect(ids(out.decodable)).toEqual([4, 5]);
    expect(out.keyframeNeeded).toBe(false);
    expect(fb.stats().skips).toBe(1);
    // And the chain goes on.
    fb.insert(l1t2(6), 170_000);
    expect(ids(fb.poll(170_000, 5, 200).decodable)).toEqual([6]);
    // Nothing asked for a key frame even long after.
    expect(fb.poll(5_000_000, 5, 200).keyframeNeeded).toBe(false);
  });

  it('a TL1 frame that arrives within the skip wait is still decoded in order', () => {
    const fb = new FrameBuffer();
    for (const i of [0, 1, 2]) fb.insert(l1t2(i), 0);
    fb.poll(0, 5, 200);
    fb.insert(l1t2(4), 100_000);
    expect(fb.poll(110_000, 5, 200).decodable).toEqual([]);
    fb.insert(l1t2(3), 120_000);
    expect(ids(fb.poll(120_000, 5, 200).decodable)).toEqual([3, 4]);
    expect(fb.stats().skips).toBe(0);
  });

  it('a lost TL0 frame still stalls until recovery: no later frame is released, a key frame is requested', () => {
    const fb = new FrameBuffer();
    for (const i of [0, 1, 2, 3]) fb.insert(l1t2(i), 0);
    expect(ids(fb.poll(0, 5, 200).decodable)).toEqual([0, 1, 2, 3]);
    // Frame 4 (TL0) is lost: 5 refs 4, 6 refs 4, 7 refs 6.
    for (const i of [5, 6, 7]) fb.insert(l1t2(i), 100_000);
    for (let t = 100_000; t < 300_000; t += 10_000) {
      const out = fb.poll(t, 5, 200);
      expect(out.decodable).toEqual([]);
      expect(out.keyframeNeeded).toBe(false); // NACK has time (wait = 15 + 30 + 200 ms)
    }
    // The retransmission of 4 arrives: everything decodes in order.
    fb.insert(l1t2(4), 300_000);
    expect(ids(fb.poll(300_000, 5, 200).decodable)).toEqual([4, 5, 6, 7]);
    // Lost again later (frame 8, TL0) and never recovered: the wait times out and a key frame is needed.
    fb.insert(l1t2(9), 400_000);
    fb.insert(l1t2(10), 400_000);
    let needKey = false;
    for (let t = 400_000; t <= 1_000_000 && !needKey; t += 10_000) {
      const out = fb.poll(t, 5, 200);
      expect(out.decodable).toEqual([]);
      needKey = out.keyframeNeeded;
    }
    expect(needKey).toBe(true);
    expect(fb.stats().skips).toBe(0);
  });

  it('never releases a frame whose reference was not released (L1T3: a TL2 frame after a lost TL1)', () => {
    // L1T3 pattern 0 2 1 2 | 0 ...: TL0 refs the previous TL0 (4 back), TL1 refs TL0 (2 back), TL2 refs the frame before.
    const l1t3 = (i: number) => {
      const f = mkFrame(i, { key: i === 0 });
      if (i === 0) return f;
      const tl = [0, 2, 1, 2][i % 4];
      f.temporalLayer = tl;
      f.refDistance = tl === 0 ? 4 : tl === 1 ? 2 : 1;
      return f;
    };
    const fb = new FrameBuffer();
    fb.insert(l1t3(0), 0);
    fb.insert(l1t3(1), 0);
    fb.poll(0, 5, 100);
    // 2 (TL1) lost; 3 (TL2, refs 2) and 4 (TL0, refs 0) arrive.
    fb.insert(l1t3(3), 50_000);
    fb.insert(l1t3(4), 60_000);
    const out = fb.poll(1_000_000, 5, 100);
    expect(ids(out.decodable)).toEqual([4]);
    expect(out.keyframeNeeded).toBe(false);
  });

  it('without layer fields a gap still needs the key frame (unchanged behaviour)', () => {
    const fb = new FrameBuffer();
    fb.insert(mkFrame(0, { key: true }), 0);
    fb.insert(mkFrame(1), 0);
    fb.poll(0, 5, 100);
    fb.insert(mkFrame(3), 10_000);
    fb.insert(mkFrame(4), 10_000);
    let needKey = false;
    for (let t = 10_000; t <= 1_000_000 && !needKey; t += 10_000) {
      expect(fb.poll(t, 5, 100).decodable).toEqual([]);
      needKey = fb.poll(t, 5, 100).keyframeNeeded;
    }
    expect(needKey).toBe(true);
  });
});
