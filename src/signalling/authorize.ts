/**
 * The contract of the signalling server's `authorize` hook (no Node imports,
 * so browser code may share the types).
 */

/** What a join asks for. */
export interface AuthorizeContext {
  room: string;
  /** Peer id the client claims, if any. */
  peerId?: string;
  /** The join's `token`, if any. */
  token?: string;
}

/**
 * The hook's answer. `true` / `{ ok: true }` admit the join; `peerId` (when
 * given) is the id the server vouches for, overriding any claim; without it a
 * claimed id is kept, else one is assigned. `false` / `{ ok: false, reason }`
 * refuse it (the client gets `unauthorized` and the socket is closed).
 */
export type AuthorizeResult = boolean | { ok: true; peerId?: string } | { ok: false; reason?: string };

/**
 * Decides whether a join may proceed. `request` is the WebSocket upgrade
 * request (Node `http.IncomingMessage`: headers, cookies, remote address).
 * May be async; a throw counts as a refusal.
 */
export type SignallingAuthorizer = (request: unknown, ctx: AuthorizeContext) => AuthorizeResult | Promise<AuthorizeResult>;
