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
 *
 * Options and their defaults: server-options.ts; counters: server-stats.ts;
 * rate limits: token-bucket.ts; per room / client / connection state:
 * server-state.ts.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthorizeContext, AuthorizeResult } from './authorize.js';
import { resolveServerOptions, type SignallingServerOptions } from './server-options.js';
import { DROP_KEY, newServerStats, type SignallingServerStats } from './server-stats.js';
import { type Client, type Conn, type Room, rawLength, rawToString } from './server-state.js';
import { ConnectRateLimiter, fullBucket, refill } from './token-bucket.js';
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

export type { RewriteSignalContext, SignallingServerOptions } from './server-options.js';
export type { SignallingServerStats } from './server-stats.js';

export interface SignallingServer {
  /** Bound TCP port. */
  readonly port: number;
  /** `ws://host:port` to give to clients. */
  readonly url: string;
  /** Close every socket and stop listening. Idempotent. */
  close(): Promise<void>;
  stats(): SignallingServerStats;
}

/** A connection with more than `FLOOD_FACTOR * burst` rate-limited messages within FLOOD_WINDOW_MS is closed (1008). */
const FLOOD_FACTOR = 5;
const FLOOD_WINDOW_MS = 10_000;

/**
 * Start a signalling server.
 * @returns once listening; `port` is the bound port (useful with port 0).
 * @throws RangeError for out-of-range options; rejects if the port cannot be bound.
 */
export async function startSignallingServer(opts: SignallingServerOptions = {}): Promise<SignallingServer> {
  const resolved = resolveServerOptions(opts);
  const {
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
    allowedOrigins,
    authorize,
    clientKey,
    log,
    rewrite,
  } = resolved;

  const rooms = new Map<string, Room>();
  const conns = new Set<Conn>();
  const clients = new Map<string, Client>();
  /** Per-client new-connection buckets; outlive the client's connections. */
  const connectLimiter = new ConnectRateLimiter(resolved.connectRate);
  let serial = 0;
  let closed = false;
  const st = newServerStats();

  const keyOf = (req: IncomingMessage): string => {
    try {
      const k = clientKey(req);
      return typeof k === 'string' && k.length > 0 ? k.slice(0, 256) : 'unknown';
    } catch {
      return 'unknown';
    }
  };

  const wss = new WebSocketServer({
    port: resolved.port,
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
      if (!connectLimiter.take(key, performance.now())) {
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
    resolved.warn('signalling: no authorize hook: anyone who knows a room name can join it and pick any free peer id (dev mode). Pass authorize (e.g. createTokenAuthorizer) in production.');
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

  function sendError(conn: Conn, code: SignallingErrorCode, message: string): void {
    st.drops[DROP_KEY[code]]++;
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
        client = { key, conns: new Set(), bucket: fullBucket(clientRate, performance.now()) };
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
        bucket: fullBucket(rateLimit, now),
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
