import { describe, expect, it } from 'vitest';
import { SimplePeerPath, type SimplePeerInstance } from '../../../src/transport/simple-peer-path.js';
import { PathCandidatePolicy } from '../../../src/transport/candidates.js';
import type { PathTransportErrorInfo, PathTransportState } from '../../../src/transport/types.js';

/** Stand-in for simple-peer: records calls, lets the test emit events. */
class MockPeer implements SimplePeerInstance {
  static last: MockPeer;
  readonly opts: Record<string, unknown>;
  readonly signals: unknown[] = [];
  // biome-ignore lint/suspicious/noExplicitAny: a mock of simple-peer's untyped internals
  private handlers = new Map<string, ((...a: any[]) => void)[]>();
  destroyed = false;
  connected = false;
  bufferSize = 0;
  sent: Uint8Array[] = [];
  // biome-ignore lint/suspicious/noExplicitAny: a mock of simple-peer's untyped internals
  _channel: any = {
    readyState: 'connecting',
    bufferedAmount: 0,
    send: (b: Uint8Array) => {
      if (b.byteLength > 1000) throw new TypeError('too large');
      this.sent.push(b);
    },
  };
  statsEntries: Record<string, unknown>[] = [];
  // biome-ignore lint/suspicious/noExplicitAny: a mock of simple-peer's untyped internals
  _pc: any = { getStats: async () => new Map(this.statsEntries.map((s) => [s.id, s])) };

