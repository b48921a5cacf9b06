import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { WebSocket } from 'ws';
import { startSignallingServer, type SignallingServer, type SignallingServerOptions } from '../../../src/signalling/node.js';

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the protocol under test, read field by field
type Msg = Record<string, any>;

/** Raw ws client that queues parsed server messages. */
class RawClient {
  readonly msgs: Msg[] = [];
  private waiters: { pred: (m: Msg) => boolean; resolve: (m: Msg) => void }[] = [];
  readonly closed: Promise<number>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const m = JSON.parse(isBinary ? '"binary"' : data.toString()) as Msg;
      const i = this.waiters.findIndex((w) => w.pred(m));
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(m);
      else this.msgs.push(m);
    });
    this.closed = new Promise((r) => ws.on('close', (code) => r(code)));
  }

  static open(url: string, headers?: Record<string, string>): Promise<RawClient> {
    const ws = new WebSocket(url, headers ? { headers } : {});
    const c = new RawClient(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(c));
      ws.once('error', reject);
    });
  }

  send(v: unknown): void {
    this.ws.send(typeof v === 'string' || v instanceof Uint8Array ? v : JSON.stringify(v));
  }

  next(pred: (m: Msg) => boolean = () => true): Promise<Msg> {
    const i = this.msgs.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.msgs.splice(i, 1)[0]!);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  nextType(type: string): Promise<Msg> {
    return this.next((m) => m.type === type);
  }

  async join(room: string, peerId?: string, token?: string): Promise<Msg> {
    this.send({ type: 'join', room, ...(peerId !== undefined ? { peerId } : {}), ...(token !== undefined ? { token } : {}) });
    return this.next((m) => m.type === 'joined' || m.type === 'error');
  }

  close(): void {
    this.ws.close();
  }
}

/** Yield to the event loop until `cond` holds (bounded; no wall-clock assertion). */
async function until(cond: () => boolean, maxTurns = 2000): Promise<void> {
  for (let i = 0; i < maxTurns && !cond(); i++) await new Promise<void>((r) => setImmediate(r));
  expect(cond()).toBe(true);
}

let server: SignallingServer | undefined;
const clients: RawClient[] = [];

async function start(opts: SignallingServerOptions = {}): Promise<SignallingServer> {
  server = await startSignallingServer({ port: 0, log: () => {}, ...opts });
  return server;
}

async function client(): Promise<RawClient> {
  const c = await RawClient.open(server!.url);
  clients.push(c);
  return c;
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.ws.terminate();
  await server?.close();
  server = undefined;
});

