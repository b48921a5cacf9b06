/**
 * Signalling wire protocol: JSON text messages over one WebSocket, shared by
 * the Node server ({@link ./server.ts}) and the browser/Node client
 * ({@link ./client.ts}). Browser-safe: no Node APIs.
 *
 * Client -> server:
 * - `{type:'join', room, peerId?, token?}` enter a room (room and peerId: 1-64 chars
 *   `[A-Za-z0-9_-]`; token: an opaque credential of at most {@link MAX_TOKEN_CHARS}
 *   chars for the server's `authorize` hook, e.g. a room JWT)
 * - `{type:'signal', to, pathId, data}` forward `data` (a JSON object, opaque to the
 *   server) to peer `to` in the same room, for path `pathId` (0..{@link MAX_PATHS}-1)
 * - `{type:'leave'}` leave the room (the socket stays open; it may join again)
 *
 * Server -> client:
 * - `{type:'joined', peerId, peers}` answer to join: own id and the ids already in the room
 * - `{type:'peer-joined', peerId}` / `{type:'peer-left', peerId}`
 * - `{type:'signal', from, pathId, data}`
 * - `{type:'error', code, message}` the offending message was dropped
 *
 * Every message is at most {@link MAX_SIGNALLING_MESSAGE_BYTES} bytes of UTF-8.
 * Validation never throws: it returns a {@link ValidationResult}.
 */
import { MAX_PATHS } from '../core/types.js';

/** Largest accepted message, in bytes of UTF-8 (64 KiB). */
export const MAX_SIGNALLING_MESSAGE_BYTES = 64 * 1024;

/** Longest accepted join token, in chars. */
export const MAX_TOKEN_CHARS = 4096;

/** Room names and peer ids: 1-64 chars of `[A-Za-z0-9_-]`. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Error codes the server sends (and the client reports for local problems). */
export type SignallingErrorCode = 'bad-json' | 'too-large' | 'bad-message' | 'room-full' | 'unknown-peer' | 'not-joined' | 'rate-limited' | 'unauthorized' | 'peer-id-taken' | 'client-limit';

export const SIGNALLING_ERROR_CODES: readonly SignallingErrorCode[] = [
  'bad-json',
  'too-large',
  'bad-message',
  'room-full',
  'unknown-peer',
  'not-joined',
  'rate-limited',
  'unauthorized',
  'peer-id-taken',
  'client-limit',
];

/** Opaque signal payload (simple-peer's offer/answer/candidate object). */
export type SignalData = Record<string, unknown>;

export interface JoinMessage {
  type: 'join';
  room: string;
  peerId?: string;
  /** Credential for the server's `authorize` hook (opaque to the protocol). */
  token?: string;
}

export interface ClientSignalMessage {
  type: 'signal';
  to: string;
  pathId: number;
  data: SignalData;
}

export interface LeaveMessage {
  type: 'leave';
}

export type ClientMessage = JoinMessage | ClientSignalMessage | LeaveMessage;

export interface JoinedMessage {
  type: 'joined';
  peerId: string;
  peers: string[];
}

export interface PeerJoinedMessage {
  type: 'peer-joined';
  peerId: string;
}

export interface PeerLeftMessage {
  type: 'peer-left';
  peerId: string;
}

export interface ServerSignalMessage {
  type: 'signal';
  from: string;
  pathId: number;
  data: SignalData;
}

export interface ErrorMessage {
  type: 'error';
  code: SignallingErrorCode;
  message: string;
}

export type ServerMessage = JoinedMessage | PeerJoinedMessage | PeerLeftMessage | ServerSignalMessage | ErrorMessage;

/** Outcome of validation: the typed message, or an error code and a human-readable reason. */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; code: SignallingErrorCode; message: string };

function fail<T>(code: SignallingErrorCode, message: string): ValidationResult<T> {
  return { ok: false, code, message };
}

/** True for a room name / peer id matching {@link ID_PATTERN}. */
export function isValidId(v: unknown): v is string {
  return typeof v === 'string' && ID_PATTERN.test(v);
}

