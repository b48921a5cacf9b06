/**
 * Node-only WebSocket signalling server (uses `ws`). Do NOT import this file
 * from browser code; import it through `src/signalling/node.ts`.
 *
 * Rooms of up to `maxRoomSize` peers; a peer's `signal` is forwarded to one
 * other peer of the same room with `data` untouched (unless the
 * `rewriteSignal` hook changes it). Anything malformed (non-JSON, binary,
 * over 64 KiB, unknown type, wrong field types, signal before join, unknown
 * target) gets an `error` reply and is dropped; every handler is wrapped so
 * bad input never crashes the process. Bounds: connections, rooms, room size,
 * message rate per connection (token bucket), bytes queued towards a slow
 * client, and a frame limit (the protocol's 64 KiB) above which `ws` closes
 * the socket (1009).
 *
 * Who may do what (see docs/security.md):
 * - `authorize(request, { room, peerId, token })` admits or refuses each join
 *   and may fix the peer id it vouches for ({@link createTokenAuthorizer} is
 *   the JWT/HMAC default). Without it anyone who knows a room name can join
 *   (dev mode; a warning is logged at start).
 * - A peer id is held by one connection: another join claiming it is refused
 *   (`peer-id-taken`) until the holder leaves or its socket dies.
 * - `allowedOrigins`: browsers from other origins are refused at the upgrade (403).
 * - Per client (remote address, or `clientKey(request)` behind a proxy):
 *   connections, rooms and message rate are bounded, so one client cannot
 *   use up the global limits; a connection that keeps flooding is closed.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthorizeContext, AuthorizeResult } from './authorize.js';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import {
  MAX_SIGNALLING_MESSAGE_BYTES,
  encodeMessage,
  parseClientMessage,
  utf8Length,
  type ClientSignalMessage,
  type JoinMessage,
  isValidId,
  type ServerMessage,
  type SignallingErrorCode,
} from './protocol.js';

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

/** Counters since start. `drops.*` count messages that got dropped. */
export interface SignallingServerStats {
  connections: number;
  rooms: number;
  peers: number;
  messagesIn: number;
  signalsForwarded: number;
  errorsSent: number;
  connectionsRejected: number;
  /** Distinct clients (remote addresses / keys) connected now. */
  clients: number;
  /** Connections refused at the upgrade: origin not allowed. */
  originRejected: number;
  /** Connections closed for sustained flooding. */
  floodCloses: number;
  drops: {
    badJson: number;
    tooLarge: number;
    badMessage: number;
    notJoined: number;
    unknownPeer: number;
    roomFull: number;
    rateLimited: number;
    rewriteDropped: number;
    backpressure: number;
    internal: number;
    unauthorized: number;
    peerIdTaken: number;
    clientLimit: number;
  };
}

export interface SignallingServer {
  /** Bound TCP port. */
  readonly port: number;
  /** `ws://host:port` to give to clients. */
  readonly url: string;
  /** Close every socket and stop listening. Idempotent. */
  close(): Promise<void>;
  stats(): SignallingServerStats;
}

interface Room {
  name: string;
  peers: Map<string, Conn>;
}

/** Token bucket. */
interface Bucket {
  tokens: number;
  lastRefillMs: number;
}

interface Client {
  key: string;
  conns: Set<Conn>;
  bucket: Bucket;
}

interface Conn {
  ws: WebSocket;
  req: IncomingMessage;
  client: Client;
  serial: number;
  peerId: string | undefined;
  room: Room | undefined;
  /** An `authorize` call is pending for this connection. */
  joining: boolean;
  bucket: Bucket;
  /** A rate-limited run is in progress (one `rate-limited` reply per run). */
  limited: boolean;
  /** Messages dropped by the rate limit in the current flood window, and when the window started (ms). */
  floodDrops: number;
  floodWindowMs: number;
  alive: boolean;
  joinTimer: ReturnType<typeof setTimeout> | undefined;
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

/** Connect-rate buckets kept for at most this many clients; full (idle) buckets are pruned first. */
const MAX_CONNECT_BUCKETS = 10_000;

/** A connection with more than `FLOOD_FACTOR * burst` rate-limited messages within FLOOD_WINDOW_MS is closed (1008). */
const FLOOD_FACTOR = 5;
const FLOOD_WINDOW_MS = 10_000;

function rawLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.byteLength, 0);
  return data.byteLength;
}

function rawToString(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}

