/**
 * MultipathCall over an app's own signalling (MultipathCallOptions.signalling):
 * an in-memory hub implements SignallingTransport, no WebSocket, no server.
 * The calls mesh, exchange app data, see participants leave, rejoin through
 * a factory when their transport closes, and reject bad options; a bad
 * signal from the app's transport is dropped, not trusted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CallEvent, MultipathCall, type MultipathCallOptions } from '../../../src/call/multipath-call.js';
import type { CreatePath } from '../../../src/call/peer-session.js';
import type { SignalData } from '../../../src/signalling/protocol.js';
import type { SignallingTransport, SignallingTransportEvents } from '../../../src/signalling/transport.js';
import { Emitter } from '../../../src/core/emitter.js';
import { FakePath, registry, until } from './fake-path.js';

/** One room of an in-memory signalling backend. */
class Hub {
  readonly members = new Map<string, MemorySignalling>();
  joins = 0;
  /** Refuse the next joins with this reason. */
  refuse: string | undefined;
}

class MemorySignalling implements SignallingTransport {
  private readonly events = new Emitter<SignallingTransportEvents>();
  id: string | undefined;
  closed = false;
  constructor(private readonly hub: Hub) {}

  async join(_room: string, peerId: string | undefined): Promise<{ peerId: string; peers: string[] }> {
    await Promise.resolve();
    if (this.hub.refuse) throw new Error(`join refused (${this.hub.refuse})`);
    const id = peerId ?? `p${++this.hub.joins}`;
    const peers = [...this.hub.members.keys()];
    this.id = id;
    this.hub.members.set(id, this);
    for (const [other, t] of this.hub.members) if (other !== id) t.events.emit('peer-joined', { peerId: id });
    return { peerId: id, peers };
  }

  sendSignal(to: string, pathId: number, data: SignalData): boolean {
    const t = this.hub.members.get(to);
    if (!t || !this.id) return false;
    const from = this.id;
    queueMicrotask(() => t.events.emit('signal', { from, pathId, data: JSON.parse(JSON.stringify(data)) }));
    return true;
  }

  on<K extends keyof SignallingTransportEvents>(event: K, listener: SignallingTransportEvents[K]): () => void {
    return this.events.on(event, listener);
  }

  /** The backend dropped this session (e.g. its connection broke). */
  drop(): void {
    this.leave();
    this.events.emit('closed', { code: 1006, reason: 'dropped' });
  }

  /** Deliver a signal as if the backend did (for bad input). */
  inject(ev: { from: string; pathId: number; data: SignalData }): void {
    this.events.emit('signal', ev);
  }

  private leave(): void {
    if (this.closed || !this.id) return;
    this.closed = true;
    if (this.hub.members.get(this.id) === this) this.hub.members.delete(this.id);
    for (const t of this.hub.members.values()) t.events.emit('peer-left', { peerId: this.id });
  }

  close(): void {
    this.leave();
  }
}

const calls: MultipathCall[] = [];
const createPath: CreatePath = ({ pathId, initiator, remoteId, onSignal }) => new FakePath(pathId, onSignal, initiator, '', remoteId);

function newCall(signalling: MultipathCallOptions['signalling'], peerId: string, extra: Partial<MultipathCallOptions> = {}): MultipathCall {
  const c = new MultipathCall({ signalling, room: 'mem', peerId, paths: 2, candidates: 'all', ...extra }, { createPath });
  calls.push(c);
  return c;
}

const connectedTo = (c: MultipathCall, n: number): boolean => c.participants.length === n && c.participants.every((p) => p.connected);

afterEach(() => {
  for (const c of calls.splice(0)) c.close();
  registry.clear();
});

