/**
 * Options of the signalling server (`startSignallingServer` in server.ts), their
 * defaults and their validation. Node-only (types from `node:http`).
 */
import type { IncomingMessage } from 'node:http';
import type { AuthorizeContext, AuthorizeResult } from './authorize.js';

/** Context handed to {@link SignallingServerOptions.rewriteSignal}. */
export interface RewriteSignalContext {
  room: string;
  from: string;
  to: string;
  pathId: number;
  data: unknown;
}

export interface SignallingServerOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Listen address (default '127.0.0.1'). */
  host?: string;
  /** Peers per room, integer 2..8 (default 8). */
  maxRoomSize?: number;
  /** Rooms alive at once (default 1000); a join that would create one more gets `room-full`. */
  maxRooms?: number;
  /** Open sockets at once (default 2000); extra sockets are closed with code 1013. */
  maxConnections?: number;
  /**
   * Per-connection token bucket: `burst` messages at once, refilled at
   * `perSecond` messages/s (default 200 and 100). Over the limit a message is
   * dropped; the first drop of a run gets a `rate-limited` reply; after
   * `10 * burst` drops in a row the socket is closed (1008).
   */
  rateLimit?: { burst: number; perSecond: number };
  /** Forwarded bytes allowed to sit in a receiver's socket buffer (default 1 MiB); beyond, forwards to it are dropped. */
  maxBufferedBytes?: number;
  /** Sockets that have not joined within this time are closed (ms, default 30000; 0 disables). */
  joinTimeoutMs?: number;
  /** WebSocket ping period; a socket that missed one pong is terminated (ms, default 20000; 0 disables). */
  pingIntervalMs?: number;
  /**
   * Hook applied to every forwarded signal. The returned value is forwarded
   * as `data` (it must be a JSON object); `null`/`undefined` drops the signal.
   * Exceptions drop the signal and are logged. Without the hook `data` is
   * forwarded untouched. Used by test harnesses to rewrite ICE candidates.
   */
  rewriteSignal?: (ctx: RewriteSignalContext) => unknown | null;
  /**
   * Admission of each join: `request` is the WebSocket upgrade request,
   * `ctx` the room, the claimed peer id and the join's token. See
   * {@link AuthorizeResult}; a refusal (or a throw) answers `unauthorized` and
   * closes the socket (1008). Default: everyone is admitted (dev mode, a
   * warning is logged at start). {@link createTokenAuthorizer} is the JWT default.
   */
  authorize?: (request: IncomingMessage, ctx: AuthorizeContext) => AuthorizeResult | Promise<AuthorizeResult>;
  /**
   * Browser origins allowed to connect (exact `Origin` header values, e.g.
   * `https://app.example.com`). Others, and upgrades without an Origin
   * header, are refused with HTTP 403. Default: any origin.
   */
  allowedOrigins?: readonly string[];
  /**
   * Per-client bounds, a client being a remote address (or `clientKey`):
   * open connections (default 16), distinct rooms its connections are in
   * (default 8), a token bucket over all its messages (default burst 400,
   * 200/s) on top of the per-connection one, and a token bucket over its new
   * connections (default burst 30, 1/s: reloads are fine, a join-guessing
   * loop that reconnects after every refusal is not; excess gets HTTP 429).
   */
  perClient?: {
    maxConnections?: number;
    maxRooms?: number;
    rateLimit?: { burst: number; perSecond: number };
    connectRate?: { burst: number; perSecond: number };
  };
  /**
   * Who a connection belongs to for the per-client bounds (default: the
   * socket's remote address). Behind a trusted reverse proxy, derive it from
   * the proxy's forwarding header; never trust that header otherwise.
   */
  clientKey?: (request: IncomingMessage) => string;
  /** Diagnostic log sink (default: silent, except the no-`authorize` warning which goes to console.warn). */
  log?: (msg: string) => void;
}

/** A token bucket's limit: `burst` tokens at once, refilled at `perSecond` tokens/s. */
export interface RateLimit {
  burst: number;
  perSecond: number;
}

/** {@link SignallingServerOptions} with every default applied, validated. */
export interface ResolvedServerOptions {
  port: number;
  host: string;
  maxRoomSize: number;
  maxRooms: number;
  maxConnections: number;
  rateLimit: RateLimit;
  maxBufferedBytes: number;
  joinTimeoutMs: number;
  pingIntervalMs: number;
  perClientConns: number;
  perClientRooms: number;
  clientRate: RateLimit;
  connectRate: RateLimit;
  allowedOrigins: ReadonlySet<string> | undefined;
  authorize: SignallingServerOptions['authorize'];
  clientKey: (req: IncomingMessage) => string;
  rewrite: SignallingServerOptions['rewriteSignal'];
  log: (msg: string) => void;
  /** Where the no-`authorize` warning goes: `log` when given, else console.warn. */
  warn: (msg: string) => void;
}

