import { afterAll, describe, expect, it, vi } from 'vitest';

/** A Worker stand-in: records what the page posts, lets the test answer as the worker would. */
class FakeWorker {
  static last: FakeWorker | undefined;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onerror: (() => void) | null = null;
  readonly posted: Array<{ msg: Record<string, unknown>; transfer: unknown[] }> = [];
  constructor(_url: string) {
    FakeWorker.last = this;
  }
  postMessage(msg: Record<string, unknown>, transfer: unknown[] = []): void {
    this.posted.push({ msg, transfer });
  }
  answer(data: Record<string, unknown>): void {
    this.onmessage?.({ data });
  }
}

/** An RTCPeerConnection stand-in: createDataChannel and the 'datachannel' event only. */
class FakePC {
  private readonly listeners: Array<(ev: { channel: unknown }) => void> = [];
  createDataChannel(label: string): { label: string } {
    return { label };
  }
  addEventListener(type: string, cb: (ev: { channel: unknown }) => void): void {
    if (type === 'datachannel') this.listeners.push(cb);
  }
  fireDataChannel(channel: unknown): void {
    for (const l of this.listeners) l({ channel });
  }
}

vi.stubGlobal('Worker', FakeWorker);
vi.stubGlobal('RTCPeerConnection', FakePC);
afterAll(() => vi.unstubAllGlobals());

describe('datachannel worker (arrival stamps off the main thread)', () => {
  it('keeps channels on the main thread until the worker answers, then hands new ones over', async () => {
    const { datachannelWorkerRtc, startDatachannelWorker, WorkerChannel } = await import('../../../src/transport/datachannel-worker.js');
    const counters = startDatachannelWorker();
    const wrtc = datachannelWorkerRtc() as { RTCPeerConnection: new () => FakePC & { ondatachannel: unknown } };
    const w = FakeWorker.last!;
    expect(w.posted[0]?.msg.t).toBe('ping');
    const pc = new wrtc.RTCPeerConnection();
    const early = pc.createDataChannel('early');
    expect(early).not.toBeInstanceOf(WorkerChannel);
    expect(counters.notAdopted).toBe(1);

    w.answer({ t: 'pong' });
    const ch = pc.createDataChannel('media') as unknown as InstanceType<typeof WorkerChannel>;
    expect(ch).toBeInstanceOf(WorkerChannel);
    expect(ch.label).toBe('media');
    const add = w.posted.find((p) => p.msg.t === 'add')!;
    expect(add.transfer).toEqual([add.msg.dc]);
    expect(counters.adopted).toBe(1);

    // Not open yet: send throws as RTCDataChannel.send does.
    expect(() => ch.send(new Uint8Array(4))).toThrow(/connecting/);
    let opened = 0;
    ch.onopen = () => opened++;
    w.answer({ t: 'state', id: ch.id, s: 'open', ba: 0 });
    expect(ch.readyState).toBe('open');
    expect(opened).toBe(1);

    // A send copies only the view's bytes; bufferedAmount counts them until the worker reports.
    const big = new Uint8Array([9, 1, 2, 3, 9]);
    ch.send(big.subarray(1, 4));
    const sent = w.posted[w.posted.length - 1]!;
    expect(sent.msg.t).toBe('send');
    expect([...new Uint8Array(sent.msg.d as ArrayBuffer)]).toEqual([1, 2, 3]);
    expect(ch.bufferedAmount).toBe(3);
    w.answer({ t: 'sent', id: ch.id, n: 3, ok: true, ba: 1200 });
    expect(ch.bufferedAmount).toBe(1200);

    // A message carries the worker's arrival stamp while its handler runs.
    const seen: Array<[number, number, number | undefined]> = [];
    ch.onmessage = (ev) => seen.push([(ev.data as ArrayBuffer).byteLength, ch.lastArrivalEpochMs, ch.arrivalAgeUs]);
    const at = performance.timeOrigin + performance.now() - 40;
    w.answer({ t: 'msg', id: ch.id, d: new ArrayBuffer(7), at });
    expect(seen[0]!.slice(0, 2)).toEqual([7, at]);
    expect(seen[0]![2]).toBeGreaterThanOrEqual(40_000);
    expect(seen[0]![2]).toBeLessThan(1_000_000);
    expect(Number.isNaN(ch.lastArrivalEpochMs)).toBe(true);
    expect(ch.arrivalAgeUs).toBeUndefined();
    // A stamp from a page stalled for a minute is clamped to 2 s.
    w.answer({ t: 'msg', id: ch.id, d: new ArrayBuffer(1), at: at - 60_000 });
    expect(seen[1]![2]).toBe(2_000_000);
    expect(counters.messagesIn).toBe(2);

    // The answerer's channel (datachannel event) is handed over as well.
    let got: unknown;
    pc.ondatachannel = (ev: { channel: unknown }) => {
      got = ev.channel;
    };
    pc.fireDataChannel({ label: 'remote' });
    expect(got).toBeInstanceOf(WorkerChannel);
    expect((got as { label: string }).label).toBe('remote');

    let closed = 0;
    ch.onclose = () => closed++;
    ch.close();
    expect(w.posted[w.posted.length - 1]!.msg).toEqual({ t: 'close', id: ch.id });
    w.answer({ t: 'state', id: ch.id, s: 'closed', ba: 0 });
    expect(closed).toBe(1);
    // Messages for a closed channel are ignored.
    w.answer({ t: 'msg', id: ch.id, d: new ArrayBuffer(1), at: 1 });
    expect(seen).toHaveLength(2);
  });
});