describe('MultipathCall over an app SignallingTransport', () => {
  it('three calls mesh over an in-memory hub, exchange data, and see a participant leave', async () => {
    const hub = new Hub();
    const [a, b, c] = ['a', 'b', 'c'].map((id) => newCall(new MemorySignalling(hub), id));
    for (const x of [a, b, c]) await x.connect();
    await until(() => [a, b, c].every((x) => connectedTo(x, 2)), 'mesh up');
    expect(a.participants.map((p) => p.id).sort()).toEqual(['b', 'c']);
    expect(c.participantId).toBe('c');
    const got: string[] = [];
    c.on(CallEvent.Data, (d, info) => got.push(`${info.participantId}: ${String(d)}`));
    a.send('hello');
    b.send('hi', { to: 'c' });
    await until(() => got.length === 2, 'data at c');
    expect(got.sort()).toEqual(['a: hello', 'b: hi']);
    // The paths are in the stats contract like over the WebSocket server.
    expect(
      a
        .getStats()
        .ofType('path')
        .filter((p) => p.state === 'connected'),
    ).toHaveLength(4);
    const left: string[] = [];
    a.on(CallEvent.ParticipantLeft, (id) => left.push(id));
    b.close();
    await until(() => left.includes('b'), 'a sees b leave');
    expect(a.participants.map((p) => p.id)).toEqual(['c']);
  });

  it('a factory lets the call rejoin under its own id when its transport closes; an instance cannot', async () => {
    const hub = new Hub();
    const made: MemorySignalling[] = [];
    const factory = () => {
      const t = new MemorySignalling(hub);
      made.push(t);
      return t;
    };
    const a = newCall(factory, 'a', { reconnect: { baseDelayMs: 10, maxDelayMs: 20 } });
    const single = new MemorySignalling(hub);
    const b = newCall(single, 'b', { reconnect: { baseDelayMs: 10, maxDelayMs: 20 } });
    const aStates: string[] = [];
    const bStates: string[] = [];
    a.on(CallEvent.SignallingState, (s) => aStates.push(s));
    b.on(CallEvent.SignallingState, (s) => bStates.push(s));
    const bErrors: string[] = [];
    b.on(CallEvent.Error, (e) => bErrors.push(e.message));
    await a.connect();
    await b.connect();
    await until(() => connectedTo(a, 1) && connectedTo(b, 1), 'a-b up');
    made[0].drop();
    await until(() => aStates.at(-1) === 'connected' && aStates.includes('reconnecting'), 'a rejoined');
    expect(made).toHaveLength(2);
    expect(hub.members.get('a')).toBe(made[1]);
    // Media paths were untouched; the session with b is the same one.
    expect(a.participants.map((p) => p.id)).toEqual(['b']);
    single.drop();
    await until(() => bStates.includes('disconnected'), 'b gives up');
    expect(bStates).toEqual(['connected', 'disconnected']);
  });

  it('a refused join is CallError join-refused; bad signals are dropped; bad options throw', async () => {
    const hub = new Hub();
    hub.refuse = 'room full';
    const a = newCall(() => new MemorySignalling(hub), 'a');
    await expect(a.connect()).rejects.toMatchObject({ code: 'join-refused' });
    hub.refuse = undefined;
    // A failed join may be retried.
    await a.connect();
    expect(a.participantId).toBe('a');
    const t = new MemorySignalling(hub);
    const b = newCall(t, 'b');
    await b.connect();
    t.inject({ from: 'x', pathId: 9, data: {} });
    t.inject({ from: 'bad id!', pathId: 0, data: {} });
    expect(b.participants.map((p) => p.id)).toEqual(['a']);
    expect(b.getStats().ofType('call')[0].droppedSignals).toBe(2);
    expect(() => new MultipathCall({ room: 'r' })).toThrow(expect.objectContaining({ code: 'bad-options' }));
    expect(() => new MultipathCall({ room: 'r', signallingUrl: 'ws://x', signalling: t })).toThrow(expect.objectContaining({ code: 'bad-options' }));
    expect(() => new MultipathCall({ room: 'r', signalling: {} as never })).toThrow(expect.objectContaining({ code: 'bad-options' }));
  });
});
