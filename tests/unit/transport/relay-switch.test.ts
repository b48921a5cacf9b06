/** SimplePeerPath relay options and switchIceServers (issue 16), against a minimal simple-peer stand-in. */
import { describe, expect, it } from 'vitest';
import { SimplePeerPath, type SimplePeerInstance } from '../../../src/transport/simple-peer-path.js';

class Peer implements SimplePeerInstance {
  static last: Peer;
  destroyed = false;
  connected = false;
  bufferSize = 0;
  negotiations = 0;
  config: RTCConfiguration;
  restarts = 0;
  failConfig = false;
  // biome-ignore lint/suspicious/noExplicitAny: a mock of simple-peer's untyped internals
  _pc: any;
  constructor(readonly opts: Record<string, unknown>) {
    Peer.last = this;
    this.config = { ...(opts.config as RTCConfiguration) };
    this._pc = {
      getConfiguration: () => this.config,
      setConfiguration: (c: RTCConfiguration) => {
        if (this.failConfig) throw new Error('InvalidModificationError');
        this.config = c;
      },
      restartIce: () => this.restarts++,
    };
  }
  readonly handlers = new Map<string, Array<(...a: unknown[]) => void>>();
  on(event: string, cb: (...a: unknown[]) => void): this {
    this.handlers.set(event, [...(this.handlers.get(event) ?? []), cb]);
    return this;
  }
  emit(event: string, ...args: unknown[]): void {
    for (const cb of this.handlers.get(event) ?? []) cb(...args);
  }
  signal(): void {}
  destroy(): void {
    this.destroyed = true;
  }
  negotiate(): void {
    this.negotiations++;
  }
}

const turn = (k: number) => ({ urls: `turn:127.0.0.1:${3478 + k}`, username: 'u', credential: 'c' });

describe('SimplePeerPath relay switch', () => {
  it('passes iceTransportPolicy relay to the RTCPeerConnection configuration', () => {
    new SimplePeerPath({ pathId: 0, initiator: true, onSignal: () => undefined, Peer, iceServers: [turn(0)], iceTransportPolicy: 'relay' });
    expect(Peer.last.opts.config).toEqual({ iceServers: [turn(0)], iceTransportPolicy: 'relay' });
  });

  it('the offerer moves onto the new TURN server by an ICE restart and a new offer', () => {
    const p = new SimplePeerPath({ pathId: 0, initiator: true, onSignal: () => undefined, Peer, iceServers: [turn(0)], iceTransportPolicy: 'relay' });
    const peer = Peer.last;
    expect(p.switchIceServers([turn(1)], 'relay')).toBe(true);
    expect(peer.config.iceServers).toEqual([turn(1)]);
    expect(peer.config.iceTransportPolicy).toBe('relay');
    expect(peer.restarts).toBe(1);
    expect(peer.negotiations).toBe(1);
    expect(p.iceRestarts).toBe(1);
  });

  it('the answerer, a closed path or a refused configuration change nothing', () => {
    const ans = new SimplePeerPath({ pathId: 0, initiator: false, onSignal: () => undefined, Peer });
    expect(ans.switchIceServers([turn(1)])).toBe(false);
    expect(Peer.last.restarts).toBe(0);
    const closed = new SimplePeerPath({ pathId: 0, initiator: true, onSignal: () => undefined, Peer });
    closed.close();
    expect(closed.switchIceServers([turn(1)])).toBe(false);
    const bad = new SimplePeerPath({ pathId: 0, initiator: true, onSignal: () => undefined, Peer });
    const errors: string[] = [];
    bad.on('error', (e) => errors.push(e.code));
    Peer.last.failConfig = true;
    expect(bad.switchIceServers([turn(1)])).toBe(false);
    expect(errors).toEqual(['ERR_ICE_RESTART']);
    expect(Peer.last.restarts).toBe(0);
  });

  it('reports an ICE restart: its own switch, and a remote offer with a new ice-ufrag on a connected path', () => {
    const off = new SimplePeerPath({ pathId: 0, initiator: true, onSignal: () => undefined, Peer, iceServers: [turn(0)], iceTransportPolicy: 'relay' });
    const offSeen: boolean[] = [];
    off.on('iceRestart', (i) => offSeen.push(i.local));
    Peer.last.emit('connect');
    off.switchIceServers([turn(1)], 'relay');
    expect(offSeen).toEqual([true]);

    const ans = new SimplePeerPath({ pathId: 0, initiator: false, onSignal: () => undefined, Peer });
    const seen: boolean[] = [];
    ans.on('iceRestart', (i) => seen.push(i.local));
    const offer = (ufrag: string) => ({ type: 'offer', sdp: `v=0\r\na=ice-ufrag:${ufrag}\r\na=ice-pwd:x\r\n` });
    ans.signal(offer('aaaa'));
    Peer.last.emit('connect');
    expect(seen).toEqual([]);
    ans.signal(offer('aaaa')); // a renegotiation with the same credentials
    expect(seen).toEqual([]);
    ans.signal({ candidate: { candidate: 'candidate:1 1 udp 1 127.0.0.1 9 typ host' } });
    ans.signal(offer('bbbb'));
    expect(seen).toEqual([false]);
    ans.signal({ type: 'answer', sdp: 'v=0\r\na=ice-ufrag:cccc\r\n' }); // not an offer
    expect(seen).toEqual([false]);
  });
});
