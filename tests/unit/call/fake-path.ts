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

  constructor(
    readonly pathId: PathId,
    private readonly onSignal: (d: Record<string, unknown>) => void,
    initiator: boolean,
    local: string,
    remote: string,
  ) {
    this.key = `k${nextKey++}`;
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

  on(event: 'message' | 'state' | 'error', cb: (x: never) => void): () => void {
    return this.events.on(event, cb as never);
  }

  async selectedPair(): Promise<SelectedPair | undefined> {
    return undefined;
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
