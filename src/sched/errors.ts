/**
 * Errors thrown by the scheduler folder for configuration misuse (never for
 * bad data: malformed feedback or path snapshots are counted and dropped).
 * Each error carries a stable `code`; build them with the static factories.
 */

/** Stable error codes of {@link SchedError}. */
export type SchedErrorCode = 'unknown-scheduler' | 'missing-single-path' | 'invalid-path-id' | 'invalid-config';

export class SchedError extends Error {
  /** Stable machine-readable reason. */
  readonly code: SchedErrorCode;

  private constructor(code: SchedErrorCode, message: string) {
    super(message);
    this.name = 'SchedError';
    this.code = code;
  }

  /** `createScheduler` got a name that is not registered (src/sched/factory.ts). */
  static unknownScheduler(name: unknown, known: readonly string[]): SchedError {
    return new SchedError(
      'unknown-scheduler',
      `unknown scheduler ${JSON.stringify(String(name))}; registered: ${known.join(', ')} (the others shipped are opt-in: import { ${String(name)} } from 'multipath-rtc/strategies' and pass it, or registerScheduler(${String(name)}) first)`,
    );
  }

  /** The 'single' scheduler was requested without `singlePath`. */
  static missingSinglePath(): SchedError {
    return new SchedError('missing-single-path', "scheduler 'single' needs opts.singlePath (a PathId)");
  }

  /** A PathId that is not an integer in [0, MAX_PATHS). */
  static invalidPathId(id: unknown, maxPaths: number): SchedError {
    return new SchedError('invalid-path-id', `invalid path id ${String(id)}: must be an integer in [0, ${maxPaths})`);
  }

  /** A configuration field is out of range or not finite. */
  static invalidConfig(field: string, value: unknown, expected: string): SchedError {
    return new SchedError('invalid-config', `invalid config ${field}=${String(value)}: expected ${expected}`);
  }
}
