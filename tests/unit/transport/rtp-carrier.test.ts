import { afterEach, describe, expect, it, vi } from 'vitest';
import { attachRtpCarrier, type CarrierPeer, type RtpCarrier, rtpCarrierUnsupported } from '../../../src/transport/rtp-carrier.js';
import { SimplePeerPath, type SimplePeerInstance } from '../../../src/transport/simple-peer-path.js';

/** Browser stand-ins: just the members the carrier uses. */
class FakeWorker {
  static last: FakeWorker;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onerror: ((e: unknown) => void) | null = null;
  readonly posted: Array<Record<string, unknown>> = [];
  terminated = false;
  constructor(
    readonly url: URL,
    readonly opts: unknown,
  ) {
    FakeWorker.last = this;
  }
  postMessage(m: Record<string, unknown>): void {
    this.posted.push(m);
  }
  terminate(): void {
    this.terminated = true;
  }
  answer(data: Record<string, unknown>): void {
    this.onmessage?.({ data });
  }
}
class FakeTransform {
  constructor(
    readonly worker: FakeWorker,
    readonly options: { side: string },
  ) {}
}
const codecs = [{ mimeType: 'video/VP9' }, { mimeType: 'video/VP8' }, { mimeType: 'video/rtx' }];
class FakeSender {
  private tf: unknown = null;
  get transform(): unknown {
    return this.tf;
  }
  set transform(v: unknown) {
    this.tf = v;
  }
  track: unknown = null;
  static getCapabilities = () => ({ codecs });
  async replaceTrack(t: unknown) {
    this.track = t;
  }
}
class FakeReceiver {
  private tf: unknown = null;
  get transform(): unknown {
    return this.tf;
  }
  set transform(v: unknown) {
    this.tf = v;
  }
  track = { kind: 'video' };
  static getCapabilities = () => ({ codecs });
}
class FakeTransceiver {
  mid: string | null = null;
  currentDirection: string | null = null;
  prefs: unknown[] = [];
  readonly sender = new FakeSender();
  readonly receiver = new FakeReceiver();
  constructor(public direction: string) {}
  setCodecPreferences(c: unknown[]) {
    this.prefs = c;
  }
}
class FakePC {
  iceConnectionState = 'new';
  signalingState = 'stable';
  currentRemoteDescription: unknown = null;
  readonly transceivers: FakeTransceiver[] = [];
  private readonly listeners = new Map<string, Array<(e: unknown) => void>>();
  stats: Array<Record<string, unknown>> = [];
  addEventListener(t: string, cb: (e: unknown) => void) {
    this.listeners.set(t, [...(this.listeners.get(t) ?? []), cb]);
  }
  fire(t: string, e: unknown = {}) {
    for (const cb of this.listeners.get(t) ?? []) cb(e);
  }
  addTransceiver(track: unknown, init?: { direction: string }) {
    const t = new FakeTransceiver(init?.direction ?? 'sendrecv');
    t.sender.track = typeof track === 'string' ? null : track;
    this.transceivers.push(t);
    return t;
  }
  getTransceivers() {
    return this.transceivers;
  }
  async createOffer() {
    return { type: 'offer', sdp: 'v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=rtcp-fb:96 nack\r\na=rtcp-fb:96 transport-cc\r\n' };
  }
  async createAnswer() {
    return { type: 'answer', sdp: 'v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=rtcp-fb:96 nack pli\r\n' };
  }
  async getStats() {
    return new Map(this.stats.map((s) => [s.id as string, s]));
  }
}
class FakeGenerator {
  kind = 'video';
  stopped = false;
  written = 0;
  writable = {
    getWriter: () => ({ desiredSize: 1, write: async () => void this.written++, close: async () => undefined }),
  };
  stop() {
    this.stopped = true;
  }
}
class FakeVideoFrame {
  close() {}
}
class FakePeer implements CarrierPeer {
  destroyed = false;
  negotiations = 0;
  /** transceiverRequest signals sent (the non-initiator's addTransceiver). */
  readonly requests: Array<{ kind: string; init?: RTCRtpTransceiverInit }> = [];
  // biome-ignore lint/suspicious/noExplicitAny: simple-peer's event payloads differ per event
  private readonly handlers = new Map<string, Array<(...a: any[]) => void>>();
  constructor(
    public _pc: FakePC & RTCPeerConnection,
    readonly initiator = true,
  ) {}
  negotiate() {
    this.negotiations++;
  }
  /** simple-peer-light: the initiator adds and renegotiates (also on a remote transceiverRequest); the other asks. */
  addTransceiver(kind: string, init?: RTCRtpTransceiverInit) {
    if (!this.initiator) {
      this.requests.push({ kind, ...(init ? { init } : {}) });
      return;
    }
    this._pc.addTransceiver(kind, init);
    this.negotiations++;
  }
  // biome-ignore lint/suspicious/noExplicitAny: simple-peer's event payloads differ per event
  on(ev: string, cb: (...a: any[]) => void) {
    this.handlers.set(ev, [...(this.handlers.get(ev) ?? []), cb]);
  }
  emit(ev: string) {
    for (const cb of this.handlers.get(ev) ?? []) cb();
  }
}

