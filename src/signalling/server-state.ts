/**
 * What the signalling server keeps per room, per client (remote address or
 * `clientKey`) and per connection, and the conversions of `ws` message data.
 */
import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket } from 'ws';
import type { Bucket } from './token-bucket.js';

export interface Room {
  name: string;
  peers: Map<string, Conn>;
}

export interface Client {
  key: string;
  conns: Set<Conn>;
  bucket: Bucket;
}

export interface Conn {
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

/** Bytes of a `ws` message (a Buffer, an ArrayBuffer or fragments). */
export function rawLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.byteLength, 0);
  return data.byteLength;
}

/** A `ws` message as UTF-8 text. */
export function rawToString(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