/** True for an integer path id in [0, MAX_PATHS). */
export function isValidPathId(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < MAX_PATHS;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * UTF-8 length of `s` in bytes. When `s.length` alone already exceeds `limit`
 * it returns `s.length` without scanning (UTF-8 length >= UTF-16 length), so
 * huge strings cost O(1).
 */
export function utf8Length(s: string, limit = Infinity): number {
  if (s.length > limit) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/**
 * Parse raw text as JSON with the size bound. Never throws.
 * @param raw message text (a binary frame must be rejected by the caller, see {@link parseClientMessage}).
 */
export function parseJson(raw: string): ValidationResult<unknown> {
  if (utf8Length(raw, MAX_SIGNALLING_MESSAGE_BYTES) > MAX_SIGNALLING_MESSAGE_BYTES) {
    return fail('too-large', `message larger than ${MAX_SIGNALLING_MESSAGE_BYTES} bytes`);
  }
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch {
    return fail('bad-json', 'message is not valid JSON');
  }
}

/** Validate a decoded client->server message. Never throws. */
export function validateClientMessage(obj: unknown): ValidationResult<ClientMessage> {
  if (!isPlainObject(obj)) return fail('bad-message', 'message must be a JSON object');
  switch (obj.type) {
    case 'join': {
      if (!isValidId(obj.room)) return fail('bad-message', 'join.room must be 1-64 chars [A-Za-z0-9_-]');
      if (obj.peerId !== undefined && !isValidId(obj.peerId)) {
        return fail('bad-message', 'join.peerId must be 1-64 chars [A-Za-z0-9_-]');
      }
      if (obj.token !== undefined && (typeof obj.token !== 'string' || obj.token.length === 0 || obj.token.length > MAX_TOKEN_CHARS)) {
        return fail('bad-message', `join.token must be a string of 1-${MAX_TOKEN_CHARS} chars`);
      }
      const value: JoinMessage = { type: 'join', room: obj.room };
      if (obj.peerId !== undefined) value.peerId = obj.peerId as string;
      if (obj.token !== undefined) value.token = obj.token as string;
      return { ok: true, value };
    }
    case 'signal': {
      if (!isValidId(obj.to)) return fail('bad-message', 'signal.to must be a peer id');
      if (!isValidPathId(obj.pathId)) return fail('bad-message', `signal.pathId must be an integer 0..${MAX_PATHS - 1}`);
      if (!isPlainObject(obj.data)) return fail('bad-message', 'signal.data must be a JSON object');
      return { ok: true, value: { type: 'signal', to: obj.to, pathId: obj.pathId, data: obj.data } };
    }
    case 'leave':
      return { ok: true, value: { type: 'leave' } };
    default:
      return fail('bad-message', `unknown message type ${JSON.stringify(String(obj.type)).slice(0, 80)}`);
  }
}

/** Validate a decoded server->client message. Never throws. */
export function validateServerMessage(obj: unknown): ValidationResult<ServerMessage> {
  if (!isPlainObject(obj)) return fail('bad-message', 'message must be a JSON object');
  switch (obj.type) {
    case 'joined': {
      if (!isValidId(obj.peerId)) return fail('bad-message', 'joined.peerId must be a peer id');
      if (!Array.isArray(obj.peers) || !obj.peers.every(isValidId)) {
        return fail('bad-message', 'joined.peers must be an array of peer ids');
      }
      return { ok: true, value: { type: 'joined', peerId: obj.peerId, peers: [...(obj.peers as string[])] } };
    }
    case 'peer-joined':
    case 'peer-left': {
      if (!isValidId(obj.peerId)) return fail('bad-message', `${obj.type}.peerId must be a peer id`);
      return { ok: true, value: { type: obj.type, peerId: obj.peerId } };
    }
    case 'signal': {
      if (!isValidId(obj.from)) return fail('bad-message', 'signal.from must be a peer id');
      if (!isValidPathId(obj.pathId)) return fail('bad-message', `signal.pathId must be an integer 0..${MAX_PATHS - 1}`);
      if (!isPlainObject(obj.data)) return fail('bad-message', 'signal.data must be a JSON object');
      return { ok: true, value: { type: 'signal', from: obj.from, pathId: obj.pathId, data: obj.data } };
    }
    case 'error': {
      const code = obj.code as SignallingErrorCode;
      if (!SIGNALLING_ERROR_CODES.includes(code)) return fail('bad-message', 'error.code is not a known code');
      const message = typeof obj.message === 'string' ? obj.message : '';
      return { ok: true, value: { type: 'error', code, message } };
    }
    default:
      return fail('bad-message', `unknown message type ${JSON.stringify(String(obj.type)).slice(0, 80)}`);
  }
}

/**
 * Parse and validate one client->server frame. `raw` is the text of a text
 * frame; pass `binary: true` for binary frames (always rejected as bad-message).
 */
export function parseClientMessage(raw: string, binary = false): ValidationResult<ClientMessage> {
  if (binary) return fail('bad-message', 'binary frames are not accepted; send JSON text');
  const json = parseJson(raw);
  if (!json.ok) return json;
  return validateClientMessage(json.value);
}

/** Parse and validate one server->client text frame. Never throws. */
export function parseServerMessage(raw: string): ValidationResult<ServerMessage> {
  const json = parseJson(raw);
  if (!json.ok) return json;
  return validateServerMessage(json.value);
}

/** Encode a message as JSON text (no size check; see {@link MAX_SIGNALLING_MESSAGE_BYTES}). */
export function encodeMessage(msg: ClientMessage | ServerMessage): string {
  return JSON.stringify(msg);
}
