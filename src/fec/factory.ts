/**
 * The FEC policy registry: one name -> factory table used by `SenderEngine`,
 * `MultipathCall`, the simulator and every CLI (`--fec`, `@fec` in
 * `--compare`). Adding a policy = its own file implementing
 * {@link FecPolicy}, one line in {@link BUILTIN_FEC_POLICIES}, its tests; an
 * app adds its own with {@link registerFecPolicy}.
 *
 * A policy decides how much repair to send and for which packets; the code
 * itself (XOR parity, src/fec/xor.ts) is the one the wire format carries.
 */
import { Registry } from '../core/registry.js';
import { FecError } from './errors.js';
import { NoneFecPolicy } from './none-policy.js';
import { PathFecPolicy, type PathFecPolicyOptions } from './path-policy.js';
import type { FecPolicy, FecPolicyName } from './types.js';
import { WebRtcTableFecPolicy, type WebRtcTableFecPolicyOptions } from './webrtc-table-policy.js';

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

/** The FEC policies this library ships. */
export const BUILTIN_FEC_POLICIES = {
  path: { summary: 'Converge §4.3 path-specific FEC, sized from each path’s loss and the receiver’s FEC feedback', create: (o) => new PathFecPolicy(o as PathFecPolicyOptions | undefined) },
  'webrtc-table': { summary: 'libwebrtc media_opt_util.cc protection table (loss x rate)', create: (o) => new WebRtcTableFecPolicy(o as WebRtcTableFecPolicyOptions | undefined) },
  none: { summary: 'no FEC (NACK only)', create: () => new NoneFecPolicy() },
} as const satisfies Record<string, FecPolicyEntry>;

/** A built-in policy's name (`FecPolicyName` in types.ts also takes registered ones). */
export type BuiltinFecPolicyName = keyof typeof BUILTIN_FEC_POLICIES;

const registry = new Registry<FecPolicyEntry>('FEC policy', BUILTIN_FEC_POLICIES, (name, reason) => FecError.invalidOption('name', name, reason));

/**
 * Add a policy under `name` for every later {@link createFecPolicy} call.
 * @throws FecError `invalid-option` when `name` is not `[a-z0-9-]+` or already registered.
 */
export function registerFecPolicy(name: string, entry: FecPolicyEntry): void {
  registry.register(name, entry);
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
 * - any name added with {@link registerFecPolicy}.
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