  constructor(opts: Record<string, unknown>) {
    this.opts = opts;
    MockPeer.last = this;
  }
  // biome-ignore lint/suspicious/noExplicitAny: a mock of simple-peer's untyped internals
  on(ev: string, cb: (...a: any[]) => void): this {
    const l = this.handlers.get(ev) ?? [];
    l.push(cb);
    this.handlers.set(ev, l);
    return this;
  }
  emit(ev: string, ...args: unknown[]): void {
    for (const cb of this.handlers.get(ev) ?? []) cb(...args);
  }
  signal(data: unknown): void {
    this.signals.push(data);
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
  open(): void {
    this._channel.readyState = 'open';
    this.connected = true;
    this.emit('connect');
  }
}

const ETH = 'candidate:1 1 udp 2122260223 192.0.2.2 46243 typ host generation 0 ufrag u network-id 1';
const LO = 'candidate:2 1 udp 2122194687 127.0.0.1 51000 typ host generation 0 ufrag u network-id 2';
const cand = (c: string) => ({ type: 'candidate', candidate: { candidate: c, sdpMLineIndex: 0, sdpMid: '0' } });

function make(extra: Partial<ConstructorParameters<typeof SimplePeerPath>[0]> = {}) {
  const out: Record<string, unknown>[] = [];
  const path = new SimplePeerPath({ pathId: 1, initiator: true, onSignal: (d) => out.push(d), Peer: MockPeer, ...extra });
  return { path, peer: MockPeer.last, out };
}

describe('SimplePeerPath (with a mock simple-peer)', () => {
  it('configures simple-peer for an unreliable unordered binary channel without public STUN', () => {
    const { path, peer } = make();
    expect(peer.opts).toMatchObject({
      initiator: true,
      trickle: true,
      channelName: 'mp-path-1',
      channelConfig: { ordered: false, maxRetransmits: 0 },
      config: { iceServers: [] },
    });
    expect(path.state).toBe('connecting');
    const turn = [{ urls: 'turn:t.example', username: 'u', credential: 'c' }];
    expect(make({ iceServers: turn, initiator: false }).peer.opts.config).toEqual({ iceServers: turn });
  });

  it('filters outgoing trickle candidates, forwards end-of-candidates and SDP, counts malformed', () => {
    const policy = PathCandidatePolicy.byNetwork([ETH, LO]);
    const { path, peer, out } = make({ candidateFilter: policy.filterFor(1) });
    peer.emit('signal', { type: 'offer', sdp: 'v=0\r\n' });
    peer.emit('signal', cand(ETH));
    peer.emit('signal', cand(LO));
    peer.emit('signal', cand('candidate:garbage'));
    peer.emit('signal', cand(''));
    expect(out).toEqual([{ type: 'offer', sdp: 'v=0\r\n' }, cand(LO), cand('')]);
    expect(path.counters).toMatchObject({ candidatesFiltered: 1, candidatesMalformed: 1, signalsOut: 3 });
    expect(path.localCandidates.map((c) => c.address)).toEqual(['192.0.2.2', '127.0.0.1']);
  });

  it('calls the candidate filter with the path id', () => {
    const seen: number[] = [];
    make({ candidateFilter: (_c, pathId) => (seen.push(pathId), true) });
    MockPeer.last.emit('signal', cand(ETH));
    expect(seen).toEqual([1]);
  });

  it('filters candidates inside a non-trickle SDP', () => {
    const { out } = make({ trickle: false, candidateFilter: (c) => c.address === '192.0.2.2' });
    const sdp = `v=0\r\na=${ETH}\r\na=${LO}\r\n`;
    MockPeer.last.emit('signal', { type: 'offer', sdp });
    expect(out).toEqual([{ type: 'offer', sdp: `v=0\r\na=${ETH}\r\n` }]);
  });

  it('passes valid remote signals and drops invalid ones without killing the path', () => {
    const { path, peer } = make({ initiator: false, maxRemoteSignals: 3 });
    expect(path.state).toBe('new');
    const errors: PathTransportErrorInfo[] = [];
    path.on('error', (e) => errors.push(e));
    path.signal({ type: 'offer', sdp: 'v=0' });
    expect(path.state).toBe('connecting');
    path.signal(cand(ETH));
    path.signal({ type: 'bogus' });
    path.signal('a string');
    path.signal({ candidate: 5 });
    path.signal({ type: 'pranswer', sdp: 'v=0' });
    expect(peer.signals).toEqual([{ type: 'offer', sdp: 'v=0' }, cand(ETH)]);
    expect(errors.map((e) => e.code)).toEqual(Array(4).fill('ERR_PATH_BAD_SIGNAL'));
    path.signal({ renegotiate: true });
    path.signal(cand(LO)); // over the bound of 3
    path.signal(cand(LO));
    expect(peer.signals).toHaveLength(3);
    expect(errors.at(-1)!.code).toBe('ERR_PATH_TOO_MANY_SIGNALS');
    expect(errors).toHaveLength(5);
    expect(path.state).toBe('connecting');
  });

  it('refuses a remote transceiverRequest unless the path has an RTP carrier (the remote opted in, this side did not)', () => {
    const { path, peer } = make({ initiator: true });
    const errors: PathTransportErrorInfo[] = [];
    path.on('error', (e) => errors.push(e));
    const req = { transceiverRequest: { kind: 'video', init: { direction: 'sendrecv' } } };
    // Without the option: simple-peer would add a video transceiver and renegotiate.
    path.signal(req);
    expect(peer.signals).toEqual([]);
    expect(errors.map((e) => e.code)).toEqual(['ERR_PATH_BAD_SIGNAL']);
    expect(path.counters.badSignalsIn).toBe(1);
    expect(path.state).toBe('connecting');
    // A carrier that could not be set up (a reason string) refuses too; one that exists takes video only.
    path.rtpCarrier = 'no RTCRtpScriptTransform (WebRTC encoded transform)';
    path.signal(req);
    expect(peer.signals).toEqual([]);
    path.rtpCarrier = { open: false } as unknown as typeof path.rtpCarrier;
    path.signal({ transceiverRequest: { kind: 'audio' } });
    expect(peer.signals).toEqual([]);
    path.signal(req);
    expect(peer.signals).toEqual([req]);
    expect(errors).toHaveLength(3);
  });

  it('sends only when open, never throws, delivers binary as plain Uint8Array', () => {
    const { path, peer } = make();
    const states: PathTransportState[] = [];
    path.on('state', (s) => states.push(s));
    expect(path.send(new Uint8Array([1]))).toBe(false);
    peer.open();
    expect(states).toEqual(['connected']);
    expect(path.send(new Uint8Array([1, 2]))).toBe(true);
    expect(path.send(new Uint8Array(2000))).toBe(false); // channel throws
    expect(peer.sent).toHaveLength(1);
    expect(path.counters.sendFailures).toBe(2);
    peer._channel.bufferedAmount = 1234;
    expect(path.bufferedAmount()).toBe(1234);

    const got: Uint8Array[] = [];
    path.on('message', (m) => got.push(m));
    class FakeBuffer extends Uint8Array {}
    const backing = new Uint8Array([9, 8, 7, 6]);
    peer.emit('data', new FakeBuffer(backing.buffer, 1, 2));
    peer.emit('data', 'text is dropped');
    expect(got).toHaveLength(1);
    expect(got[0]!.constructor).toBe(Uint8Array);
    expect([...got[0]!]).toEqual([8, 7]);
    expect(path.counters.textMessagesDropped).toBe(1);
  });

  it("passes a worker channel's arrival age (µs) on with the message, and none for a main-thread channel", () => {
    const { path, peer } = make();
    peer.open();
    const got: Array<number | undefined> = [];
    path.on('message', (_m, ageUs) => got.push(ageUs));
    peer.emit('data', new Uint8Array([1]));
    peer._channel.arrivalAgeUs = 40_000;
    peer.emit('data', new Uint8Array([2]));
    expect(got).toEqual([undefined, 40_000]);
  });

  it('maps simple-peer errors (with code) to failed, close to closed', () => {
    const { path, peer } = make();
    const errors: PathTransportErrorInfo[] = [];
    path.on('error', (e) => errors.push(e));
    peer.emit('error', Object.assign(new Error('Ice connection failed.'), { code: 'ERR_ICE_CONNECTION_FAILURE' }));
    peer.emit('close');
    expect(path.state).toBe('failed');
    expect(errors[0]).toMatchObject({ code: 'ERR_ICE_CONNECTION_FAILURE', message: 'Ice connection failed.' });
    path.signal(cand(ETH)); // ignored after failure
    expect(peer.signals).toEqual([]);

    const b = make();
    b.path.close();
    expect(b.path.state).toBe('closed');
    expect(b.peer.destroyed).toBe(true);
    b.path.close();
  });

  it('selectedPair reads getStats and adds the network-id of the local candidate', async () => {
    const { path, peer } = make();
    peer.emit('signal', cand(ETH));
    peer.open();
    peer.statsEntries = [
      { id: 'T', type: 'transport', selectedCandidatePairId: 'CP' },
      { id: 'CP', type: 'candidate-pair', localCandidateId: 'L', remoteCandidateId: 'R' },
      { id: 'L', type: 'local-candidate', address: '192.0.2.2', port: 46243, protocol: 'udp', candidateType: 'host' },
      { id: 'R', type: 'remote-candidate', address: '192.0.2.3', port: 40000, protocol: 'udp', candidateType: 'host' },
    ];
    expect(await path.selectedPair()).toEqual({
      id: 'CP',
      local: { address: '192.0.2.2', port: 46243, protocol: 'udp', type: 'host', networkId: 1 },
      remote: { address: '192.0.2.3', port: 40000, protocol: 'udp', type: 'host' },
    });
    peer._pc = { getStats: async () => Promise.reject(new Error('closed')) };
    expect(await path.selectedPair()).toBeUndefined();
  });

  it("reports a missing WebRTC implementation with simple-peer's code", () => {
    expect(() => new SimplePeerPath({ pathId: 0, initiator: true, onSignal: () => {} })).toThrow(expect.objectContaining({ code: 'ERR_WEBRTC_SUPPORT' }));
  });
});