describe('signalling server', () => {
  it('listens on a random port on 127.0.0.1', async () => {
    const s = await start();
    expect(s.port).toBeGreaterThan(0);
    expect(s.url).toBe(`ws://127.0.0.1:${s.port}`);
  });

  it('joins peers, announces them, and forwards signals untouched', async () => {
    await start();
    const a = await client();
    const b = await client();
    const ja = await a.join('room1', 'alice');
    expect(ja).toEqual({ type: 'joined', peerId: 'alice', peers: [] });
    const jb = await b.join('room1');
    expect(jb.type).toBe('joined');
    expect(jb.peers).toEqual(['alice']);
    const bobId = jb.peerId as string;
    expect(bobId).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(await a.nextType('peer-joined')).toEqual({ type: 'peer-joined', peerId: bobId });

    const data = { type: 'candidate', candidate: { candidate: 'candidate:1 1 udp 2122260223 192.0.2.2 5000 typ host', sdpMid: '0' } };
    a.send({ type: 'signal', to: bobId, pathId: 3, data });
    expect(await b.nextType('signal')).toEqual({ type: 'signal', from: 'alice', pathId: 3, data });
    b.send({ type: 'signal', to: 'alice', pathId: 0, data: { type: 'answer', sdp: 'v=0\r\n' } });
    expect(await a.nextType('signal')).toEqual({ type: 'signal', from: bobId, pathId: 0, data: { type: 'answer', sdp: 'v=0\r\n' } });
    expect(server!.stats().signalsForwarded).toBe(2);
  });

  it('keeps rooms separate', async () => {
    await start();
    const a = await client();
    const b = await client();
    await a.join('r1', 'a');
    const jb = await b.join('r2', 'b');
    expect(jb.peers).toEqual([]);
    a.send({ type: 'signal', to: 'b', pathId: 0, data: {} });
    expect((await a.nextType('error')).code).toBe('unknown-peer');
    expect(server!.stats().rooms).toBe(2);
  });

  it('refuses a join to a full room and beyond maxRooms', async () => {
    await start({ maxRoomSize: 2, maxRooms: 1 });
    const a = await client();
    const b = await client();
    const c = await client();
    await a.join('r', 'a');
    await b.join('r', 'b');
    const rc = await c.join('r', 'c');
    expect(rc).toMatchObject({ type: 'error', code: 'room-full' });
    const rc2 = await c.join('other', 'c');
    expect(rc2).toMatchObject({ type: 'error', code: 'room-full' });
    // once someone leaves, c fits
    b.send({ type: 'leave' });
    expect(await a.nextType('peer-left')).toEqual({ type: 'peer-left', peerId: 'b' });
    expect((await c.join('r', 'c')).type).toBe('joined');
  });

  it('rejects a duplicate peerId and a second join', async () => {
    await start();
    const a = await client();
    const b = await client();
    await a.join('r', 'same');
    expect((await b.join('r', 'same')).code).toBe('peer-id-taken');
    expect((await a.join('r2', 'x')).code).toBe('bad-message');
  });

  it('validates options', async () => {
    await expect(startSignallingServer({ maxRoomSize: 9 })).rejects.toThrow(RangeError);
    await expect(startSignallingServer({ maxRoomSize: 1 })).rejects.toThrow(RangeError);
  });

  it('applies rewriteSignal: rewritten data forwarded, null dropped, throwing hook dropped', async () => {
    const seen: unknown[] = [];
    const logs: string[] = [];
    await start({
      log: (m) => logs.push(m),
      rewriteSignal: (ctx) => {
        seen.push(ctx);
        const d = ctx.data as Record<string, unknown>;
        if (d.drop) return null;
        if (d.boom) throw new Error('hook failed');
        return { ...d, rewritten: `${ctx.room}/${ctx.from}->${ctx.to}#${ctx.pathId}` };
      },
    });
    const a = await client();
    const b = await client();
    await a.join('r', 'a');
    await b.join('r', 'b');
    a.send({ type: 'signal', to: 'b', pathId: 1, data: { drop: true } });
    a.send({ type: 'signal', to: 'b', pathId: 1, data: { boom: true } });
    a.send({ type: 'signal', to: 'b', pathId: 2, data: { x: 1 } });
    const got = await b.nextType('signal');
    expect(got).toEqual({ type: 'signal', from: 'a', pathId: 2, data: { x: 1, rewritten: 'r/a->b#2' } });
    expect(seen).toHaveLength(3);
    expect(seen[2]).toEqual({ room: 'r', from: 'a', to: 'b', pathId: 2, data: { x: 1 } });
    expect(server!.stats().drops.rewriteDropped).toBe(2);
    expect(logs.some((l) => l.includes('hook failed'))).toBe(true);
    expect(b.msgs.filter((m) => m.type === 'signal')).toHaveLength(0);
  });

  it('answers garbage with errors and keeps serving others', async () => {
    await start();
    const bad = await client();
    const a = await client();
    const b = await client();
    await a.join('r', 'a');
    await b.join('r', 'b');

    bad.send('this is not json');
    expect((await bad.nextType('error')).code).toBe('bad-json');
    bad.send(new Uint8Array([1, 2, 3]));
    expect((await bad.nextType('error')).code).toBe('bad-message');
    bad.send({ type: 'join', room: 12 });
    expect((await bad.nextType('error')).code).toBe('bad-message');
    bad.send({ type: 'nonsense' });
    expect((await bad.nextType('error')).code).toBe('bad-message');
    bad.send('null');
    expect((await bad.nextType('error')).code).toBe('bad-message');
    bad.send({ type: 'signal', to: 'a', pathId: 0, data: {} });
    expect((await bad.nextType('error')).code).toBe('not-joined');
    bad.send({ type: 'leave' });
    expect((await bad.nextType('error')).code).toBe('not-joined');
    bad.send({ type: 'signal', to: 'a', pathId: 99, data: {} });
    expect((await bad.nextType('error')).code).toBe('bad-message');

    // the bad client can still join and is then told about unknown peers
    await bad.join('r', 'bad');
    bad.send({ type: 'signal', to: 'ghost', pathId: 0, data: {} });
    expect((await bad.nextType('error')).code).toBe('unknown-peer');
    bad.send({ type: 'signal', to: 'bad', pathId: 0, data: {} });
    expect((await bad.nextType('error')).code).toBe('unknown-peer');

    // others are unaffected
    a.send({ type: 'signal', to: 'b', pathId: 0, data: { ok: 1 } });
    expect((await b.nextType('signal')).data).toEqual({ ok: 1 });
    const st = server!.stats();
    expect(st.drops.badJson).toBe(1);
    expect(st.drops.tooLarge).toBe(0);
    expect(st.drops.notJoined).toBe(2);
    expect(st.drops.unknownPeer).toBe(2);
    expect(st.drops.internal).toBe(0);
    expect(st.connections).toBe(3);
  });

  it('survives fuzzed frames (random text, JSON, near-valid messages) without internal errors', async () => {
    await start({ rateLimit: { burst: 10_000, perSecond: 0 } });
    const fuzz = await client();
    const frames = fc.sample(
      fc.oneof(
        fc.string(),
        fc.json(),
        fc
          .record({ type: fc.constantFrom('join', 'signal', 'leave', 'x'), room: fc.anything(), to: fc.anything(), pathId: fc.anything(), data: fc.anything() })
          .map((o) => JSON.stringify(o) ?? 'null'),
      ),
      { numRuns: 300, seed: 42 },
    );
    for (const f of frames) fuzz.send(f);
    fuzz.send('{"type":"leave"}'); // marker: not-joined (or leave of a fuzz-joined room)
    await until(() => server!.stats().messagesIn >= frames.length + 1);
    expect(server!.stats().drops.internal).toBe(0);
    const ok = await client();
    expect((await ok.join('after-fuzz', 'ok')).type).toBe('joined');
  });

  it('closes a socket sending a frame above the protocol limit (64 KiB) without affecting others', async () => {
    await start();
    const bad = await client();
    const a = await client();
    await a.join('r', 'a');
    bad.send('x'.repeat(64 * 1024 + 1));
    expect(await bad.closed).toBe(1009);
    const b = await client();
    expect((await b.join('r', 'b')).peers).toEqual(['a']);
  });

  it('rate-limits a flooding connection with one error per run', async () => {
    await start({ rateLimit: { burst: 5, perSecond: 0 } });
    const a = await client();
    for (let i = 0; i < 20; i++) a.send({ type: 'leave' });
    // 5 not-joined errors, then one rate-limited error
    const errs: Msg[] = [];
    for (let i = 0; i < 6; i++) errs.push(await a.nextType('error'));
    expect(errs.slice(0, 5).every((e) => e.code === 'not-joined')).toBe(true);
    expect(errs[5]!.code).toBe('rate-limited');
    await until(() => server!.stats().messagesIn >= 20);
    const st = server!.stats();
    expect(st.drops.rateLimited).toBe(15);
    expect(a.msgs.filter((m) => m.code === 'rate-limited')).toHaveLength(0);
  });

  it('notifies peer-left when a peer disconnects and removes empty rooms', async () => {
    await start();
    const a = await client();
    const b = await client();
    await a.join('r', 'a');
    await b.join('r', 'b');
    await a.nextType('peer-joined');
    b.ws.terminate();
    expect(await a.nextType('peer-left')).toEqual({ type: 'peer-left', peerId: 'b' });
    expect(server!.stats().peers).toBe(1);
    a.close();
    await a.closed;
    await until(() => server!.stats().rooms === 0);
    expect(server!.stats().peers).toBe(0);
  });

  it('close() terminates clients and is idempotent', async () => {
    await start();
    const a = await client();
    await a.join('r', 'a');
    await Promise.all([server!.close(), server!.close()]);
    await a.closed;
  });
});
