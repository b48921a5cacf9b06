/**
 * FrameDecoder against a stand-in VideoDecoder (Node has no WebCodecs): frames
 * that arrive before the stream's codec is known are held, not lost.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FrameDecoder } from '../../../src/codec/webcodecs.js';
import type { EncodedFrameIn } from '../../../src/codec/webcodecs.js';

interface Chunk {
  type: 'key' | 'delta';
  timestamp: number;
}

class FakeDecoder {
  static instances: FakeDecoder[] = [];
  state: 'unconfigured' | 'configured' | 'closed' = 'unconfigured';
  decodeQueueSize = 0;
  codec = '';
  readonly chunks: Chunk[] = [];
  constructor(private readonly init: { output: (f: unknown) => void; error: (e: unknown) => void }) {
    FakeDecoder.instances.push(this);
  }
  configure(c: { codec: string }): void {
    this.codec = c.codec;
    this.state = 'configured';
  }
  decode(chunk: Chunk): void {
    this.chunks.push(chunk);
    this.init.output({ timestamp: chunk.timestamp, close: () => undefined });
  }
  close(): void {
    this.state = 'closed';
  }
}

const g = globalThis as Record<string, unknown>;
beforeEach(() => {
  FakeDecoder.instances = [];
  g.VideoDecoder = FakeDecoder;
  g.EncodedVideoChunk = class {
    type: string;
    timestamp: number;
    constructor(o: { type: string; timestamp: number }) {
      this.type = o.type;
      this.timestamp = o.timestamp;
    }
  };
});
afterEach(() => {
  delete g.VideoDecoder;
  delete g.EncodedVideoChunk;
});

const frame = (frameId: number, keyFrame: boolean): EncodedFrameIn => ({ streamId: 0, frameId, keyFrame, captureUs: frameId * 33_000, data: new Uint8Array([frameId & 0xff]) });

function make() {
  const decoded: number[] = [];
  const needKey: string[] = [];
  const dec = new FrameDecoder({ onDecoded: (i) => decoded.push(i.frameId), onNeedKeyframe: (r) => needKey.push(r) });
  return { dec, decoded, needKey };
}

describe('FrameDecoder', () => {
  it('holds a key frame and its deltas that arrive before the codec, and decodes them once it is known', () => {
    const { dec, decoded, needKey } = make();
    expect(dec.decode(frame(1, true))).toBe(false);
    dec.decode(frame(2, false));
    dec.decode(frame(3, false));
    expect(decoded).toEqual([]);
    dec.configure('vp8');
    expect(decoded).toEqual([1, 2, 3]);
    expect(FakeDecoder.instances[0].chunks.map((c) => c.type)).toEqual(['key', 'delta', 'delta']);
    expect(needKey).toEqual([]);
    expect(dec.stats().held).toBe(3);
    expect(dec.decode(frame(4, false))).toBe(true);
    expect(decoded).toEqual([1, 2, 3, 4]);
  });

  it('holds nothing before the first key frame and restarts the hold at a newer key frame', () => {
    const { dec, decoded, needKey } = make();
    dec.decode(frame(1, false)); // undecodable without its key frame
    dec.decode(frame(2, true));
    dec.decode(frame(3, false));
    dec.decode(frame(4, true));
    dec.decode(frame(5, false));
    dec.configure('vp8');
    expect(decoded).toEqual([4, 5]);
    expect(needKey).toEqual([]);
  });

  it('bounds the hold: past MAX_PENDING frames without a codec it gives them up', () => {
    const { dec, decoded, needKey } = make();
    dec.decode(frame(1, true));
    for (let i = 2; i <= FrameDecoder.MAX_PENDING + 5; i++) dec.decode(frame(i, false));
    dec.configure('vp8');
    expect(decoded).toEqual([]);
    // The next delta asks for a key frame instead of being fed to a decoder that cannot use it.
    expect(dec.decode(frame(FrameDecoder.MAX_PENDING + 6, false))).toBe(false);
    expect(needKey).toContain('decoder-waiting-for-key');
  });

  it('after the codec is known, a delta before any key frame is skipped and a key frame is asked for', () => {
    const { dec, decoded, needKey } = make();
    dec.configure('vp8');
    expect(dec.decode(frame(1, false))).toBe(false);
    expect(needKey).toEqual(['decoder-waiting-for-key']);
    expect(dec.decode(frame(2, true))).toBe(true);
    expect(decoded).toEqual([2]);
  });
});