const DEFAULTS = {
  maxRoomSize: 8,
  maxRooms: 1000,
  maxConnections: 2000,
  rateLimit: { burst: 200, perSecond: 100 },
  maxBufferedBytes: 1 << 20,
  joinTimeoutMs: 30_000,
  pingIntervalMs: 20_000,
  perClient: { maxConnections: 16, maxRooms: 8, rateLimit: { burst: 400, perSecond: 200 }, connectRate: { burst: 30, perSecond: 1 } },
};

/**
 * Apply the defaults and check the ranges.
 * @throws RangeError for out-of-range options.
 */
export function resolveServerOptions(opts: SignallingServerOptions): ResolvedServerOptions {
  const host = opts.host ?? '127.0.0.1';
  const maxRoomSize = opts.maxRoomSize ?? DEFAULTS.maxRoomSize;
  const maxRooms = opts.maxRooms ?? DEFAULTS.maxRooms;
  const maxConnections = opts.maxConnections ?? DEFAULTS.maxConnections;
  const rateLimit = opts.rateLimit ?? DEFAULTS.rateLimit;
  const maxBufferedBytes = opts.maxBufferedBytes ?? DEFAULTS.maxBufferedBytes;
  const joinTimeoutMs = opts.joinTimeoutMs ?? DEFAULTS.joinTimeoutMs;
  const pingIntervalMs = opts.pingIntervalMs ?? DEFAULTS.pingIntervalMs;
  const perClientConns = opts.perClient?.maxConnections ?? DEFAULTS.perClient.maxConnections;
  const perClientRooms = opts.perClient?.maxRooms ?? DEFAULTS.perClient.maxRooms;
  const clientRate = opts.perClient?.rateLimit ?? DEFAULTS.perClient.rateLimit;
  const connectRate = opts.perClient?.connectRate ?? DEFAULTS.perClient.connectRate;
  const allowedOrigins = opts.allowedOrigins === undefined ? undefined : new Set(opts.allowedOrigins);
  const authorize = opts.authorize;
  const clientKey = opts.clientKey ?? ((req: IncomingMessage) => req.socket.remoteAddress ?? 'unknown');
  checkInt('port', opts.port ?? 0, 0, 65535);
  checkInt('perClient.maxConnections', perClientConns, 1, 1_000_000);
  checkInt('perClient.maxRooms', perClientRooms, 1, 1_000_000);
  checkInt('perClient.rateLimit.burst', clientRate.burst, 1, 1_000_000);
  if (!(clientRate.perSecond >= 0) || !Number.isFinite(clientRate.perSecond)) {
    throw new RangeError(`startSignallingServer: perClient.rateLimit.perSecond must be finite and >= 0`);
  }
  checkInt('perClient.connectRate.burst', connectRate.burst, 1, 1_000_000);
  if (!(connectRate.perSecond >= 0) || !Number.isFinite(connectRate.perSecond)) {
    throw new RangeError(`startSignallingServer: perClient.connectRate.perSecond must be finite and >= 0`);
  }
  checkInt('maxRoomSize', maxRoomSize, 2, 8);
  checkInt('maxRooms', maxRooms, 1, 1_000_000);
  checkInt('maxConnections', maxConnections, 1, 1_000_000);
  checkInt('rateLimit.burst', rateLimit.burst, 1, 1_000_000);
  if (!(rateLimit.perSecond >= 0) || !Number.isFinite(rateLimit.perSecond)) {
    throw new RangeError(`startSignallingServer: rateLimit.perSecond must be finite and >= 0`);
  }
  return {
    port: opts.port ?? 0,
    host,
    maxRoomSize,
    maxRooms,
    maxConnections,
    rateLimit,
    maxBufferedBytes,
    joinTimeoutMs,
    pingIntervalMs,
    perClientConns,
    perClientRooms,
    clientRate,
    connectRate,
    allowedOrigins,
    authorize,
    clientKey,
    rewrite: opts.rewriteSignal,
    log: opts.log ?? (() => {}),
    warn: opts.log ?? ((m: string) => console.warn(m)),
  };
}

function checkInt(name: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`startSignallingServer: ${name} must be an integer in [${min}, ${max}], got ${v}`);
  }
}
