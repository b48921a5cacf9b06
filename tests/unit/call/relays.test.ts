/**
 * MultipathCallOptions.relays and MultipathCall.switchRelay (issue 16): argument handling, and the
 * RouteSwitch phases on both sides over in-memory paths; the switch over real TURN relays runs in tests/e2e/relays.e2e.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { CallError, CallEvent, MultipathCall } from '../../../src/call/multipath-call.js';
import type { RouteSwitchInfo } from '../../../src/call/route-handover.js';
import { startSignallingServer, type SignallingServer } from '../../../src/signalling/node.js';
import { FakePath, offers, registry, until } from './fake-path.js';

const relays = [
  { urls: 'turn:127.0.0.1:3478', username: 'u', credential: 'c' },
  { urls: ['turn:127.0.0.1:3479'], username: 'u', credential: 'c' },
];

describe('MultipathCall relays', () => {
  it('rejects relays that are not RTCIceServers', () => {
    expect(() => new MultipathCall({ signallingUrl: 'ws://x', room: 'r', relays: [{} as RTCIceServer] })).toThrow(CallError);
    expect(() => new MultipathCall({ signallingUrl: 'ws://x', room: 'r', relays: 'turn:x' as unknown as RTCIceServer[] })).toThrow(CallError);
  });

  it('starts path i on relay i mod n and validates switchRelay arguments', () => {
    const call = new MultipathCall({ signallingUrl: 'ws://x', room: 'r', paths: 3, relays });
    expect([0, 1, 2].map((p) => call.relayIndex(p))).toEqual([0, 1, 0]);
    // No participant yet: nothing switched, but later paths start on the new relay.
    expect(call.switchRelay(2, 1)).toBe(0);
    expect(call.relayIndex(2)).toBe(1);
    expect(() => call.switchRelay(3, 0)).toThrow(/unknown|not in/);
    expect(() => call.switchRelay(0, 2)).toThrow(CallError);
    expect(() => call.switchRelay(0, -1)).toThrow(CallError);
    call.close();
    expect(() => call.switchRelay(0, 0)).toThrow(CallError);
  });

  it('without relays switchRelay is a bad-options error', () => {
    const call = new MultipathCall({ signallingUrl: 'ws://x', room: 'r' });
    expect(Number.isNaN(call.relayIndex(0))).toBe(true);
    expect(() => call.switchRelay(0, 0)).toThrow(CallError);
    call.close();
  });
});

describe('MultipathCall relay switch over in-memory paths', () => {
  let server: SignallingServer | undefined;
  const calls: MultipathCall[] = [];
  afterEach(async () => {
    for (const c of calls.splice(0)) c.close();
    await server?.close();
    registry.clear();
    offers.length = 0;
  });

  it('the offerer restarts the path on the new relay; both sides report started, then switched once the pair changed', async () => {
    server = await startSignallingServer();
    const paths = new Map<string, FakePath[]>();
    const mk = (peerId: string) => {
      const c = new MultipathCall(
        { signallingUrl: server!.url, room: 'relays', peerId, paths: 2, candidates: 'all', relays },
        {
          WebSocket,
          createPath: ({ pathId, initiator, remoteId, onSignal }) => {
            const p = new FakePath(pathId, onSignal, initiator, peerId, remoteId);
            paths.set(peerId, [...(paths.get(peerId) ?? []), p]);
            return p;
          },
        },
      );
      calls.push(c);
      const log: string[] = [];
      c.on(CallEvent.RouteSwitch, (id: number, info: RouteSwitchInfo, who: string) => log.push(`${id} ${info.phase} ${info.local ? 'local' : 'remote'} ${who}`));
      return { c, log };
    };
    const a = mk('a');
    const b = mk('b');
    await Promise.all([a.c.connect(), b.c.connect()]);
    await until(() => a.c.participants[0]?.connected === true && b.c.participants[0]?.connected === true, 'connected');
    await until(() => (paths.get('a') ?? []).every((p) => p.state === 'connected') && (paths.get('a') ?? []).length === 2, 'both paths');
    // Let the sessions read the pairs they start on.
    await new Promise((r) => setTimeout(r, 50));
    expect(b.c.switchRelay(1, 0)).toBe(0); // b answers every path: it only records the choice
    expect(a.c.switchRelay(1, 0)).toBe(1);
    const p1 = (paths.get('a') ?? []).find((p) => p.pathId === 1)!;
    expect(p1.iceServers).toEqual([relays[0]]);
    await until(() => b.log.length === 1, 'remote restart seen');
    expect(a.log).toEqual(['1 started local b']);
    expect(b.log).toEqual(['1 started remote a']);
    // Still the old pair: no switch yet.
    await new Promise((r) => setTimeout(r, 250));
    expect(a.log.length).toBe(1);
    for (const p of [...(paths.get('a') ?? []), ...(paths.get('b') ?? [])]) if (p.pathId === 1) p.routePort = 3001;
    await until(() => a.log.length === 2 && b.log.length === 2, 'switched');
    expect(a.log[1]).toBe('1 switched local b');
    expect(b.log[1]).toBe('1 switched remote a');
    expect(a.c.relayIndex(1)).toBe(0);
    // A restart that selects no new pair (the relay refused us) times out after 5 s: the path is still on its old relay.
    expect(a.c.switchRelay(0, 1)).toBe(1);
    expect(a.c.relayIndex(0)).toBe(1);
    await until(() => a.log.length === 4, 'timed out', 7000);
    expect(a.log.slice(2)).toEqual(['0 started local b', '0 timed-out local b']);
    expect(a.c.relayIndex(0)).toBe(0);
  }, 15_000);

  it('a path whose selected pair the stats did not list at connect gets it in getStats once they do (relays e2e failed twice on that)', async () => {
    server = await startSignallingServer();
    const mine: FakePath[] = [];
    const mk = (peerId: string) => {
      const c = new MultipathCall(
        { signallingUrl: server!.url, room: 'pairs', peerId, paths: 2, candidates: 'all' },
        {
          WebSocket,
          createPath: ({ pathId, initiator, remoteId, onSignal }) => {
            const p = new FakePath(pathId, onSignal, initiator, peerId, remoteId);
            if (peerId === 'a') {
              p.hidePair = pathId === 1;
              mine.push(p);
            }
            return p;
          },
        },
      );
      calls.push(c);
      return c;
    };
    const a = mk('a');
    const b = mk('b');
    await Promise.all([a.connect(), b.connect()]);
    const pairOf = (id: number) => {
      const r = a.getStats();
      const path = r.ofType('path').find((p) => p.pathId === id);
      const pair = path?.candidatePairId ? r.get(path.candidatePairId) : undefined;
      return pair?.type === 'candidate-pair' ? pair.localCandidateId : undefined;
    };
    await until(() => mine.length === 2 && mine.every((p) => p.state === 'connected') && pairOf(0) !== undefined, 'path 0 pair');
    // Longer than the 8 reads 250 ms apart the session used to give up after.
    await new Promise((r) => setTimeout(r, 2500));
    expect(pairOf(1)).toBeUndefined();
    for (const p of mine) p.hidePair = false;
    await until(() => pairOf(1) !== undefined, 'path 1 pair read again', 4000);
  }, 15_000);
});