function stubBrowser(): void {
  vi.stubGlobal('RTCPeerConnection', FakePC);
  vi.stubGlobal('RTCRtpScriptTransform', FakeTransform);
  vi.stubGlobal('RTCRtpSender', FakeSender);
  vi.stubGlobal('RTCRtpReceiver', FakeReceiver);
  vi.stubGlobal('Worker', FakeWorker);
  vi.stubGlobal('MediaStreamTrackGenerator', FakeGenerator);
  vi.stubGlobal('VideoFrame', FakeVideoFrame);
}

function openCarrier(initiator = true, attach: 'connect' | 'stall' = 'connect') {
  stubBrowser();
  const pc = new FakePC() as FakePC & RTCPeerConnection;
  const peer = new FakePeer(pc, initiator);
  const c = attachRtpCarrier(peer, { initiator, rtpCarrier: { attach, connectDelayMs: 0, maxQueuedBytes: 3000, maxQueuedDatagrams: 3, statsIntervalMs: 10 } });
  if (typeof c === 'string') throw new Error(c);
  return { pc, peer, c, w: FakeWorker.last };
}

function negotiated(pc: FakePC, w: FakeWorker): void {
  w.answer({ t: 'run', side: 'send' });
  w.answer({ t: 'run', side: 'recv' });
  const t = pc.transceivers[0];
  t.mid = '1';
  t.currentDirection = 'sendrecv';
  pc.iceConnectionState = 'connected';
  pc.currentRemoteDescription = {};
  pc.fire('signalingstatechange');
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('RTP carrier (page side, browser stand-ins)', () => {
  it('is unavailable, with a reason and without throwing, where WebRTC encoded transforms are missing', async () => {
    expect(rtpCarrierUnsupported()).toBe('no RTCPeerConnection');
    vi.stubGlobal('RTCPeerConnection', FakePC);
    expect(rtpCarrierUnsupported()).toMatch(/RTCRtpScriptTransform/);
    const peer = new FakePeer(new FakePC() as FakePC & RTCPeerConnection);
    expect(attachRtpCarrier(peer, { initiator: true, rtpCarrier: true })).toMatch(/RTCRtpScriptTransform/);
    vi.unstubAllGlobals();
    // Through SimplePeerPath's option: the lazy chunk loads and leaves the reason.
    class MockPeer implements SimplePeerInstance {
      destroyed = false;
      connected = false;
      bufferSize = 0;
      signal() {}
      destroy() {}
      on() {}
      negotiate() {}
    }
    const path = new SimplePeerPath({ pathId: 0, initiator: true, onSignal: () => undefined, Peer: MockPeer, rtpCarrier: true });
    await vi.waitFor(() => expect(path.rtpCarrier).toBe('no RTCPeerConnection'));
    const off = new SimplePeerPath({ pathId: 1, initiator: true, onSignal: () => undefined, Peer: MockPeer });
    await new Promise((r) => setTimeout(r, 20));
    expect(off.rtpCarrier).toBeUndefined();
  });

  it('initiator: a sendrecv VP8-only transceiver with both transforms; opens only once negotiated sendrecv, both transforms run and ICE is up', () => {
    const { pc, c, w } = openCarrier();
    const t = pc.transceivers[0];
    expect(t.direction).toBe('sendrecv');
    expect(t.prefs).toEqual([{ mimeType: 'video/VP8' }]);
    expect((t.sender.transform as FakeTransform).options.side).toBe('send');
    expect((t.receiver.transform as FakeTransform).options.side).toBe('recv');
    expect(t.sender.track).toBeInstanceOf(FakeGenerator);
    expect(w.opts).toMatchObject({ type: 'module' });
    expect(String(w.url)).toMatch(/rtp-carrier-worker\.js$/);
    expect(c.open).toBe(false);
    expect(c.send(new Uint8Array(10))).toBe(false);
    w.answer({ t: 'run', side: 'send' });
    w.answer({ t: 'run', side: 'recv' });
    t.currentDirection = 'sendonly'; // the remote did not opt in
    pc.iceConnectionState = 'connected';
    expect(c.open).toBe(false);
    t.currentDirection = 'sendrecv';
    expect(c.open).toBe(true);
    pc.iceConnectionState = 'disconnected';
    expect(c.open).toBe(false);
    expect(c.counters.sendRefused).toBe(1);
    c.close();
  });

  it('removes NACK/PLI/FIR from the offers and answers it makes', async () => {
    const { pc, c } = openCarrier();
    c.close();
    const o = await pc.createOffer();
    expect(o.sdp).not.toMatch(/nack/);
    expect(o.sdp).toMatch(/transport-cc/);
    expect((await pc.createAnswer()).sdp).not.toMatch(/nack/);
  });

  it('renegotiates (bounded) when the initiator transceiver missed the offer or the answerer answered before sendrecv', () => {
    const { pc, peer, c } = openCarrier();
    (pc as FakePC).currentRemoteDescription = {};
    pc.fire('signalingstatechange'); // stable, no mid: missed the first offer
    expect(peer.negotiations).toBe(1);
    pc.transceivers[0].mid = '1';
    pc.fire('signalingstatechange');
    expect(peer.negotiations).toBe(1);
    pc.transceivers[0].mid = null;
    for (let i = 0; i < 5; i++) pc.fire('signalingstatechange');
    expect(peer.negotiations).toBe(2); // at most twice (the remote may never take it)

    // Answerer: adopts the transceiver the remote offer made (the 'track' event).
    stubBrowser();
    const apc = new FakePC() as FakePC & RTCPeerConnection;
    const apeer = new FakePeer(apc, false);
    const ac = attachRtpCarrier(apeer, { initiator: false, rtpCarrier: { connectDelayMs: 0 } }) as RtpCarrier;
    expect(typeof ac).toBe('object');
    const remote = new FakeTransceiver('recvonly');
    apc.transceivers.push(remote);
    apc.fire('track', { track: { kind: 'video' }, transceiver: remote });
    expect(remote.direction).toBe('sendrecv');
    expect(remote.prefs).toEqual([{ mimeType: 'video/VP8' }]);
    expect(remote.sender.transform).toBeInstanceOf(FakeTransform);
    remote.currentDirection = 'recvonly'; // our answer went out before the transceiver was sendrecv
    apc.fire('signalingstatechange');
    expect(apeer.negotiations).toBe(1);
    remote.currentDirection = 'sendrecv';
    apc.fire('signalingstatechange');
    expect(apeer.negotiations).toBe(1);
    c.close();
    ac.close();
  });

  it('queues to the worker within its bound, frees on its reports, pushes frames, delivers with an age, polls the rate ceiling, closes', async () => {
    const { pc, peer, c, w } = openCarrier();
    negotiated(pc, w);
    expect(c.open).toBe(true);
    expect(c.send(new Uint8Array(1000).fill(1))).toBe(true);
    expect(c.send(new Uint8Array(1000))).toBe(true);
    expect(c.send(new Uint8Array(1001))).toBe(false); // 3000-byte bound
    expect(c.send(new Uint8Array(0))).toBe(false);
    expect(c.queuedBytes()).toBe(2000);
    expect(c.send(new Uint8Array(10))).toBe(true);
    expect(c.send(new Uint8Array(10))).toBe(false); // 3-datagram bound (the worker's, checked here too)
    w.answer({ t: 'out', n: 10, k: 1 });
    const sends = w.posted.filter((m) => m.t === 'send');
    expect(sends.length).toBe(3);
    expect(new Uint8Array(sends[0].d as ArrayBuffer)[0]).toBe(1); // a copy, handed over
    expect(c.counters.framesPushed).toBe(1); // the first send pushes a frame at once
    const gen = pc.transceivers[0].sender.track as FakeGenerator;
    expect(gen.written).toBe(1);
    w.answer({ t: 'out', n: 1000, k: 1 });
    w.answer({ t: 'drop', n: 1000, k: 1 });
    expect(c.queuedBytes()).toBe(0);
    expect(c.counters.queueDrops).toBe(1);

    const got: Array<[number[], number | undefined]> = [];
    c.on('message', (b, age) => got.push([[...b], age]));
    c.on('message', () => {
      throw new Error('a bad listener');
    });
    w.answer({ t: 'in', d: [new Uint8Array([7, 8]).buffer], at: performance.timeOrigin + performance.now() - 5 });
    expect(got.length).toBe(1);
    expect(got[0][0]).toEqual([7, 8]);
    expect(got[0][1]).toBeGreaterThanOrEqual(4000);
    expect(got[0][1]).toBeLessThan(2_000_001);
    expect(c.counters.errors).toBe(1);

    expect(c.rateCeilingBps()).toBeUndefined();
    pc.stats = [
      { id: 'T', type: 'transport', selectedCandidatePairId: 'P' },
      { id: 'P', type: 'candidate-pair', localCandidateId: 'L', remoteCandidateId: 'R', availableOutgoingBitrate: 812_000 },
      { id: 'L', type: 'local-candidate', address: '127.0.0.1', port: 5000, protocol: 'udp', candidateType: 'host' },
      { id: 'R', type: 'remote-candidate', address: '127.0.0.1', port: 6000, protocol: 'udp', candidateType: 'host' },
      { id: 'O', type: 'outbound-rtp', kind: 'video', framesEncoded: 40, framesSent: 38, targetBitrate: 90_000, qualityLimitationReason: 'none', bytesSent: 5000 },
      { id: 'A', type: 'outbound-rtp', kind: 'audio', bytesSent: 1 },
    ];
    await vi.waitFor(() => expect(c.rateCeilingBps()).toBe(812_000));
    expect(c.senderStats()).toEqual({
      availableOutgoingBitrate: 812_000,
      framesEncoded: 40,
      framesSent: 38,
      targetBitrate: 90_000,
      qualityLimitationReason: 'none',
      bytesSent: 5000,
      framesPushed: c.counters.framesPushed,
    });

    peer.emit('close');
    expect(c.open).toBe(false);
    expect(w.terminated).toBe(true);
    expect(gen.stopped).toBe(true);
    expect(c.send(new Uint8Array(5))).toBe(false);
    c.close(); // idempotent
    expect(await c.workerStats()).toBeUndefined();
  });

  it('fails (not open) when its worker takes nothing from the queue for 5 s while frames are pushed', () => {
    vi.useFakeTimers();
    const { pc, c, w } = openCarrier();
    negotiated(pc, w);
    expect(c.send(new Uint8Array(100))).toBe(true);
    // A healthy worker: each frame takes the queue; no failure however long it runs.
    for (let i = 0; i < 700; i++) {
      vi.advanceTimersByTime(10);
      if (c.queuedBytes() > 0) w.answer({ t: 'out', n: 100, k: 1 });
      expect(c.send(new Uint8Array(100))).toBe(true);
    }
    expect(c.open).toBe(true);
    // Now the frames stop taking datagrams (the worker says nothing): it keeps pushing, then gives up.
    vi.advanceTimersByTime(4000);
    expect(c.open).toBe(true);
    const pushed = c.counters.framesPushed;
    vi.advanceTimersByTime(2000);
    expect(c.counters.framesPushed - pushed).toBeGreaterThan(10);
    expect(c.open).toBe(false);
    expect(c.failure).toMatch(/no frame took a datagram/);
    const after = c.counters.framesPushed;
    vi.advanceTimersByTime(1000);
    expect(c.counters.framesPushed).toBe(after); // stopped pushing
    expect(c.send(new Uint8Array(10))).toBe(false);
  });

  it("attach 'stall': no worker, track or transceiver until wake(); then the initiator adds it and renegotiates, once", () => {
    stubBrowser();
    const pc = new FakePC() as FakePC & RTCPeerConnection;
    const peer = new FakePeer(pc);
    const before = FakeWorker.last;
    const c = attachRtpCarrier(peer, { initiator: true, rtpCarrier: { attach: 'stall' } }) as RtpCarrier;
    expect(typeof c).toBe('object');
    expect(FakeWorker.last).toBe(before); // no worker yet
    expect(pc.transceivers.length).toBe(0);
    pc.iceConnectionState = 'connected';
    (pc as FakePC).currentRemoteDescription = {};
    pc.fire('signalingstatechange');
    expect(peer.negotiations).toBe(0);
    expect(c.open).toBe(false);
    expect(c.send(new Uint8Array(10))).toBe(false);
    c.wake();
    expect(peer.negotiations).toBe(1);
    expect(pc.transceivers.length).toBe(1);
    const t = pc.transceivers[0];
    expect(t.direction).toBe('sendrecv');
    expect(t.prefs).toEqual([{ mimeType: 'video/VP8' }]);
    expect(t.sender.track).toBeInstanceOf(FakeGenerator);
    expect((t.sender.transform as FakeTransform).worker).toBe(FakeWorker.last);
    expect(FakeWorker.last).not.toBe(before);
    c.wake();
    c.wake();
    expect(peer.negotiations).toBe(1);
    expect(c.counters.wakes).toBe(1);
    // The remote's transceiverRequest (simple-peer adds a 'video' transceiver) gets the same one: no second m-section.
    peer.addTransceiver('video', { direction: 'sendrecv' });
    expect(pc.transceivers.length).toBe(1);
    // Audio or other transceivers pass through untouched.
    pc.addTransceiver('audio', { direction: 'recvonly' });
    expect(pc.transceivers.length).toBe(2);
    expect(pc.transceivers[1].sender.transform).toBe(null);
    negotiated(pc, FakeWorker.last);
    expect(c.open).toBe(true);
    expect(c.send(new Uint8Array(10))).toBe(true);
    c.close();
  });

  it("attach 'stall', initiator: a remote transceiverRequest before any stall of ours brings the carrier up", () => {
    const { pc, peer, c } = openCarrier(true, 'stall');
    expect(pc.transceivers.length).toBe(0);
    peer.addTransceiver('video', { direction: 'sendrecv' }); // what simple-peer does with the remote's request
    expect(pc.transceivers.length).toBe(1);
    expect(pc.transceivers[0].sender.track).toBeInstanceOf(FakeGenerator);
    expect(pc.transceivers[0].receiver.transform).toBeInstanceOf(FakeTransform);
    c.wake(); // nothing left to do
    expect(c.counters.wakes).toBe(0);
    c.close();
  });

  it("attach 'connect' with connectDelayMs: the initiator negotiates it that long after ICE first connects; default (`true`): at once", () => {
    vi.useFakeTimers();
    stubBrowser();
    const pc = new FakePC() as FakePC & RTCPeerConnection;
    const peer = new FakePeer(pc);
    const c = attachRtpCarrier(peer, { initiator: true, rtpCarrier: { connectDelayMs: 3000 } }) as RtpCarrier;
    vi.advanceTimersByTime(10_000);
    expect(pc.transceivers.length).toBe(0); // ICE not yet connected
    pc.iceConnectionState = 'connected';
    pc.fire('iceconnectionstatechange');
    vi.advanceTimersByTime(2900);
    expect(pc.transceivers.length).toBe(0);
    pc.fire('iceconnectionstatechange'); // no second timer
    vi.advanceTimersByTime(200);
    expect(pc.transceivers.length).toBe(1);
    expect(pc.transceivers[0].sender.track).toBeInstanceOf(FakeGenerator);
    expect(peer.negotiations).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(peer.negotiations).toBe(1);
    c.close();
    // The answerer waits for the offer; a closed carrier never wakes.
    const apc = new FakePC() as FakePC & RTCPeerConnection;
    const a = attachRtpCarrier(new FakePeer(apc, false), { initiator: false, rtpCarrier: { connectDelayMs: 3000 } }) as RtpCarrier;
    const pc3 = new FakePC() as FakePC & RTCPeerConnection;
    pc3.iceConnectionState = 'connected';
    const closed = attachRtpCarrier(new FakePeer(pc3), { initiator: true, rtpCarrier: { connectDelayMs: 3000 } }) as RtpCarrier;
    closed.close();
    vi.advanceTimersByTime(10_000);
    expect(apc.transceivers.length).toBe(0);
    expect(pc3.transceivers.length).toBe(0);
    a.close();
    // `true` (connectDelayMs 0): at once.
    const pc2 = new FakePC() as FakePC & RTCPeerConnection;
    const eager = attachRtpCarrier(new FakePeer(pc2), { initiator: true, rtpCarrier: true }) as RtpCarrier;
    expect(pc2.transceivers.length).toBe(1);
    eager.close();
    expect(attachRtpCarrier(new FakePeer(new FakePC() as FakePC & RTCPeerConnection), { initiator: true, rtpCarrier: { connectDelayMs: -1 } })).toMatch(/connectDelayMs/);
    // x-google-min-bitrate is in kbps: a floor under 1000 bps is refused, not dropped from the SDP silently.
    expect(attachRtpCarrier(new FakePeer(new FakePC() as FakePC & RTCPeerConnection), { initiator: true, rtpCarrier: { minBitrateBps: 500 } })).toMatch(/minBitrateBps must be 0 \(none\) or >= 1000/);
    expect(typeof attachRtpCarrier(new FakePeer(new FakePC() as FakePC & RTCPeerConnection), { initiator: true, rtpCarrier: { minBitrateBps: 0 } })).toBe('object');
    expect(typeof attachRtpCarrier(new FakePeer(new FakePC() as FakePC & RTCPeerConnection), { initiator: true, rtpCarrier: { minBitrateBps: 1000 } })).toBe('object');
  });

  it("attach 'stall', answerer: wake() asks the initiator (bounded, 5 s apart), then adopts the offered transceiver", () => {
    let now = 1000;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const { pc, peer, c } = openCarrier(false, 'stall');
    c.wake();
    c.wake();
    expect(peer.requests).toEqual([{ kind: 'video', init: { direction: 'sendrecv' } }]);
    now += 5001; // the request was lost: asked again
    c.wake();
    now += 5001;
    c.wake();
    now += 5001;
    c.wake();
    expect(peer.requests.length).toBe(3);
    expect(c.counters.wakes).toBe(3);
    const remote = new FakeTransceiver('sendrecv');
    pc.transceivers.push(remote);
    pc.fire('track', { track: { kind: 'video' }, transceiver: remote });
    expect(remote.sender.track).toBeInstanceOf(FakeGenerator);
    expect(remote.sender.transform).toBeInstanceOf(FakeTransform);
    negotiated(pc, FakeWorker.last);
    expect(c.open).toBe(true);
    c.close();
    vi.restoreAllMocks();
  });

  it("attach 'stall': wake() neither offers nor asks until the remote peer said it has a carrier", () => {
    for (const initiator of [true, false]) {
      stubBrowser();
      const pc = new FakePC() as FakePC & RTCPeerConnection;
      const peer = new FakePeer(pc, initiator);
      let remote = false;
      const c = attachRtpCarrier(peer, { initiator, rtpCarrier: { attach: 'stall' } }, () => remote);
      if (typeof c === 'string') throw new Error(c);
      c.wake();
      expect(pc.transceivers.length + peer.requests.length).toBe(0); // e.g. a Firefox peer: nothing is negotiated
      expect(c.counters.wakes).toBe(0);
      remote = true;
      c.wake();
      expect(pc.transceivers.length + peer.requests.length).toBe(1);
      c.close();
    }
    // 'connect' is not gated (both peers opted in explicitly).
    stubBrowser();
    const pc = new FakePC() as FakePC & RTCPeerConnection;
    const c = attachRtpCarrier(new FakePeer(pc, true), { initiator: true, rtpCarrier: true }, () => false);
    expect(typeof c).toBe('object');
    expect(pc.transceivers.length).toBe(1);
  });

  it('a path with a carrier tells the remote peer once it connects; the remote path consumes the signal', async () => {
    stubBrowser();
    const pcs: FakePC[] = [];
    class PcPeer implements SimplePeerInstance {
      destroyed = false;
      connected = false;
      bufferSize = 0;
      // biome-ignore lint/suspicious/noExplicitAny: a stand-in for simple-peer's untyped RTCPeerConnection member
      _pc: any = new FakePC();
      private readonly handlers = new Map<string, Array<() => void>>();
      constructor() {
        pcs.push(this._pc);
      }
      signals: unknown[] = [];
      signal(d: unknown) {
        this.signals.push(d);
      }
      destroy() {}
      on(ev: string, cb: () => void) {
        this.handlers.set(ev, [...(this.handlers.get(ev) ?? []), cb]);
      }
      emit(ev: string) {
        for (const cb of this.handlers.get(ev) ?? []) cb();
      }
      negotiate() {}
      addTransceiver() {}
    }
    const out: unknown[] = [];
    const path = new SimplePeerPath({ pathId: 0, initiator: false, onSignal: (d) => out.push(d), Peer: PcPeer, rtpCarrier: { attach: 'stall' } });
    await vi.waitFor(() => expect(typeof path.rtpCarrier).toBe('object'));
    expect(out).toEqual([]); // not connected yet
    const peer = (path as unknown as { peer: PcPeer }).peer;
    peer.emit('connect');
    peer.emit('connect');
    expect(out).toEqual([{ rtpCarrier: 1 }]);
    // The other side: the signal sets remoteRtpCarrier and never reaches simple-peer (it would destroy the peer).
    expect(path.remoteRtpCarrier).toBe(false);
    path.signal({ rtpCarrier: 1 });
    expect(path.remoteRtpCarrier).toBe(true);
    expect(peer.signals).toEqual([]);
    // No carrier here (unsupported browser): no announcement.
    vi.unstubAllGlobals();
    const out2: unknown[] = [];
    const bare = new SimplePeerPath({ pathId: 1, initiator: false, onSignal: (d) => out2.push(d), Peer: PcPeer, rtpCarrier: { attach: 'stall' } });
    await vi.waitFor(() => expect(typeof bare.rtpCarrier).toBe('string'));
    (bare as unknown as { peer: PcPeer }).peer.emit('connect');
    expect(out2).toEqual([]);
  });

  it('rejects bad options with a reason, not an exception', () => {
    stubBrowser();
    const peer = new FakePeer(new FakePC() as FakePC & RTCPeerConnection);
    expect(attachRtpCarrier(peer, { initiator: true, rtpCarrier: { maxFrameRate: 0 } })).toMatch(/maxFrameRate/);
    expect(attachRtpCarrier(peer, { initiator: true, rtpCarrier: { attach: 'later' as 'stall' } })).toMatch(/attach/);
    peer.destroyed = true;
    expect(attachRtpCarrier(peer, { initiator: true, rtpCarrier: true })).toMatch(/closed/);
  });
});
