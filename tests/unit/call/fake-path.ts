/**
 * An in-memory path for call tests in Node (in place of simple-peer): the
 * offerer registers under a key it signals; the answerer finds it by that key
 * and both connect; datagrams are delivered in a microtask. Plus `until`,
 * the polling wait the call tests share.
 */
import type { SignalledPath } from '../../../src/call/peer-session.js';
import { Emitter } from '../../../src/core/emitter.js';
import type { PathId } from '../../../src/core/types.js';
import type { PathTransportEvents, PathTransportState, SelectedPair } from '../../../src/transport/types.js';

/** Every in-memory path by handshake key; offers made, as `offerer>answerer`. */
export const registry = new Map<string, FakePath>();
export const offers: string[] = [];
let nextKey = 0;

export class FakePath implements SignalledPath {
  state: PathTransportState = 'new';
  private readonly events = new Emitter<PathTransportEvents>();
  private peer: FakePath | undefined;
  private readonly key: string;
  /** Datagrams sent (counted for the path toggle). */
  sent = 0;
  /** Local port of the selected pair selectedPair() reports once connected (the route); a test changes it to end a relay switch. */
  routePort: number;
  /** While true, selectedPair() finds no pair (a browser whose stats do not list it yet). */
  hidePair = false;
  /** ICE servers of the last switchIceServers (the relay switch tests). */
  iceServers: RTCIceServer[] | undefined;

  constructor(
    readonly pathId: PathId,
    private readonly onSignal: (d: Record<string, unknown>) => void,
    initiator: boolean,
    local: string,
    remote: string,
  ) {
    this.key = `k${nextKey++}`;
    this.routePort = 1000 + pathId;
    if (initiator) {
      registry.set(this.key, this);
      offers.push(`${local}>${remote}`);
      this.state = 'connecting';
      queueMicrotask(() => this.onSignal({ type: 'offer', key: this.key }));
    }
  }

  signal(data: unknown): void {
    const d = data as { type: string; key: string };
    if (d.type === 'offer') {
      const other = registry.get(d.key);
      if (!other || this.peer) return;
      this.peer = other;
      other.peer = this;
      this.onSignal({ type: 'answer', key: d.key });
      this.setState('connected');
    } else if (d.type === 'answer' && d.key === this.key) this.setState('connected');
    else if (d.type === 'restart' && this.state === 'connected') this.events.emit('iceRestart', { local: false });
  }

  /** As SimplePeerPath: only the offerer restarts; the answerer hears of it through a signal. */
  switchIceServers(iceServers: RTCIceServer[]): boolean {
    if (!registry.has(this.key) || this.state !== 'connected') return false;
    this.iceServers = iceServers;
    this.events.emit('iceRestart', { local: true });
    queueMicrotask(() => this.onSignal({ type: 'restart', key: this.key }));
    return true;
  }

  private setState(s: PathTransportState): void {
    if (this.state === s || this.state === 'closed') return;
    this.state = s;
    this.events.emit('state', s);
  }

  send(bytes: Uint8Array): boolean {
    const p = this.peer;
    if (this.state !== 'connected' || !p) return false;
    this.sent++;
    const copy = bytes.slice();
    queueMicrotask(() => {
      if (p.state === 'connected') p.events.emit('message', copy);
    });
    return true;
  }

  bufferedAmount(): number {
    return 0;
  }

  on(event: 'message' | 'state' | 'error' | 'iceRestart', cb: (x: never) => void): () => void {
    return this.events.on(event, cb as never);
  }

  async selectedPair(): Promise<SelectedPair | undefined> {
    if (this.state !== 'connected' || this.hidePair) return undefined;
    const c = { address: '127.0.0.1', port: this.routePort, protocol: 'udp', type: 'relay' };
    return { id: `pair-${this.pathId}`, local: c, remote: c };
  }

  close(): void {
    const p = this.peer;
    this.peer = undefined;
    this.setState('closed');
    registry.delete(this.key);
    if (p && p.peer === this) {
      p.peer = undefined;
      p.setState('closed');
    }
  }
}

/** Poll `cond` every 10 ms until true; throws after `ms`. */
export async function until(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
