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
  on(): this {
    return this;
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
});
