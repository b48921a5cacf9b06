/**
 * Authenticated rooms and per-client limits of the signalling server, on
 * 127.0.0.1 (bounded connection counts, no wall-clock assertions).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createTokenAuthorizer, signRoomToken, startSignallingServer, type SignallingServer, type SignallingServerOptions } from '../../../src/signalling/node.js';

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the protocol under test, read field by field
type Msg = Record<string, any>;
const SECRET = 'test-secret-that-is-at-least-32-bytes-long!';

class Peer {
  readonly msgs: Msg[] = [];
  private waiters: { pred: (m: Msg) => boolean; resolve: (m: Msg) => void }[] = [];
  readonly closed: Promise<number>;
  constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as Msg;
      const i = this.waiters.findIndex((w) => w.pred(m));
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(m);
      else this.msgs.push(m);
    });
    this.closed = new Promise((r) => ws.on('close', (code) => r(code)));
  }
  next(pred: (m: Msg) => boolean): Promise<Msg> {
    const i = this.msgs.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.msgs.splice(i, 1)[0]!);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }
  send(v: unknown): void {
    this.ws.send(JSON.stringify(v));
  }
  join(room: string, peerId?: string, token?: string): Promise<Msg> {
    this.send({ type: 'join', room, ...(peerId !== undefined ? { peerId } : {}), ...(token !== undefined ? { token } : {}) });
    return this.next((m) => m.type === 'joined' || m.type === 'error');
  }
}

let server: SignallingServer | undefined;
const sockets: WebSocket[] = [];

async function start(opts: SignallingServerOptions): Promise<SignallingServer> {
  server = await startSignallingServer({ port: 0, log: () => {}, ...opts });
  return server;
}

/** Open a socket; resolves with the Peer, or with the HTTP status when the upgrade is refused. */
function open(headers: Record<string, string> = {}): Promise<Peer | number> {
  const ws = new WebSocket(server!.url, { headers });
  sockets.push(ws);
  const p = new Peer(ws);
  return new Promise((resolve) => {
    ws.once('open', () => resolve(p));
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', () => resolve(0));
  });
}

async function peer(headers: Record<string, string> = {}): Promise<Peer> {
  const p = await open(headers);
  if (typeof p === 'number') throw new Error(`upgrade refused: ${p}`);
  return p;
}

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await server?.close();
  server = undefined;
});