function checkInt(name: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`startSignallingServer: ${name} must be an integer in [${min}, ${max}], got ${v}`);
  }
}

/**
 * Start a signalling server.
 * @returns once listening; `port` is the bound port (useful with port 0).
 * @throws RangeError for out-of-range options; rejects if the port cannot be bound.
 */
export async function startSignallingServer(opts: SignallingServerOptions = {}): Promise<SignallingServer> {
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
  const log = opts.log ?? (() => {});
  const rewrite = opts.rewriteSignal;

  const rooms = new Map<string, Room>();
  const conns = new Set<Conn>();
  const clients = new Map<string, Client>();
  /** Per-client new-connection buckets; outlive the client's connections (bounded, see MAX_CONNECT_BUCKETS). */
  const connectBuckets = new Map<string, Bucket>();

  /** Take a new-connection token for `key`; false when the client reconnects too fast. */
  function takeConnectToken(key: string): boolean {
    const now = performance.now();
    let b = connectBuckets.get(key);
    if (b === undefined) {
      if (connectBuckets.size >= MAX_CONNECT_BUCKETS) {
        for (const [k, o] of connectBuckets) {
          refill(o, connectRate, now);
          if (o.tokens >= connectRate.burst) connectBuckets.delete(k);
        }
        // Still full: forget the oldest entries (insertion order) rather than grow.
        for (const k of connectBuckets.keys()) {
          if (connectBuckets.size < MAX_CONNECT_BUCKETS) break;
          connectBuckets.delete(k);
        }
      }
      b = { tokens: connectRate.burst, lastRefillMs: now };
      connectBuckets.set(key, b);
    }
    refill(b, connectRate, now);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
  let serial = 0;
  let closed = false;
  const st: SignallingServerStats = {
    connections: 0,
    rooms: 0,
    peers: 0,
    messagesIn: 0,
    signalsForwarded: 0,
    errorsSent: 0,
    connectionsRejected: 0,
    clients: 0,
    originRejected: 0,
    floodCloses: 0,
    drops: {
      badJson: 0,
      tooLarge: 0,
      badMessage: 0,
      notJoined: 0,
      unknownPeer: 0,
      roomFull: 0,
      rateLimited: 0,
      rewriteDropped: 0,
      backpressure: 0,
      internal: 0,
      unauthorized: 0,
      peerIdTaken: 0,
      clientLimit: 0,
    },
  };

  const keyOf = (req: IncomingMessage): string => {
    try {
      const k = clientKey(req);
      return typeof k === 'string' && k.length > 0 ? k.slice(0, 256) : 'unknown';
    } catch {
      return 'unknown';
    }
  };

  const wss = new WebSocketServer({
    port: opts.port ?? 0,
    host,
    maxPayload: MAX_SIGNALLING_MESSAGE_BYTES,
    perMessageDeflate: false,
    clientTracking: false,
    // Refuse at the HTTP upgrade what can be refused cheaply: foreign origins, a full server, a client at its limit.
    verifyClient: (info: { origin: string; req: IncomingMessage }, cb: (ok: boolean, code?: number, message?: string) => void) => {
      if (allowedOrigins !== undefined && !allowedOrigins.has(info.origin)) {
        st.originRejected++;
        return cb(false, 403, 'origin not allowed');
      }
      if (closed || conns.size >= maxConnections) {
        st.connectionsRejected++;
        return cb(false, 503, 'server full');
      }
      const key = keyOf(info.req);
      const c = clients.get(key);
      if (c !== undefined && c.conns.size >= perClientConns) {
        st.connectionsRejected++;
        st.drops.clientLimit++;
        return cb(false, 429, 'too many connections from this client');
      }
      if (!takeConnectToken(key)) {
        st.connectionsRejected++;
        st.drops.clientLimit++;
        return cb(false, 429, 'reconnecting too fast');
      }
      cb(true);
    },
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => {
      wss.off('listening', onListening);
      reject(err);
    };
    const onListening = (): void => {
      wss.off('error', onError);
      resolve();
    };
    wss.once('error', onError);
    wss.once('listening', onListening);
  });
  wss.on('error', (err) => log(`server error: ${err.message}`));
  if (!authorize) {
    (opts.log ?? ((m: string) => console.warn(m)))(
      'signalling: no authorize hook: anyone who knows a room name can join it and pick any free peer id (dev mode). Pass authorize (e.g. createTokenAuthorizer) in production.',
    );
  }

  const port = (wss.address() as AddressInfo).port;
  const url = `ws://${host.includes(':') ? `[${host}]` : host}:${port}`;

  function send(conn: Conn, msg: ServerMessage): boolean {
    if (conn.ws.readyState !== WebSocket.OPEN) return false;
    try {
      conn.ws.send(encodeMessage(msg));
      return true;
    } catch (err) {
      log(`send failed: ${(err as Error).message}`);
      return false;
    }
  }

  const dropKey: Record<SignallingErrorCode, keyof SignallingServerStats['drops']> = {
    'bad-json': 'badJson',
    'too-large': 'tooLarge',
    'bad-message': 'badMessage',
    'room-full': 'roomFull',
    'unknown-peer': 'unknownPeer',
    'not-joined': 'notJoined',
    'rate-limited': 'rateLimited',
    unauthorized: 'unauthorized',
    'peer-id-taken': 'peerIdTaken',
    'client-limit': 'clientLimit',
  };

  function sendError(conn: Conn, code: SignallingErrorCode, message: string): void {
    st.drops[dropKey[code]]++;
    if (send(conn, { type: 'error', code, message })) st.errorsSent++;
  }

  function armJoinTimer(conn: Conn): void {
    if (conn.joinTimer) clearTimeout(conn.joinTimer);
    conn.joinTimer = undefined;
    if (joinTimeoutMs <= 0) return;
    conn.joinTimer = setTimeout(() => {
      guard('join timeout', () => {
        if (!conn.room) conn.ws.close(1008, 'join timeout');
      });
    }, joinTimeoutMs);
    conn.joinTimer.unref?.();
  }

  function leaveRoom(conn: Conn): void {
    const room = conn.room;
    const peerId = conn.peerId;
    conn.room = undefined;
    conn.peerId = undefined;
    if (!room || peerId === undefined) return;
    if (room.peers.get(peerId) === conn) room.peers.delete(peerId);
    st.peers--;
    if (room.peers.size === 0) {
      rooms.delete(room.name);
      st.rooms = rooms.size;
      return;
    }
    for (const other of room.peers.values()) send(other, { type: 'peer-left', peerId });
  }

  function newPeerId(room: Room): string {
    for (;;) {
      const id = randomBytes(6).toString('base64url');
      if (!room.peers.has(id)) return id;
    }
  }

  /** Why `conn` may not enter room `name` now (capacity and per-client bounds), or undefined. */
  function joinBlocked(conn: Conn, name: string): { code: SignallingErrorCode; message: string } | undefined {
    const room = rooms.get(name);
    if (room && room.peers.size >= maxRoomSize) return { code: 'room-full', message: `room has ${maxRoomSize} peers already` };
    if (!room && rooms.size >= maxRooms) return { code: 'room-full', message: 'server room limit reached' };
    const mine = new Set<string>();
    for (const c of conn.client.conns) if (c.room) mine.add(c.room.name);
    if (!mine.has(name) && mine.size >= perClientRooms) {
      return { code: 'client-limit', message: `this client is in ${perClientRooms} rooms already` };
    }
    return undefined;
  }

  function onJoin(conn: Conn, msg: JoinMessage): void {
    if (conn.room || conn.joining) return sendError(conn, 'bad-message', 'already joined; send leave first');
    const blocked = joinBlocked(conn, msg.room);
    if (blocked) return sendError(conn, blocked.code, blocked.message);
    if (!authorize) return admit(conn, msg.room, msg.peerId);
    conn.joining = true;
    const ctx: AuthorizeContext = { room: msg.room };
    if (msg.peerId !== undefined) ctx.peerId = msg.peerId;
    if (msg.token !== undefined) ctx.token = msg.token;
    const refuse = (reason: string): void => {
      conn.joining = false;
      sendError(conn, 'unauthorized', `join refused: ${reason}`);
      conn.ws.close(1008, 'unauthorized');
    };
    let pending: AuthorizeResult | Promise<AuthorizeResult>;
    try {
      pending = authorize(conn.req, ctx);
    } catch (err) {
      log(`authorize threw: ${(err as Error)?.message ?? String(err)}`);
      return refuse('authorization failed');
    }
    Promise.resolve(pending).then(
      (res) =>
        guard('authorize', () => {
          if (conn.ws.readyState !== WebSocket.OPEN) return;
          if (res === true) res = { ok: true };
          if (res === false || typeof res !== 'object' || res === null || res.ok !== true) {
            const reason = typeof res === 'object' && res !== null && res.ok === false && typeof res.reason === 'string' ? res.reason : 'not authorized';
            return refuse(reason.slice(0, 200));
          }
          if (res.peerId !== undefined && !isValidId(res.peerId)) {
            log('authorize returned an invalid peerId; join refused');
            return refuse('authorization failed');
          }
          conn.joining = false;
          // State may have changed while authorizing: check the bounds again.
          const again = joinBlocked(conn, msg.room);
          if (again) return sendError(conn, again.code, again.message);
          admit(conn, msg.room, res.peerId ?? msg.peerId);
        }),
      (err: unknown) =>
        guard('authorize', () => {
          log(`authorize rejected: ${(err as Error)?.message ?? String(err)}`);
          if (conn.ws.readyState === WebSocket.OPEN) refuse('authorization failed');
        }),
    );
  }

  /** Enter the room with `claimed` (vouched or client-chosen) or a fresh id. */
  function admit(conn: Conn, name: string, claimed: string | undefined): void {
    let room = rooms.get(name);
    if (room && claimed !== undefined && room.peers.has(claimed)) {
      return sendError(conn, 'peer-id-taken', 'peerId is held by another connection in this room');
    }
    if (!room) {
      room = { name, peers: new Map() };
      rooms.set(room.name, room);
      st.rooms = rooms.size;
    }
    const peerId = claimed ?? newPeerId(room);
    const others = [...room.peers.keys()];
    room.peers.set(peerId, conn);
    conn.room = room;
    conn.peerId = peerId;
    st.peers++;
    if (conn.joinTimer) clearTimeout(conn.joinTimer);
    conn.joinTimer = undefined;
    send(conn, { type: 'joined', peerId, peers: others });
    for (const other of room.peers.values()) {
      if (other !== conn) send(other, { type: 'peer-joined', peerId });
    }
  }

  function onSignal(conn: Conn, msg: ClientSignalMessage): void {
    const room = conn.room;
    const from = conn.peerId;
    if (!room || from === undefined) return sendError(conn, 'not-joined', 'join a room before signalling');
    const target = room.peers.get(msg.to);
    if (!target || target === conn) return sendError(conn, 'unknown-peer', 'no such peer in this room');
    let data: unknown = msg.data;
    if (rewrite) {
      try {
        data = rewrite({ room: room.name, from, to: msg.to, pathId: msg.pathId, data: msg.data });
      } catch (err) {
        st.drops.rewriteDropped++;
        log(`rewriteSignal threw: ${(err as Error)?.message ?? String(err)}`);
        return;
      }
      if (data === null || data === undefined) {
        st.drops.rewriteDropped++;
        return;
      }
      if (typeof data !== 'object' || Array.isArray(data)) {
        st.drops.rewriteDropped++;
        log('rewriteSignal returned a non-object; dropped');
        return;
      }
    }
    const text = encodeMessage({ type: 'signal', from, pathId: msg.pathId, data: data as Record<string, unknown> });
    if (utf8Length(text, MAX_SIGNALLING_MESSAGE_BYTES) > MAX_SIGNALLING_MESSAGE_BYTES) {
      st.drops.rewriteDropped++;
      log('forwarded signal would exceed the size limit; dropped');
      return;
    }
    if (target.ws.readyState !== WebSocket.OPEN) return;
    if (target.ws.bufferedAmount > maxBufferedBytes) {
      st.drops.backpressure++;
      return;
    }
    target.ws.send(text);
    st.signalsForwarded++;
  }

  function refill(b: Bucket, limit: { burst: number; perSecond: number }, now: number): void {
    b.tokens = Math.min(limit.burst, b.tokens + ((now - b.lastRefillMs) / 1000) * limit.perSecond);
    b.lastRefillMs = now;
  }

  /**
   * Per-connection and per-client token buckets; true when the message may be
   * processed. Drops are counted in a fixed window that a granted token does
   * not reset (a flood at any rate above the refill keeps dropping), and a
   * connection with more than FLOOD_FACTOR * burst drops in the window is closed.
   */
  function takeToken(conn: Conn): boolean {
    const now = performance.now();
    refill(conn.bucket, rateLimit, now);
    refill(conn.client.bucket, clientRate, now);
    if (conn.bucket.tokens >= 1 && conn.client.bucket.tokens >= 1) {
      conn.bucket.tokens -= 1;
      conn.client.bucket.tokens -= 1;
      conn.limited = false;
      return true;
    }
    if (!conn.limited) {
      conn.limited = true;
      sendError(conn, 'rate-limited', 'too many messages; slow down');
    } else st.drops.rateLimited++;
    if (now - conn.floodWindowMs > FLOOD_WINDOW_MS) {
      conn.floodWindowMs = now;
      conn.floodDrops = 0;
    }
    if (++conn.floodDrops > FLOOD_FACTOR * rateLimit.burst && conn.ws.readyState === WebSocket.OPEN) {
      st.floodCloses++;
      log(`closing connection ${conn.serial}: sustained flooding`);
      conn.ws.close(1008, 'rate limit');
    }
    return false;
  }

  function onMessage(conn: Conn, data: RawData, isBinary: boolean): void {
    st.messagesIn++;
    if (!takeToken(conn)) return;
    if (rawLength(data) > MAX_SIGNALLING_MESSAGE_BYTES) {
      return sendError(conn, 'too-large', `message larger than ${MAX_SIGNALLING_MESSAGE_BYTES} bytes`);
    }
    const parsed = parseClientMessage(isBinary ? '' : rawToString(data), isBinary);
    if (!parsed.ok) return sendError(conn, parsed.code, parsed.message);
    const msg = parsed.value;
    switch (msg.type) {
      case 'join':
        return onJoin(conn, msg);
      case 'signal':
        return onSignal(conn, msg);
      case 'leave':
        if (!conn.room) return sendError(conn, 'not-joined', 'not in a room');
        leaveRoom(conn);
        armJoinTimer(conn); // an idle socket outside any room is closed again after joinTimeoutMs
        return;
    }
  }

  function guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      st.drops.internal++;
      log(`internal error in ${what}: ${(err as Error)?.stack ?? String(err)}`);
    }
  }

  wss.on('connection', (ws, req) => {
    guard('connection', () => {
      const key = keyOf(req);
      let client = clients.get(key);
      // verifyClient checked these; check again, other upgrades may have completed meanwhile.
      if (closed || conns.size >= maxConnections || (client !== undefined && client.conns.size >= perClientConns)) {
        st.connectionsRejected++;
        ws.close(1013, 'server full');
        return;
      }
      if (client === undefined) {
        client = { key, conns: new Set(), bucket: { tokens: clientRate.burst, lastRefillMs: performance.now() } };
        clients.set(key, client);
        st.clients = clients.size;
      }
      const now = performance.now();
      const conn: Conn = {
        ws,
        req,
        client,
        serial: ++serial,
        peerId: undefined,
        room: undefined,
        joining: false,
        bucket: { tokens: rateLimit.burst, lastRefillMs: now },
        limited: false,
        floodDrops: 0,
        floodWindowMs: now,
        alive: true,
        joinTimer: undefined,
      };
      conns.add(conn);
      client.conns.add(conn);
      st.connections = conns.size;
      armJoinTimer(conn);
      ws.on('message', (data, isBinary) => guard('message', () => onMessage(conn, data, isBinary)));
      ws.on('pong', () => {
        conn.alive = true;
      });
      ws.on('error', (err) => log(`socket ${conn.serial} error: ${err.message}`));
      ws.on('close', () => {
        guard('close', () => {
          if (conn.joinTimer) clearTimeout(conn.joinTimer);
          leaveRoom(conn);
          conns.delete(conn);
          conn.client.conns.delete(conn);
          if (conn.client.conns.size === 0 && clients.get(conn.client.key) === conn.client) clients.delete(conn.client.key);
          st.connections = conns.size;
          st.clients = clients.size;
        });
      });
    });
  });

  const pingTimer =
    pingIntervalMs > 0
      ? setInterval(() => {
          for (const conn of conns) {
            guard('ping', () => {
              if (!conn.alive) {
                conn.ws.terminate();
                return;
              }
              conn.alive = false;
              conn.ws.ping();
            });
          }
        }, pingIntervalMs)
      : undefined;
  pingTimer?.unref?.();

  let closing: Promise<void> | undefined;
  return {
    port,
    url,
    stats: () => ({ ...st, drops: { ...st.drops } }),
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        closed = true;
        if (pingTimer) clearInterval(pingTimer);
        for (const conn of conns) {
          if (conn.joinTimer) clearTimeout(conn.joinTimer);
          conn.ws.terminate();
        }
        wss.close(() => resolve());
      });
      return closing;
    },
  };
}
