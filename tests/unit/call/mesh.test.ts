/**
 * Full-mesh MultipathCall in Node: the real signalling server and client,
 * real engines, and in-memory paths (an offer / answer handshake through the
 * signalling server, then datagrams delivered on a microtask) in place of
 * simple-peer. Checks who offers (no glare when participants join at once),
 * one session per pair, events, app data per participant, leave / rejoin,
 * path toggles and typed errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { CallError, CallEvent, isOfferer, MultipathCall, type MultipathCallOptions, type PathStats, reconnectDelayMs } from '../../../src/call/multipath-call.js';
import type { CreatePath } from '../../../src/call/peer-session.js';
import type { PathId } from '../../../src/core/types.js';
import { startSignallingServer, type SignallingServer } from '../../../src/signalling/node.js';
import { FakePath, offers, registry, until } from './fake-path.js';

let server: SignallingServer | undefined;
const calls: MultipathCall[] = [];
/** Paths by call, to look at the datagrams each one sent. */
const pathsOf = new Map<string, FakePath[]>();

function newCall(peerId: string, paths = 2, extra: Partial<MultipathCallOptions> = {}): MultipathCall {
  const createPath: CreatePath = ({ pathId, initiator, remoteId, onSignal }) => {
    const p = new FakePath(pathId, onSignal, initiator, peerId, remoteId);
    const list = pathsOf.get(peerId) ?? [];
    list.push(p);
    pathsOf.set(peerId, list);
    return p;
  };
  const call = new MultipathCall({ signallingUrl: server!.url, room: 'mesh', peerId, paths, candidates: 'all', ...extra }, { WebSocket, createPath });
  calls.push(call);
  return call;
}

/** The `path` entries of a call's getStats(), per remote participant (in join order). */
const pathStats = (c: MultipathCall): Map<string, PathStats[]> => {
  const r = c.getStats();
  const call = r.ofType('call')[0];
  const paths = r.ofType('path');
  return new Map(call.remoteParticipantIds.map((id) => [id, paths.filter((p) => p.participantId === id)]));
};

const allConnected = (c: MultipathCall, n: number): boolean => {
  const ps = pathStats(c);
  return ps.size === n && [...ps.values()].every((p) => p.length > 0 && p.every((x) => x.state === 'connected'));
};

afterEach(async () => {
  for (const c of calls.splice(0)) c.close();
  await server?.close();
  server = undefined;
  registry.clear();
  offers.length = 0;
  pathsOf.clear();
});

describe('isOfferer', () => {
  it('exactly one side of every pair offers: the smaller id', () => {
    for (const [a, b] of [
      ['a', 'b'],
      ['B', 'a'],
      ['peer-10', 'peer-9'],
    ]) {
      expect(isOfferer(a, b)).not.toBe(isOfferer(b, a));
      expect(isOfferer(a, b)).toBe(a < b);
    }
  });
});

