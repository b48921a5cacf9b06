import { beforeAll, describe, expect, it, vi } from 'vitest';
import { packFrame, unpackFrame } from '../../../src/transport/rtp-carrier-frame.js';

/** The worker's global as the carrier's worker sees it: what it posts, and its two handlers. */
const posted: Array<Record<string, unknown>> = [];
const scope = {
  postMessage: (m: Record<string, unknown>) => posted.push(m),
  onmessage: null as ((e: { data: unknown }) => void) | null,
  onrtctransform: null as ((e: unknown) => void) | null,
};

interface Frame {
  type?: string;
  data: ArrayBuffer;
}

/** Run one transform side: feed `frames`, return what it passed on. */
async function transform(side: 'send' | 'recv', frames: Frame[]): Promise<Frame[]> {
  const out: Frame[] = [];
  const readable = new ReadableStream<Frame>({
    start(c) {
      for (const f of frames) c.enqueue(f);
      c.close();
    },
  });
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const writable = new WritableStream<Frame>({ write: (f) => void out.push(f), close: () => done() });
  scope.onrtctransform?.({ transformer: { options: { side }, readable, writable } });
  await finished;
  return out;
}
const send = (n: number, fill: number) => scope.onmessage?.({ data: { t: 'send', d: new Uint8Array(n).fill(fill).buffer } });
const frame = (type = 'delta'): Frame => ({ type, data: new ArrayBuffer(20) });
const lastOf = (t: string) => posted.filter((m) => m.t === t);

beforeAll(async () => {
  vi.stubGlobal('self', scope);
  await import('../../../src/transport/rtp-carrier-worker.js');
  vi.unstubAllGlobals();
});

describe('RTP carrier worker', () => {
  it('bundles queued datagrams into frames (two per frame), skips key frames and empty frames', async () => {
    scope.onmessage?.({ data: { t: 'cfg', maxDatagrams: 2, maxFrameBytes: 2600 } });
    for (let i = 1; i <= 5; i++) send(100 * i, i);
    const out = await transform('send', [frame('key'), frame(), frame(), frame(), frame()]);
    expect(posted.some((m) => m.t === 'run' && m.side === 'send')).toBe(true);
    // The key frame is not passed on; 5 datagrams fill 3 frames; the 4th delta frame finds the queue empty.
    expect(out.length).toBe(3);
    const parsed = out.map((f) => unpackFrame(new Uint8Array(f.data)));
    expect(parsed.map((p) => (typeof p === 'string' ? p : p.datagrams.map((d) => [d.length, d[0]])))).toEqual([
      [
        [100, 1],
        [200, 2],
      ],
      [
        [300, 3],
        [400, 4],
      ],
      [[500, 5]],
    ]);
    expect(parsed.map((p) => (typeof p === 'string' ? p : p.frameSeq))).toEqual([0, 1, 2]);
    expect(lastOf('out').map((m) => m.n)).toEqual([300, 700, 500]);
    scope.onmessage?.({ data: { t: 'stats' } });
    const s = lastOf('stats').at(-1)?.s as Record<string, number>;
    expect(s).toMatchObject({ framesIn: 5, framesSent: 3, keyFramesSkipped: 1, framesEmpty: 1, datagramsSent: 5, bytesSent: 1500, queued: 0 });
  });

  it('bounds its queue (bytes, datagrams) and drops stale datagrams, reporting each drop', async () => {
    posted.length = 0;
    scope.onmessage?.({ data: { t: 'cfg', maxQueueBytes: 1000, maxQueueDatagrams: 3, maxQueueDelayMs: 1 } });
    send(600, 1);
    send(600, 2); // over the byte bound
    send(100, 3);
    send(100, 4);
    send(100, 5); // over the datagram bound
    expect(lastOf('drop').map((m) => [m.n, m.k])).toEqual([
      [600, 1],
      [100, 1],
    ]);
    await new Promise((r) => setTimeout(r, 5));
    const out = await transform('send', [frame()]);
    expect(out).toEqual([]); // all three were older than 1 ms
    expect(lastOf('drop').at(-1)).toMatchObject({ n: 800, k: 3 });
    scope.onmessage?.({ data: { t: 'cfg', maxQueueBytes: 262_144, maxQueueDatagrams: 1024, maxQueueDelayMs: 1000 } });
  });

  it('receives: posts the datagrams with an arrival stamp, drops duplicates and foreign frames, passes nothing on', async () => {
    posted.length = 0;
    const f1 = packFrame(7, [new Uint8Array([1, 2, 3]), new Uint8Array([4])]);
    const f2 = packFrame(8, [new Uint8Array([5, 6])]);
    const foreign = new Uint8Array(30); // a real VP8 frame would not carry our magic
    const out = await transform('recv', [{ data: f1.slice().buffer }, { data: f1.slice().buffer }, { data: foreign.buffer }, { data: f2.slice().buffer }]);
    expect(out).toEqual([]);
    const ins = lastOf('in');
    expect(ins.map((m) => (m.d as ArrayBuffer[]).map((b) => [...new Uint8Array(b)]))).toEqual([[[1, 2, 3], [4]], [[5, 6]]]);
    for (const m of ins) expect(Math.abs((m.at as number) - Date.now())).toBeLessThan(60_000);
    scope.onmessage?.({ data: { t: 'stats' } });
    const s = lastOf('stats').at(-1)?.s as { duplicateFrames: number; badFrames: Record<string, number>; datagramsReceived: number; framesReceived: number };
    expect(s.framesReceived).toBe(4);
    expect(s.duplicateFrames).toBe(1);
    expect(s.badFrames).toEqual({ magic: 1 });
    expect(s.datagramsReceived).toBe(3);
  });

  it('ignores malformed messages', () => {
    const before = posted.length;
    scope.onmessage?.({ data: null });
    scope.onmessage?.({ data: { t: 'send', d: 'nope' } });
    scope.onmessage?.({ data: { t: 'send', d: new ArrayBuffer(0) } });
    scope.onmessage?.({ data: { t: 'cfg', maxDatagrams: 'many' } });
    expect(posted.length).toBe(before);
  });
});
