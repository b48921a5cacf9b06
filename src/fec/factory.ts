/** Build an FEC rate policy by name (see types.ts `FecPolicyName`). */
import { FecError } from './errors.js';
import { NoneFecPolicy } from './none-policy.js';
import { PathFecPolicy, type PathFecPolicyOptions } from './path-policy.js';
import type { FecPolicy, FecPolicyName } from './types.js';
import { WebRtcTableFecPolicy, type WebRtcTableFecPolicyOptions } from './webrtc-table-policy.js';

export type FecPolicyOptions = PathFecPolicyOptions | WebRtcTableFecPolicyOptions;

/**
 * - `'path'`: Converge §4.3 path-specific FEC ({@link PathFecPolicy}).
 * - `'webrtc-table'`: libwebrtc media_opt_util.cc table FEC ({@link WebRtcTableFecPolicy}).
 * - `'none'`: never any FEC ({@link NoneFecPolicy}).
 * @throws FecError `unknown-policy` for another name, `invalid-option` for bad options.
 */
export function createFecPolicy(name: 'path', opts?: PathFecPolicyOptions): PathFecPolicy;
export function createFecPolicy(name: 'webrtc-table', opts?: WebRtcTableFecPolicyOptions): WebRtcTableFecPolicy;
export function createFecPolicy(name: 'none', opts?: Record<string, never>): NoneFecPolicy;
export function createFecPolicy(name: FecPolicyName, opts?: FecPolicyOptions): FecPolicy;
export function createFecPolicy(name: FecPolicyName, opts?: FecPolicyOptions): FecPolicy {
  switch (name) {
    case 'path':
      return new PathFecPolicy(opts as PathFecPolicyOptions | undefined);
    case 'webrtc-table':
      return new WebRtcTableFecPolicy(opts as WebRtcTableFecPolicyOptions | undefined);
    case 'none':
      return new NoneFecPolicy();
    default:
      throw FecError.unknownPolicy(name);
  }
}