describe('MultipathCall full mesh', () => {
  it('three participants joining at once: one session per pair, the smaller id offers, events once', async () => {
    server = await startSignallingServer();
    const ids = ['carol', 'alice', 'bob'];
    const cs = ids.map((id) => newCall(id));
    const events = new Map<string, string[]>();
    for (const [i, c] of cs.entries()) {
      const log: string[] = [];
      events.set(ids[i], log);
      c.on(CallEvent.Connected, ({ peerId, remotePeerId }) => log.push(`connected ${peerId}->${remotePeerId}`));
      c.on(CallEvent.ParticipantJoined, (p) => log.push(`joined ${p}`));
    }
    // Glare: all three join at once.
    await Promise.all(cs.map((c) => c.connect()));
    await until(() => cs.every((c) => allConnected(c, 2)), 'every path of every pair connected');
    // One offer per path per pair, always from the smaller id.
    expect(offers.sort()).toEqual(['alice>bob', 'alice>bob', 'alice>carol', 'alice>carol', 'bob>carol', 'bob>carol']);
    for (const [i, c] of cs.entries()) {
      const others = ids.filter((x) => x !== ids[i]).sort();
      expect(c.participantId).toBe(ids[i]);
      expect(c.participants.map((p) => p.id).sort()).toEqual(others);
      expect([...c.getStats().ofType('call')[0].remoteParticipantIds].sort()).toEqual(others);
      expect(
        c
          .getStats()
          .ofType('transport')
          .map((t) => t.participantId)
          .sort(),
      ).toEqual(others);
      const log = events.get(ids[i])!;
      expect(log.filter((e) => e.startsWith('connected')).sort()).toEqual(others.map((o) => `connected ${ids[i]}->${o}`));
      expect(log.filter((e) => e.startsWith('joined')).sort()).toEqual(others.map((o) => `joined ${o}`));
    }
    // A second participant's paths did not restart (no glare, no second generation).
    for (const c of cs) for (const x of c.getStats().ofType('path')) expect(x.iceRestarts).toBe(0);
  });

  it('app data goes to every participant (or one), tagged with the sender', async () => {
    server = await startSignallingServer();
    const [a, b, c] = ['a', 'b', 'c'].map((id) => newCall(id));
    const got: string[] = [];
    for (const [name, x] of [
      ['b', b],
      ['c', c],
    ] as const) {
      x.on(CallEvent.Data, (data, info) => got.push(`${name} from ${info.participantId}: ${String(data)}`));
    }
    for (const x of [a, b, c]) await x.connect();
    await until(() => [a, b, c].every((x) => allConnected(x, 2)), 'mesh up');
    expect(a.send('to all')).toBe(2);
    expect(a.send('to c', { to: 'c' })).toBe(1);
    await until(() => got.length === 3, 'three messages');
    expect(got.sort()).toEqual(['b from a: to all', 'c from a: to all', 'c from a: to c']);
    expect(() => a.send('x', { to: 'nobody' })).toThrow(expect.objectContaining({ code: 'unknown-participant' }));
  });

  it('a participant that leaves and rejoins with the same id gets a new session; the others see left then joined', async () => {
    server = await startSignallingServer();
    const a = newCall('a');
    const b = newCall('b');
    const log: string[] = [];
    a.on(CallEvent.ParticipantJoined, (p) => log.push(`joined ${p}`));
    a.on(CallEvent.ParticipantLeft, (p) => log.push(`left ${p}`));
    a.on(CallEvent.Connected, ({ remotePeerId }) => log.push(`connected ${remotePeerId}`));
    await a.connect();
    await b.connect();
    await until(() => allConnected(a, 1), 'a-b up');
    b.close();
    await until(() => a.participants.length === 0, 'b gone');
    const b2 = newCall('b');
    await b2.connect();
    await until(() => allConnected(a, 1) && allConnected(b2, 1), 'a-b2 up');
    expect(log).toEqual(['joined b', 'connected b', 'left b', 'joined b', 'connected b']);
    expect(a.getStats().ofType('transport')).toHaveLength(1);
  });

  it('setPathEnabled stops and resumes our traffic on a path, per participant or for all; bad ids throw typed errors', async () => {
    server = await startSignallingServer();
    const [a, b, c] = ['a', 'b', 'c'].map((id) => newCall(id));
    for (const x of [a, b, c]) await x.connect();
    await until(() => [a, b, c].every((x) => allConnected(x, 2)), 'mesh up');
    expect(() => a.setPathEnabled(2, false)).toThrow(expect.objectContaining({ code: 'unknown-path' }));
    expect(() => a.setPathEnabled(0, false, 'zed')).toThrow(expect.objectContaining({ code: 'unknown-participant' }));
    a.setPathEnabled(0, false);
    expect(a.getStats().ofType('call')[0].disabledPathIds).toEqual([0]);
    for (const p of pathStats(a).values()) expect(p.map((x) => x.enabled)).toEqual([false, true]);
    // Reliable app data now goes on path 1 only (path 0, the default choice at equal RTT, carries nothing of a's).
    const sentOn = (id: PathId): number =>
      pathsOf
        .get('a')!
        .filter((p) => p.pathId === id && p.state === 'connected')
        .reduce((n, p) => n + p.sent, 0);
    const got: string[] = [];
    b.on(CallEvent.Data, (d) => got.push(String(d)));
    const before0 = sentOn(0);
    const before1 = sentOn(1);
    for (let i = 0; i < 20; i++) a.send(`m${i}`);
    await until(() => got.length === 20, 'messages on path 1');
    expect(sentOn(0)).toBe(before0);
    expect(sentOn(1)).toBeGreaterThan(before1);
    a.setPathEnabled(0, true);
    a.setPathEnabled(1, false, 'b');
    expect(a.getStats().ofType('call')[0].disabledPathIds).toEqual([]);
    expect(
      pathStats(a)
        .get('b')!
        .map((x) => x.enabled),
    ).toEqual([true, false]);
    expect(
      pathStats(a)
        .get('c')!
        .map((x) => x.enabled),
    ).toEqual([true, true]);
    const mid1 = sentOn(1);
    for (let i = 0; i < 20; i++) a.send(`n${i}`, { to: 'b' });
    await until(() => got.length === 40, 'messages on path 0 again');
    expect(sentOn(0)).toBeGreaterThan(before0);
    expect(sentOn(1) - mid1).toBeLessThan(20);
  });

  it('typed errors: bad options in the constructor, a refused join, an unreachable server, a track neither video nor audio', async () => {
    expect(() => new MultipathCall({ signallingUrl: 'ws://x', room: 'r', paths: 9 })).toThrow(CallError);
    server = await startSignallingServer({ maxRoomSize: 2 });
    await newCall('a').connect();
    await newCall('b').connect();
    await expect(newCall('c').connect()).rejects.toMatchObject({ code: 'join-refused' });
    const dead = new MultipathCall({ signallingUrl: 'ws://127.0.0.1:1', room: 'r', candidates: 'all' }, { WebSocket });
    calls.push(dead);
    await expect(dead.connect()).rejects.toMatchObject({ code: 'signalling-failed' });
    await expect(calls[0].sendTrack({ kind: 'text' } as unknown as MediaStreamTrack)).rejects.toMatchObject({ code: 'unsupported-track' });
  });

  it('setMuted: per kind, before any track, kept until changed; a bad kind or a closed call is a typed error', () => {
    const c = new MultipathCall({ signallingUrl: 'ws://x', room: 'r', candidates: 'all' }, { WebSocket });
    calls.push(c);
    expect([c.isMuted('audio'), c.isMuted('video')]).toEqual([false, false]);
    c.setMuted('audio', true);
    expect([c.isMuted('audio'), c.isMuted('video')]).toEqual([true, false]);
    c.setMuted('video', true);
    c.setMuted('audio', false);
    expect([c.isMuted('audio'), c.isMuted('video')]).toEqual([false, true]);
    expect(() => c.setMuted('screen' as 'audio', true)).toThrow(expect.objectContaining({ code: 'bad-options' }));
    c.close();
    expect(() => c.setMuted('audio', true)).toThrow(expect.objectContaining({ code: 'closed' }));
  });

  it('survives a signalling server restart: sessions and media paths stay up, every call rejoins under its id', async () => {
    server = await startSignallingServer();
    const port = Number(new URL(server.url).port);
    const ids = ['a', 'b', 'c'];
    const cs = ids.map((id) => newCall(id, 2, { reconnect: { maxAttempts: 200, baseDelayMs: 20, maxDelayMs: 100 } }));
    const states = cs.map(() => [] as string[]);
    const left: string[] = [];
    const got: string[] = [];
    for (const [i, c] of cs.entries()) {
      c.on(CallEvent.SignallingState, (st) => states[i].push(st));
      c.on(CallEvent.ParticipantLeft, (p) => left.push(`${ids[i]} lost ${p}`));
      c.on(CallEvent.Data, (d, info) => got.push(`${ids[i]} from ${info.participantId}: ${String(d)}`));
    }
    for (const c of cs) await c.connect();
    await until(() => cs.every((c) => allConnected(c, 2)), 'mesh up');
    await server.close();
    server = undefined;
    await until(() => states.every((s) => s.includes('reconnecting')), 'every call reconnecting');
    // No signalling: app data still flows over the paths that are up.
    cs[0].send('during the outage');
    await until(() => got.length === 2, 'app data during the outage');
    server = await startSignallingServer({ port });
    await until(() => states.every((s) => s.at(-1) === 'connected'), 'every call rejoined');
    expect(left).toEqual([]);
    for (const [i, c] of cs.entries()) {
      expect(c.participantId).toBe(ids[i]);
      expect(allConnected(c, 2)).toBe(true);
      for (const x of c.getStats().ofType('path')) expect(x.iceRestarts).toBe(0);
    }
    // Signalling works again: a fourth participant meshes with all three.
    const d = newCall('d');
    await d.connect();
    await until(() => [...cs, d].every((c) => allConnected(c, 3)), 'mesh of four');
  });

  it('gives up after maxAttempts: SignallingState disconnected and a CallError signalling-lost', async () => {
    server = await startSignallingServer();
    const a = newCall('a', 1, { reconnect: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 20 } });
    const states: string[] = [];
    const errors: string[] = [];
    a.on(CallEvent.SignallingState, (st, info) => states.push(`${st} ${info.attempt}`));
    a.on(CallEvent.Error, (e) => errors.push((e as CallError).code ?? e.message));
    await a.connect();
    await server.close();
    server = undefined;
    await until(() => states.includes('disconnected 3'), 'giving up');
    expect(states).toEqual(['connected 0', 'reconnecting 1', 'reconnecting 2', 'reconnecting 3', 'disconnected 3']);
    expect(errors).toContain('signalling-lost');
    expect(() => new MultipathCall({ signallingUrl: 'ws://x', room: 'r', reconnect: { maxAttempts: 0 } })).toThrow(expect.objectContaining({ code: 'bad-options' }));
  });
});

