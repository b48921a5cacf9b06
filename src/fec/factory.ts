/**
 * The FEC policy registry: one name -> factory table used by `SenderEngine`,
 * `MultipathCall`, the simulator and every CLI (`--fec`, `@fec` in
 * `--compare`). The default 'path' and 'none' are registered from the start;
 * the others are opt-in entries in src/strategies.ts
 * (`multipath-rtc/strategies`) so that a call's bundle holds only the policy
 * it uses. Adding a policy = its own file implementing {@link FecPolicy}, one
 * entry in src/strategies.ts, its tests; an app adds its own with
 * {@link registerFecPolicy}.
 *
 * A policy decides how much repair to send and for which packets; the code
 * itself (XOR parity, src/fec/xor.ts) is the one the wire format carries.
 */
import { Registry } from '../core/registry.js';
import { FecError } from './errors.js';
import { NoneFecPolicy } from './none-policy.js';
import { PathFecPolicy, type PathFecPolicyOptions } from './path-policy.js';
import type { FecPolicy, FecPolicyName } from './types.js';
import type { WebRtcTableFecPolicy, WebRtcTableFecPolicyOptions } from './webrtc-table-policy.js';

export type FecPolicyOptions = PathFecPolicyOptions | WebRtcTableFecPolicyOptions;

/** One registry entry. */
export interface FecPolicyEntry {
  /** One line for `--help` texts and docs. */
  readonly summary: string;
  /**
   * Build a fresh instance (policies keep per-path state).
   * @throws FecError `invalid-option` for bad options.
   */
  create(opts?: FecPolicyOptions): FecPolicy;
}

/** A registry entry with its name: what src/strategies.ts exports and {@link registerFecPolicy} takes alone. */
export interface NamedFecPolicyEntry extends FecPolicyEntry {
  readonly name: string;
}

/** Converge §4.3 path-specific FEC: the default, always registered. */
export const pathFec = {
  name: 'path',
  summary: 'Converge §4.3 path-specific FEC, sized from each path’s loss and the receiver’s FEC feedback',
  create: (o?: FecPolicyOptions) => new PathFecPolicy(o as PathFecPolicyOptions | undefined),
} as const satisfies NamedFecPolicyEntry;

/** No FEC (NACK only), always registered. */
export const noFec = { name: 'none', summary: 'no FEC (NACK only)', create: () => new NoneFecPolicy() } as const satisfies NamedFecPolicyEntry;

/** The policies registered from the start (the others: src/strategies.ts). */
export const BUILTIN_FEC_POLICIES: Readonly<Record<string, FecPolicyEntry>> = { path: pathFec, none: noFec };

/** What an FEC option takes: a registered name, an entry (one instance per call and peer) or, for one engine, an instance. */
export type FecPolicySpec = FecPolicyName | FecPolicyEntry | FecPolicy;

const registry = new Registry<FecPolicyEntry>('FEC policy', BUILTIN_FEC_POLICIES, (name, reason) => FecError.invalidOption('name', name, reason));

/**
 * Add a policy for every later {@link createFecPolicy} call:
 * `registerFecPolicy(webrtcTableFec)` with an entry of src/strategies.ts, or
 * `registerFecPolicy(name, entry)`. The same entry again is a no-op.
 * @throws FecError `invalid-option` when the name is not `[a-z0-9-]+` or taken by another entry.
 */
export function registerFecPolicy(entry: NamedFecPolicyEntry): void;
export function registerFecPolicy(name: string, entry: FecPolicyEntry): void;
export function registerFecPolicy(a: string | NamedFecPolicyEntry, entry?: FecPolicyEntry): void {
  if (typeof a === 'string') registry.register(a, entry as FecPolicyEntry);
  else registry.register(a?.name, a);
}

/** Every registered name (built-ins first). */
export function fecPolicyNames(): string[] {
  return registry.names();
}

/** Type guard for user input (CLI flags, URL parameters): a registered name. */
export function isFecPolicyName(x: unknown): x is FecPolicyName {
  return registry.has(x);
}

/**
 * - `'path'`: Converge §4.3 path-specific FEC ({@link PathFecPolicy}).
 * - `'webrtc-table'`: libwebrtc media_opt_util.cc table FEC ({@link WebRtcTableFecPolicy}).
 * - `'none'`: never any FEC ({@link NoneFecPolicy}).
 * - any name added with {@link registerFecPolicy} ('webrtc-table' once
 *   `webrtcTableFec` of src/strategies.ts is registered).
 * @throws FecError `unknown-policy` for a name not registered, `invalid-option` for bad options.
 */
export function createFecPolicy(name: 'path', opts?: PathFecPolicyOptions): PathFecPolicy;
export function createFecPolicy(name: 'webrtc-table', opts?: WebRtcTableFecPolicyOptions): WebRtcTableFecPolicy;
export function createFecPolicy(name: 'none', opts?: Record<string, never>): NoneFecPolicy;
export function createFecPolicy(name: FecPolicyName, opts?: FecPolicyOptions): FecPolicy;
export function createFecPolicy(name: FecPolicyName, opts?: FecPolicyOptions): FecPolicy {
  const entry = registry.get(name);
  if (!entry) throw FecError.unknownPolicy(name, registry.names());
  return entry.create(opts);
}

/**
 * The policy `spec` stands for: the instance itself, a fresh one from an
 * entry, or {@link createFecPolicy} of a name.
 * @throws FecError as {@link createFecPolicy}, and `invalid-option` for a value that is none of these.
 */
export function resolveFecPolicy(spec: FecPolicySpec): FecPolicy {
  if (typeof spec === 'string') return createFecPolicy(spec);
  if (spec && typeof (spec as FecPolicyEntry).create === 'function') return (spec as FecPolicyEntry).create();
  if (spec && typeof (spec as FecPolicy).fecCount === 'function') return spec as FecPolicy;
  throw FecError.invalidOption('fec', spec, 'a registered name, an FEC policy entry (create) or an FecPolicy');
}
