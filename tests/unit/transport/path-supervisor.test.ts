import { describe, expect, it } from 'vitest';
import { PathSupervisor, backoffMs } from '../../../src/transport/path-supervisor.js';
import type { PathStatus } from '../../../src/transport/path-supervisor.js';
import type { PathTransport, PathTransportState } from '../../../src/transport/types.js';

/** A transport whose state the test sets. */
class StubTransport {
  state: PathTransportState = 'connecting';
  closed = false;
  private cbs = new Set<(s: PathTransportState) => void>();
  constructor(
    readonly pathId: number,
    readonly generation: number,
  ) {}
  on(_e: string, cb: (s: PathTransportState) => void): () => void {
    this.cbs.add(cb);
    return () => this.cbs.delete(cb);
  }
  set(s: PathTransportState): void {
    this.state = s;
    for (const cb of this.cbs) cb(s);
  }
  close(): void {
    this.closed = true;
    this.set('closed');
  }
  send(): boolean {
    return false;
  }
  bufferedAmount(): number {
    return 0;
  }
  async selectedPair(): Promise<undefined> {
    return undefined;
  }
}

/** Manual timers on a manual ms clock. */
function harness(initiator: boolean, opts: { connectTimeoutMs?: number } = {}) {
  let now = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  let nextId = 1;
  const made: StubTransport[] = [];
  const log: PathStatus[] = [];
  const sup = new PathSupervisor({
    initiator,
    connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
    now: () => now,
    setTimer: (fn, ms) => {
      const id = nextId++;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimer: (h) => timers.delete(h as number),
    create: (pathId, gen) => {
      const t = new StubTransport(pathId, gen);
      made.push(t);
      return t as unknown as PathTransport;
    },
    onStatus: (s) => log.push(s),
  });
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      timers.delete(due[0]);
      now = due[1].at;
      due[1].fn();
    }
    now = end;
  };
  return { sup, made, log, advance, timers, at: () => now };
}

describe('PathSupervisor', () => {
  it('reports connect time on the first connection', () => {
    const h = harness(true);
    h.sup.start(0);
    h.advance(1234);
    h.made[0].set('connected');
    expect(h.sup.status(0)).toMatchObject({ state: 'connected', reason: 'connected', connectMs: 1234, restarts: 0, generation: 0 });
    expect(h.timers.size).toBe(0);
  });

  it('a path that never connects is restarted with exponential backoff, reported each time with a reason', () => {
    const h = harness(true, { connectTimeoutMs: 10_000 });
    h.sup.start(1);
    h.advance(10_000); // timeout
    expect(h.sup.status(1)).toMatchObject({ state: 'retrying', reason: 'connect-timeout', attempt: 1 });
    h.advance(1000); // backoff 1 s -> generation 1
    expect(h.made).toHaveLength(2);
    expect(h.made[0].closed).toBe(true);
    expect(h.sup.status(1)).toMatchObject({ state: 'connecting', reason: 'restart', generation: 1, restarts: 1 });
    h.advance(10_000 + 2000); // second timeout, backoff 2 s -> generation 2
    expect(h.made).toHaveLength(3);
    h.advance(10_000 + 4000);
    expect(h.made).toHaveLength(4);
    expect(h.log.filter((s) => s.state === 'retrying').map((s) => s.attempt)).toEqual([1, 2, 3]);
    // Connecting at last resets the backoff; connectMs counts from the very start.
    const t = h.at();
    h.made[3].set('connected');
    expect(h.sup.status(1)).toMatchObject({ state: 'connected', attempt: 0, connectMs: t, restarts: 3 });
  });

  it('a connected path that fails is reported and restarted; stale transports are ignored', () => {
    const h = harness(true);
    h.sup.start(0);
    h.made[0].set('connected');
    h.made[0].set('failed');
    expect(h.sup.status(0)).toMatchObject({ state: 'retrying', reason: 'transport-failed', attempt: 1 });
    h.advance(1000);
    expect(h.sup.status(0)?.generation).toBe(1);
    h.made[0].set('connected'); // the old generation: no effect
    expect(h.sup.status(0)?.state).toBe('connecting');
    h.made[1].set('connected');
    expect(h.sup.status(0)).toMatchObject({ state: 'connected', restarts: 1 });
  });

  it('the non-initiator waits for the remote generation, accepts newer ones and drops stale signals', () => {
    const h = harness(false);
    h.sup.start(0);
    h.advance(10_000);
    expect(h.sup.status(0)).toMatchObject({ state: 'retrying', reason: 'connect-timeout' });
    expect(h.made).toHaveLength(1); // it does not restart by itself
    expect(h.sup.acceptRemoteGeneration(0, 1)).toBe(true);
    expect(h.made).toHaveLength(2);
    expect(h.sup.status(0)).toMatchObject({ state: 'connecting', reason: 'remote-restart', generation: 1 });
    expect(h.sup.acceptRemoteGeneration(0, 0)).toBe(false); // stale
    expect(h.sup.acceptRemoteGeneration(0, 1)).toBe(true); // current
    expect(h.sup.acceptRemoteGeneration(0, -1)).toBe(false);
    expect(h.sup.acceptRemoteGeneration(5, 0)).toBe(false); // unknown path
    expect(h.made).toHaveLength(2);
  });

  it('close cancels every timer and closes the transports; no status after close', () => {
    const h = harness(true);
    h.sup.start(0);
    h.sup.start(1);
    h.sup.close();
    expect(h.timers.size).toBe(0);
    expect(h.made.every((t) => t.closed)).toBe(true);
    const n = h.log.length;
    h.advance(60_000);
    expect(h.log.length).toBe(n);
    expect(h.sup.statuses()).toEqual([]);
  });

  it('backoff doubles and is capped; bad options throw', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffMs(n))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(() => new PathSupervisor({ initiator: true, create: () => ({}) as PathTransport, onStatus: () => undefined, connectTimeoutMs: 0 })).toThrow(RangeError);
  });

  it('a transport that throws on creation is retried', () => {
    let calls = 0;
    const timers: Array<() => void> = [];
    const sup = new PathSupervisor({
      initiator: true,
      setTimer: (fn) => timers.push(fn),
      clearTimer: () => undefined,
      create: () => {
        calls++;
        throw new Error('no WebRTC');
      },
      onStatus: () => undefined,
    });
    sup.start(0);
    expect(sup.status(0)).toMatchObject({ state: 'retrying', reason: 'transport-failed' });
    timers.shift()?.();
    expect(calls).toBe(2);
    sup.close();
  });
});