describe('MultipathCall presence', () => {
  it('a participant whose signalling drops while its paths are up keeps its session and comes back under its id; one that does not come back goes after the grace time', async () => {
    server = await startSignallingServer();
    const a = newCall('a', 2, { participantGraceMs: 300 });
    const b = newCall('b', 2, { reconnect: { baseDelayMs: 20, maxDelayMs: 50 } });
    const c = newCall('c', 2, { reconnect: false });
    const log: string[] = [];
    a.on(CallEvent.ParticipantLeft, (p) => log.push(`left ${p}`));
    a.on(CallEvent.Connected, ({ remotePeerId }) => log.push(`connected ${remotePeerId}`));
    const got: string[] = [];
    a.on(CallEvent.Data, (d, info) => got.push(`${info.participantId}: ${String(d)}`));
    for (const x of [a, b, c]) await x.connect();
    await until(() => allConnected(a, 2), 'mesh up');
    // Drop b's and c's signalling sockets only (their paths stay up): the server tells a they left.
    const sigOf = (x: MultipathCall) => (x as unknown as { signalling: { transport: { close(): void } } }).signalling.transport;
    const bBack = new Promise<void>((r) => b.on(CallEvent.SignallingState, (st, info) => st === 'connected' && info.attempt > 0 && r()));
    sigOf(b).close();
    sigOf(c).close();
    await bBack;
    // b is back under its id with the same session; c, gone from signalling with its paths up, is dropped after the grace time.
    await until(() => log.includes('left c'), 'c dropped after the grace time', 3000);
    expect(log.filter((e) => e !== 'connected c')).toEqual(['connected b', 'left c']);
    expect(a.participants.map((p) => p.id)).toEqual(['b']);
    // c, without signalling for good, drops its session with a once a closed its side of the paths
    // (its session with b, whose paths b keeps up for b's 30 s grace, stays meanwhile).
    await until(() => !c.participants.some((p) => p.id === 'a'), 'c dropped its session with a', 3000);
    expect(c.participants.map((p) => p.id)).toEqual(['b']);
    b.send('still here');
    await until(() => got.includes('b: still here'), 'data from b');
  });
});

describe('reconnectDelayMs', () => {
  it('first attempt at once, then exponential with half jitter, capped', () => {
    expect(reconnectDelayMs(1, 500, 10_000, 0.9)).toBe(0);
    expect([reconnectDelayMs(2, 500, 10_000, 0), reconnectDelayMs(2, 500, 10_000, 1)]).toEqual([250, 500]);
    expect([reconnectDelayMs(4, 500, 10_000, 0), reconnectDelayMs(4, 500, 10_000, 1)]).toEqual([1000, 2000]);
    expect([reconnectDelayMs(30, 500, 10_000, 0), reconnectDelayMs(30, 500, 10_000, 1)]).toEqual([5000, 10_000]);
  });
});