describe('signalling security: authorize + room tokens', () => {
  it('admits a valid token with the id it vouches for and refuses a wrong one', async () => {
    await start({ authorize: createTokenAuthorizer({ secret: SECRET }) });
    const good = await peer();
    const token = await signRoomToken({ secret: SECRET, room: 'r1', peerId: 'alice', ttl: 60 });
    expect(await good.join('r1', undefined, token)).toEqual({ type: 'joined', peerId: 'alice', peers: [] });

    // wrong secret
    const forged = await signRoomToken({ secret: 'another-secret-that-is-at-least-32-bytes', room: 'r1', peerId: 'bob' });
    const bad = await peer();
    expect(await bad.join('r1', undefined, forged)).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect(await bad.closed).toBe(1008);
    // no token, token for another room, claimed id that differs from the token
    const none = await peer();
    expect((await none.join('r1')).code).toBe('unauthorized');
    const other = await peer();
    expect((await other.join('r1', undefined, await signRoomToken({ secret: SECRET, room: 'r2', peerId: 'bob' }))).code).toBe('unauthorized');
    const liar = await peer();
    expect((await liar.join('r1', 'alice', await signRoomToken({ secret: SECRET, room: 'r1', peerId: 'bob' }))).code).toBe('unauthorized');
    // garbage and an expired token
    const junk = await peer();
    expect((await junk.join('r1', undefined, 'not.a.jwt')).code).toBe('unauthorized');
    expect(server!.stats().drops.unauthorized).toBe(5);
    expect(server!.stats().peers).toBe(1);
    expect(good.msgs.filter((m) => m.type === 'peer-joined')).toHaveLength(0);
  });

  it('refuses an expired token', async () => {
    await start({ authorize: createTokenAuthorizer({ secret: SECRET, clockToleranceSec: 0 }) });
    const { SignJWT } = await import('jose');
    const expired = await new SignJWT({ room: 'r' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 120)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(new TextEncoder().encode(SECRET));
    const p = await peer();
    const r = await p.join('r', undefined, expired);
    expect(r.code).toBe('unauthorized');
    expect(r.message).toContain('EXPIRED');
  });

  it('a peer id cannot be taken over while held, even with a valid token for it', async () => {
    await start({ authorize: createTokenAuthorizer({ secret: SECRET }) });
    const tokenA = await signRoomToken({ secret: SECRET, room: 'r', peerId: 'alice' });
    const tokenB = await signRoomToken({ secret: SECRET, room: 'r', peerId: 'bob' });
    const a = await peer();
    const b = await peer();
    await a.join('r', undefined, tokenA);
    await b.join('r', undefined, tokenB);
    // a stolen copy of alice's token cannot displace alice
    const thief = await peer();
    expect((await thief.join('r', undefined, tokenA)).code).toBe('peer-id-taken');
    b.send({ type: 'signal', to: 'alice', pathId: 0, data: { sdp: 'x' } });
    expect((await a.next((m) => m.type === 'signal')).from).toBe('bob');
    expect(thief.msgs.filter((m) => m.type === 'signal')).toHaveLength(0);
  });

  it('without authorize a held id is still not taken over', async () => {
    await start({});
    const a = await peer();
    await a.join('r', 'alice');
    const thief = await peer();
    expect((await thief.join('r', 'alice')).code).toBe('peer-id-taken');
  });

  it('a custom authorize sees the upgrade request and may assign the id', async () => {
    const seen: string[] = [];
    await start({
      authorize: (req, ctx) => {
        seen.push(String(req.headers['x-user']));
        return req.headers['x-user'] === 'carol' ? { ok: true, peerId: 'carol-1' } : { ok: false, reason: `no access to ${ctx.room}` };
      },
    });
    const c = await peer({ 'x-user': 'carol' });
    expect(await c.join('r', 'whatever')).toEqual({ type: 'joined', peerId: 'carol-1', peers: [] });
    const d = await peer({ 'x-user': 'dave' });
    expect((await d.join('r')).message).toContain('no access to r');
    expect(seen).toEqual(['carol', 'dave']);
  });

  it('signRoomToken and createTokenAuthorizer refuse short secrets', async () => {
    expect(() => createTokenAuthorizer({ secret: 'short' })).toThrow(RangeError);
    await expect(signRoomToken({ secret: 'short', room: 'r' })).rejects.toThrow(RangeError);
    await expect(signRoomToken({ secret: SECRET, room: 'bad room' })).rejects.toThrow(RangeError);
  });
});

describe('signalling security: origins and per-client limits', () => {
  it('refuses origins not in allowedOrigins at the upgrade', async () => {
    await start({ allowedOrigins: ['https://app.example'] });
    expect(await open({ Origin: 'https://evil.example' })).toBe(403);
    expect(await open({})).toBe(403);
    const ok = await peer({ Origin: 'https://app.example' });
    expect((await ok.join('r')).type).toBe('joined');
    expect(server!.stats().originRejected).toBe(2);
  });

  it('one client cannot exhaust connections or rooms for others', async () => {
    await start({
      maxConnections: 12,
      maxRooms: 10,
      perClient: { maxConnections: 4, maxRooms: 2 },
      clientKey: (req) => String(req.headers['x-client'] ?? req.socket.remoteAddress),
    });
    const attacker = { 'x-client': 'attacker' };
    const mine: Peer[] = [];
    const refused: number[] = [];
    for (let i = 0; i < 10; i++) {
      const p = await open(attacker);
      if (typeof p === 'number') refused.push(p);
      else mine.push(p);
    }
    expect(mine).toHaveLength(4);
    expect(refused.every((c) => c === 429)).toBe(true);
    // rooms: the attacker's connections can be in at most 2 distinct rooms
    expect((await mine[0]!.join('a1')).type).toBe('joined');
    expect((await mine[1]!.join('a2')).type).toBe('joined');
    expect((await mine[2]!.join('a3')).code).toBe('client-limit');
    expect((await mine[3]!.join('a1')).type).toBe('joined'); // a room it is already in is fine
    // others still connect and create rooms
    const alice = await peer({ 'x-client': 'alice' });
    const bob = await peer({ 'x-client': 'bob' });
    expect((await alice.join('call')).type).toBe('joined');
    expect((await bob.join('call')).type).toBe('joined');
    const st = server!.stats();
    expect(st.clients).toBe(3);
    expect(st.drops.clientLimit).toBeGreaterThanOrEqual(7);
  });

  it('rate-limits a client across its connections, not the others', async () => {
    await start({
      rateLimit: { burst: 100, perSecond: 0 },
      perClient: { rateLimit: { burst: 10, perSecond: 0 } },
      clientKey: (req) => String(req.headers['x-client']),
    });
    const a1 = await peer({ 'x-client': 'a' });
    const a2 = await peer({ 'x-client': 'a' });
    const b = await peer({ 'x-client': 'b' });
    for (let i = 0; i < 8; i++) a1.send({ type: 'leave' });
    for (let i = 0; i < 8; i++) a2.send({ type: 'leave' });
    // 10 tokens for client a in total: a2's later messages are rate-limited although a2 itself is far below its own burst.
    expect((await a2.next((m) => m.code === 'rate-limited')).type).toBe('error');
    expect((await b.join('r')).type).toBe('joined');
  });

  it('bounds how fast one client can reconnect (a join-guessing loop), not the others', async () => {
    await start({ authorize: () => false, perClient: { connectRate: { burst: 5, perSecond: 0 } }, clientKey: (req) => String(req.headers['x-client']) });
    const codes: number[] = [];
    for (let i = 0; i < 8; i++) {
      const p = await open({ 'x-client': 'guesser' });
      if (typeof p === 'number') codes.push(p);
      else {
        await p.join('r', undefined, `guess-${i}`);
        await p.closed;
      }
    }
    expect(codes).toEqual([429, 429, 429]);
    expect(typeof (await open({ 'x-client': 'someone-else' }))).not.toBe('number');
  });

  it('closes a flooding connection (the refill no longer hides the flood)', async () => {
    // 100 tokens/s refill would have reset the old "drops in a row" count on every grant.
    await start({ rateLimit: { burst: 5, perSecond: 100 } });
    const flood = await peer();
    const victim = await peer();
    await victim.join('r', 'v');
    for (let i = 0; i < 200; i++) flood.send({ type: 'leave' });
    expect(await flood.closed).toBe(1008);
    expect(server!.stats().floodCloses).toBe(1);
    const after = await peer();
    expect((await after.join('r')).peers).toEqual(['v']);
  });

  it('re-arms the join timeout after leave', async () => {
    await start({ joinTimeoutMs: 150 });
    const p = await peer();
    await p.join('r', 'x');
    p.send({ type: 'leave' });
    expect(await p.closed).toBe(1008); // idle outside any room: closed again
  });
});
