import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { SignallingClient, SignallingEvent } from '../../../src/signalling/index.js';
import { createTokenAuthorizer, signRoomToken, startSignallingServer, type SignallingServer } from '../../../src/signalling/node.js';

let server: SignallingServer | undefined;
const clients: SignallingClient[] = [];

function newClient(): SignallingClient {
  const c = new SignallingClient({ WebSocket });
  clients.push(c);
  return c;
}

function once<T>(c: SignallingClient, ev: SignallingEvent): Promise<T> {
  return new Promise((resolve) => {
    const off = c.on(ev, ((payload: T) => {
      off();
      resolve(payload);
    }) as never);
  });
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server?.close();
  server = undefined;
});

describe('SignallingClient', () => {
  it('joins, sees peers, exchanges signals, sees peer-left', async () => {
    server = await startSignallingServer();
    const a = newClient();
    const b = newClient();
    const joinedEvents: unknown[] = [];
    a.on('joined', ({ peerId, peers }) => joinedEvents.push([peerId, peers]));
    expect(await a.connect(server.url, 'room', 'a')).toEqual({ peerId: 'a', peers: [] });
    expect(joinedEvents).toEqual([['a', []]]);
    const peerJoined = once<{ peerId: string }>(a, SignallingEvent.PeerJoined);
    const jb = await b.connect(server.url, 'room');
    expect(jb.peers).toEqual(['a']);
    expect(await peerJoined).toEqual({ peerId: jb.peerId });
    expect(a.peers).toEqual([jb.peerId]);

    const sig = once<unknown>(b, SignallingEvent.Signal);
    expect(a.sendSignal(jb.peerId, 5, { type: 'offer', sdp: 'v=0' })).toBe(true);
    expect(await sig).toEqual({ from: 'a', pathId: 5, data: { type: 'offer', sdp: 'v=0' } });

    const left = once<unknown>(a, SignallingEvent.PeerLeft);
    const closed = once<{ code: number }>(b, SignallingEvent.Closed);
    b.close();
    expect(await left).toEqual({ peerId: jb.peerId });
    expect((await closed).code).toBe(1000);
    expect(b.state).toBe('closed');
    expect(a.peers).toEqual([]);
  });

  it('rejects connect on a full room and reports the code', async () => {
    server = await startSignallingServer({ maxRoomSize: 2 });
    await newClient().connect(server.url, 'r');
    await newClient().connect(server.url, 'r');
    const c = newClient();
    const errs: string[] = [];
    c.on(SignallingEvent.Error, (e) => errs.push(e.code));
    await expect(c.connect(server.url, 'r')).rejects.toThrow(/room-full/);
    expect(errs).toContain('room-full');
  });

  it('validates arguments without throwing', async () => {
    server = await startSignallingServer();
    const c = newClient();
    await expect(c.connect(server.url, 'bad room')).rejects.toThrow();
    const d = newClient();
    expect(d.sendSignal('x', 0, {})).toBe(false); // not joined
    const { peerId } = await d.connect(server.url, 'r');
    const errs: string[] = [];
    d.on(SignallingEvent.Error, (e) => errs.push(e.code));
    expect(d.sendSignal(peerId, 8, {})).toBe(false);
    expect(d.sendSignal(peerId, 0, { pad: 'x'.repeat(70_000) })).toBe(false);
    expect(d.sendSignal(peerId, 0, 'not an object')).toBe(false);
    expect(errs).toEqual(['bad-message', 'too-large', 'bad-message']);
    expect(() => (d.on as (e: string, cb: () => void) => void).call(d, 'nope', () => {})).toThrow(TypeError);
    await expect(d.connect(server.url, 'r')).rejects.toThrow(/once/);
  });

  it('catches listener exceptions (safeEmit)', async () => {
    server = await startSignallingServer();
    const a = newClient();
    const b = newClient();
    a.on(SignallingEvent.PeerJoined, () => {
      throw new Error('app bug');
    });
    const got = once<{ peerId: string }>(a, SignallingEvent.PeerJoined);
    await a.connect(server.url, 'r', 'a');
    await b.connect(server.url, 'r', 'b');
    expect(await got).toEqual({ peerId: 'b' });
    expect(a.listenerErrors).toBe(1);
    // client still works
    const sig = once<{ data: unknown }>(a, SignallingEvent.Signal);
    b.sendSignal('a', 0, { hi: 1 });
    expect((await sig).data).toEqual({ hi: 1 });
  });

  it('fails cleanly without a WebSocket implementation', async () => {
    const c = new SignallingClient({ WebSocket: undefined });
    if (!(globalThis as { WebSocket?: unknown }).WebSocket) {
      await expect(c.connect('ws://127.0.0.1:1', 'r')).rejects.toThrow(/WebSocket/);
    }
  });

  it('sends a token with the join; the server vouches for the id; a wrong token rejects connect', async () => {
    const secret = 'client-test-secret-at-least-32-bytes-long';
    server = await startSignallingServer({ authorize: createTokenAuthorizer({ secret }), log: () => {} });
    const a = newClient();
    expect(await a.connect(server.url, 'r', undefined, { token: await signRoomToken({ secret, room: 'r', peerId: 'alice' }) })).toEqual({ peerId: 'alice', peers: [] });
    const b = newClient();
    await expect(b.connect(server.url, 'r', 'alice', { token: 'forged' })).rejects.toThrow(/unauthorized/);
    await expect(newClient().connect(server.url, 'r', undefined, { token: '' })).rejects.toThrow(/token/);
  });

  it('drops signals from a sender the server never announced', async () => {
    // A fake server: says joined with no peers, then relays a signal from "mallory".
    const { WebSocketServer } = await import('ws');
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((r) => wss.once('listening', r));
    wss.on('connection', (ws) => {
      ws.on('message', () => {
        ws.send(JSON.stringify({ type: 'joined', peerId: 'me', peers: ['bob'] }));
        ws.send(JSON.stringify({ type: 'signal', from: 'mallory', pathId: 0, data: { x: 1 } }));
        ws.send(JSON.stringify({ type: 'signal', from: 'bob', pathId: 0, data: { x: 2 } }));
      });
    });
    try {
      const c = newClient();
      const got = once<{ from: string }>(c, SignallingEvent.Signal);
      await c.connect(`ws://127.0.0.1:${(wss.address() as { port: number }).port}`, 'r');
      expect((await got).from).toBe('bob');
      expect(c.unvouchedSignals).toBe(1);
    } finally {
      for (const c of clients.splice(0)) c.close();
      await new Promise((r) => wss.close(r));
    }
  });
});
