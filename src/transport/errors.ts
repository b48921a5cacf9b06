/**
 * Transport errors with a stable `code`. simple-peer's codes
 * (`ERR_ICE_CONNECTION_FAILURE`, `ERR_CONNECTION_FAILURE`,
 * `ERR_SET_REMOTE_DESCRIPTION`, `ERR_DATA_CHANNEL`, `ERR_WEBRTC_SUPPORT`, ...)
 * are passed through unchanged; ours start with `ERR_PATH_`.
 */
import type { PathTransportErrorInfo } from './types.js';

export class PathTransportError extends Error implements PathTransportErrorInfo {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'PathTransportError';
    this.code = code;
  }

  /** Wrap anything thrown or emitted by simple-peer/WebRTC, keeping its `code` when present. */
  static from(err: unknown, fallbackCode = 'ERR_PATH_UNKNOWN'): PathTransportError {
    if (err instanceof PathTransportError) return err;
    const e = err as { code?: unknown; message?: unknown } | undefined;
    const code = typeof e?.code === 'string' && e.code ? e.code : fallbackCode;
    const message = typeof e?.message === 'string' ? e.message : String(err);
    return new PathTransportError(code, message);
  }

  /** A signal from the remote side was not an offer/answer/candidate object; it was dropped. */
  static badSignal(detail: string): PathTransportError {
    return new PathTransportError('ERR_PATH_BAD_SIGNAL', `dropped invalid signal: ${detail}`);
  }

  /** Too many remote signals for one path; later ones are dropped. */
  static tooManySignals(limit: number): PathTransportError {
    return new PathTransportError('ERR_PATH_TOO_MANY_SIGNALS', `more than ${limit} signals received on this path; dropping`);
  }
}
