import { describe, expect, it } from 'vitest';
import { resolveServerOptions, type SignallingServerOptions } from '../../../src/signalling/server-options.js';
import { ConnectRateLimiter, MAX_CONNECT_BUCKETS, refill } from '../../../src/signalling/token-bucket.js';

describe('resolveServerOptions', () => {
  it('applies the documented defaults', () => {
    const o = resolveServerOptions({});
    expect(o).toMatchObject({
      port: 0,
      host: '127.0.0.1',
      maxRoomSize: 8,
      maxRooms: 1000,
      maxConnections: 2000,
      rateLimit: { burst: 200, perSecond: 100 },
      maxBufferedBytes: 1 << 20,
      joinTimeoutMs: 30_000,
      pingIntervalMs: 20_000,
      perClientConns: 16,
      perClientRooms: 8,
      clientRate: { burst: 400, perSecond: 200 },
      connectRate: { burst: 30, perSecond: 1 },
      allowedOrigins: undefined,
      authorize: undefined,
      rewrite: undefined,
    });
  });

  it.each<[string, SignallingServerOptions]>([
    ['port above 65535', { port: 70_000 }],
    ['maxRoomSize above 8', { maxRoomSize: 9 }],
    ['maxRoomSize below 2', { maxRoomSize: 1 }],
    ['fractional maxRooms', { maxRooms: 1.5 }],
    ['zero maxConnections', { maxConnections: 0 }],
    ['zero rate-limit burst', { rateLimit: { burst: 0, perSecond: 1 } }],
    ['negative rate-limit refill', { rateLimit: { burst: 1, perSecond: -1 } }],
    ['infinite rate-limit refill', { rateLimit: { burst: 1, perSecond: Infinity } }],
    ['zero per-client connections', { perClient: { maxConnections: 0 } }],
    ['zero per-client rooms', { perClient: { maxRooms: 0 } }],
    ['NaN per-client refill', { perClient: { rateLimit: { burst: 1, perSecond: Number.NaN } } }],
    ['zero connect-rate burst', { perClient: { connectRate: { burst: 0, perSecond: 1 } } }],
  ])('refuses %s with a RangeError', (_name, opts) => {
    expect(() => resolveServerOptions(opts)).toThrow(RangeError);
  });

  it('keeps the allowed origins as a set and the client key hook', () => {
    const clientKey = () => 'k';
    const o = resolveServerOptions({ allowedOrigins: ['https://a.example', 'https://b.example'], clientKey });
    expect(o.allowedOrigins?.has('https://a.example')).toBe(true);
    expect(o.allowedOrigins?.has('https://c.example')).toBe(false);
    expect(o.clientKey).toBe(clientKey);
  });
});

describe('token buckets', () => {
  it('refill adds perSecond tokens per second, capped at burst', () => {
    const b = { tokens: 0, lastRefillMs: 0 };
    refill(b, { burst: 10, perSecond: 4 }, 500);
    expect(b).toEqual({ tokens: 2, lastRefillMs: 500 });
    refill(b, { burst: 10, perSecond: 4 }, 60_000);
    expect(b.tokens).toBe(10);
  });

  it('ConnectRateLimiter allows a burst per client, then refills', () => {
    const l = new ConnectRateLimiter({ burst: 2, perSecond: 1 });
    expect([l.take('a', 0), l.take('a', 0), l.take('a', 0)]).toEqual([true, true, false]);
    expect(l.take('b', 0)).toBe(true); // another client has its own bucket
    expect(l.take('a', 1000)).toBe(true);
  });

  it(`ConnectRateLimiter keeps at most ${MAX_CONNECT_BUCKETS} clients, forgetting idle ones first`, () => {
    const l = new ConnectRateLimiter({ burst: 1, perSecond: 0 });
    for (let i = 0; i < MAX_CONNECT_BUCKETS; i++) expect(l.take(`c${i}`, 0)).toBe(true);
    // Every bucket is empty (no refill): the table is full, the oldest entry goes.
    expect(l.take('new', 0)).toBe(true);
    expect(l.take('c1', 0)).toBe(false); // c1 is still remembered: empty
    expect(l.take('c0', 0)).toBe(true); // c0 was forgotten: a fresh bucket
  });
});
