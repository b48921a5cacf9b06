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
 * client, and a hard frame limit above which `ws` closes the socket (1009).
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import {
  MAX_SIGNALLING_MESSAGE_BYTES,
  encodeMessage,
  parseClientMessage,
  utf8Length,
  type ClientSignalMessage,
  type JoinMessage,
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
  /** Diagnostic log sink (default: silent). */
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

interface Conn {
  ws: WebSocket;
  serial: number;
  peerId: string | undefined;
  room: Room | undefined;
  tokens: number;
  lastRefillMs: number;
  rateDropsInRow: number;
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
};

/** Frames above this are refused by `ws` itself (socket closed with 1009). */
const HARD_MAX_FRAME_BYTES = 2 << 20;

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
  checkInt('port', opts.port ?? 0, 0, 65535);
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
    },
  };

  const wss = new WebSocketServer({
    port: opts.port ?? 0,
    host,
    maxPayload: HARD_MAX_FRAME_BYTES,
    perMessageDeflate: false,
    clientTracking: false,
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
  };

  function sendError(conn: Conn, code: SignallingErrorCode, message: string): void {
    st.drops[dropKey[code]]++;
    if (send(conn, { type: 'error', code, message })) st.errorsSent++;
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

  function onJoin(conn: Conn, msg: JoinMessage): void {
    if (conn.room) return sendError(conn, 'bad-message', 'already joined; send leave first');
    let room = rooms.get(msg.room);
    if (room && room.peers.size >= maxRoomSize) {
      return sendError(conn, 'room-full', `room has ${maxRoomSize} peers already`);
    }
    if (!room && rooms.size >= maxRooms) return sendError(conn, 'room-full', 'server room limit reached');
    if (room && msg.peerId !== undefined && room.peers.has(msg.peerId)) {
      return sendError(conn, 'bad-message', 'peerId already in use in this room');
    }
    if (!room) {
      room = { name: msg.room, peers: new Map() };
      rooms.set(room.name, room);
      st.rooms = rooms.size;
    }
    const peerId = msg.peerId ?? newPeerId(room);
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

  /** Token bucket; true when the message may be processed. */
  function takeToken(conn: Conn): boolean {
    const now = performance.now();
    const elapsedS = (now - conn.lastRefillMs) / 1000;
    conn.lastRefillMs = now;
    conn.tokens = Math.min(rateLimit.burst, conn.tokens + elapsedS * rateLimit.perSecond);
    if (conn.tokens >= 1) {
      conn.tokens -= 1;
      conn.rateDropsInRow = 0;
      return true;
    }
    conn.rateDropsInRow++;
    if (conn.rateDropsInRow === 1) sendError(conn, 'rate-limited', 'too many messages; slow down');
    else st.drops.rateLimited++;
    if (conn.rateDropsInRow > 10 * rateLimit.burst) {
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
        return leaveRoom(conn);
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

  wss.on('connection', (ws) => {
    guard('connection', () => {
      if (closed || conns.size >= maxConnections) {
        st.connectionsRejected++;
        ws.close(1013, 'server full');
        return;
      }
      const conn: Conn = {
        ws,
        serial: ++serial,
        peerId: undefined,
        room: undefined,
        tokens: rateLimit.burst,
        lastRefillMs: performance.now(),
        rateDropsInRow: 0,
        alive: true,
        joinTimer: undefined,
      };
      conns.add(conn);
      st.connections = conns.size;
      if (joinTimeoutMs > 0) {
        conn.joinTimer = setTimeout(() => {
          guard('join timeout', () => {
            if (!conn.room) ws.close(1008, 'join timeout');
          });
        }, joinTimeoutMs);
        conn.joinTimer.unref?.();
      }
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
          st.connections = conns.size;
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
