/**
 * Room tokens: short-lived HS256 JWTs (RFC 7519, signed and checked with
 * `jose`) that an application server hands to a user it has authenticated,
 * naming the room and, optionally, the peer id the user may take there.
 *
 * ```ts
 * // app server (knows the user):
 * const token = await signRoomToken({ secret, room: 'r1', peerId: 'alice', ttl: 300 });
 * // signalling server:
 * await startSignallingServer({ authorize: createTokenAuthorizer({ secret }) });
 * // browser:
 * new MultipathCall({ signallingUrl, room: 'r1', token });
 * ```
 *
 * Claims: `room` (the room name), `sub` (the peer id; absent: the server
 * assigns a random one), `exp` / `iat` (from `ttl`), optional `iss` / `aud`.
 * Node and browser safe (jose uses WebCrypto), but sign tokens on a server:
 * whoever holds the secret can enter every room.
 */
import { SignJWT, jwtVerify } from 'jose';
import { isValidId } from './protocol.js';
import type { AuthorizeContext, SignallingAuthorizer } from './authorize.js';

/** Shortest accepted HMAC secret, bytes (RFC 7518 §3.2: a key at least as long as the hash output). */
export const MIN_SECRET_BYTES = 32;

export interface SignRoomTokenOptions {
  /** HMAC secret shared with the signalling server (>= 32 bytes; a string is taken as UTF-8). */
  secret: string | Uint8Array;
  room: string;
  /** Peer id the holder takes in the room (default: the server assigns one). */
  peerId?: string;
  /** Lifetime, seconds (default 600). The token only needs to live until the join. */
  ttl?: number;
  issuer?: string;
  audience?: string;
}

export interface TokenAuthorizerOptions {
  /** HMAC secret (>= 32 bytes; a string is taken as UTF-8). */
  secret: string | Uint8Array;
  /** Required `iss` claim, when set. */
  issuer?: string;
  /** Required `aud` claim, when set. */
  audience?: string;
  /** Clock skew tolerated on `exp` / `nbf`, seconds (default 5). */
  clockToleranceSec?: number;
}

function keyOf(secret: string | Uint8Array): Uint8Array {
  const key = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  if (!(key instanceof Uint8Array) || key.length < MIN_SECRET_BYTES) {
    throw new RangeError(`room token secret must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  return key;
}

/**
 * Sign a room token (HS256 JWT).
 * @throws RangeError for a short secret, an invalid room / peer id or a ttl not in (0, 1 day].
 */
export async function signRoomToken(opts: SignRoomTokenOptions): Promise<string> {
  const key = keyOf(opts.secret);
  if (!isValidId(opts.room)) throw new RangeError('signRoomToken: room must be 1-64 chars [A-Za-z0-9_-]');
  if (opts.peerId !== undefined && !isValidId(opts.peerId)) throw new RangeError('signRoomToken: peerId must be 1-64 chars [A-Za-z0-9_-]');
  const ttl = opts.ttl ?? 600;
  if (!Number.isFinite(ttl) || ttl <= 0 || ttl > 86_400) throw new RangeError('signRoomToken: ttl must be in (0, 86400] seconds');
  let jwt = new SignJWT({ room: opts.room })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(`${Math.ceil(ttl)}s`);
  if (opts.peerId !== undefined) jwt = jwt.setSubject(opts.peerId);
  if (opts.issuer !== undefined) jwt = jwt.setIssuer(opts.issuer);
  if (opts.audience !== undefined) jwt = jwt.setAudience(opts.audience);
  return jwt.sign(key);
}

/**
 * The default `authorize` hook: accepts a join whose token is a valid,
 * unexpired HS256 JWT for this room. Its `sub` becomes the peer id (a join
 * claiming another id is refused); without `sub` the server assigns one.
 * Refusals carry a reason (bad signature, expired, wrong room, ...).
 * @throws RangeError for a short secret (at creation).
 */
export function createTokenAuthorizer(opts: TokenAuthorizerOptions): SignallingAuthorizer {
  const key = keyOf(opts.secret);
  const tolerance = opts.clockToleranceSec ?? 5;
  return async (_request: unknown, ctx: AuthorizeContext) => {
    if (ctx.token === undefined) return { ok: false, reason: 'a room token is required' };
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(ctx.token, key, {
        algorithms: ['HS256'],
        clockTolerance: tolerance,
        ...(opts.issuer !== undefined ? { issuer: opts.issuer } : {}),
        ...(opts.audience !== undefined ? { audience: opts.audience } : {}),
      }));
    } catch (err) {
      return { ok: false, reason: `invalid token: ${(err as { code?: string }).code ?? 'unverifiable'}` };
    }
    if (payload.room !== ctx.room) return { ok: false, reason: 'token is for another room' };
    const sub = payload.sub;
    if (sub === undefined) return ctx.peerId === undefined ? { ok: true } : { ok: false, reason: 'token names no peer id; do not claim one' };
    if (!isValidId(sub)) return { ok: false, reason: 'token subject is not a valid peer id' };
    if (ctx.peerId !== undefined && ctx.peerId !== sub) return { ok: false, reason: 'peer id differs from the token subject' };
    return { ok: true, peerId: sub };
  };
}
