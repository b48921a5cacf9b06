/**
 * Errors of the FEC folder. Only configuration / programming misuse throws;
 * bad data on the wire (lying FEC packets, malformed media) is counted and
 * dropped by {@link FecDecoder} instead.
 */

/** Stable machine-readable reason of a {@link FecError}. */
export type FecErrorCode = 'invalid-option' | 'invalid-argument' | 'unknown-policy' | 'unknown-code';

export class FecError extends Error {
  readonly code: FecErrorCode;

  private constructor(code: FecErrorCode, message: string) {
    super(message);
    this.name = 'FecError';
    this.code = code;
  }

  /** A constructor option is out of range / of the wrong type. */
  static invalidOption(name: string, value: unknown, expected: string): FecError {
    return new FecError('invalid-option', `FEC option ${name}=${String(value)} is invalid: expected ${expected}`);
  }

  /** A function argument produced by our own code is invalid (a caller bug). */
  static invalidArgument(name: string, value: unknown, expected: string): FecError {
    return new FecError('invalid-argument', `FEC argument ${name}=${String(value)} is invalid: expected ${expected}`);
  }

  /** {@link createFecPolicy} got a name it does not know. */
  static unknownPolicy(name: unknown, known: readonly string[]): FecError {
    return new FecError(
      'unknown-policy',
      `unknown FEC policy "${String(name)}" (registered: ${known.join(', ')}; the others shipped are opt-in: import them from 'multipath-rtc/strategies' and pass one, or register it with registerFecPolicy first)`,
    );
  }

  /** `fecCode` (src/fec/codes.ts) got a name it does not know. */
  static unknownCode(name: unknown, known: readonly string[]): FecError {
    return new FecError('unknown-code', `unknown FEC code "${String(name)}" (expected one of ${known.join(', ')})`);
  }
}

/** @internal Validate a numeric option; returns the default when undefined. */
export function numOption(name: string, value: number | undefined, def: number, min: number, max: number, integer = false): number {
  if (value === undefined) return def;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw FecError.invalidOption(name, value, `${integer ? 'an integer' : 'a number'} in [${min}, ${max}]`);
  }
  return value;
}
