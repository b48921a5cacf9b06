/**
 * A name -> entry table with built-ins and run-time additions: the one shape
 * behind the scheduler (src/sched/factory.ts), bandwidth estimator
 * (src/cc/registry.ts) and FEC policy (src/fec/factory.ts) registries.
 */

/** Registry names: lowercase letters, digits and dashes, starting with a letter or digit. */
const NAME = /^[a-z0-9][a-z0-9-]*$/;

export class Registry<E> {
  private readonly entries: Map<string, E>;

  /**
   * @param what what the entries are, for error messages ("scheduler").
   * @param builtins the entries shipped with the library, in listing order.
   * @param badName builds the error thrown by {@link register} for a bad or taken name.
   */
  constructor(
    private readonly what: string,
    builtins: Readonly<Record<string, E>>,
    private readonly badName: (name: string, reason: string) => Error,
  ) {
    this.entries = new Map(Object.entries(builtins));
  }

  /**
   * Add `entry` under `name`. Registering the same entry object under the
   * same name again is a no-op (so that `registerScheduler(lola)` in two
   * modules of one app, or `registerAllStrategies()` twice, is harmless).
   * @throws the constructor's `badName` error when `name` is not `[a-z0-9][a-z0-9-]*` or taken by another entry.
   */
  register(name: string, entry: E): void {
    if (typeof name !== 'string' || !NAME.test(name)) throw this.badName(String(name), `a ${this.what} name is lowercase letters, digits and dashes`);
    if (this.entries.get(name) === entry) return;
    if (this.entries.has(name)) throw this.badName(name, `a ${this.what} named ${JSON.stringify(name)} is already registered`);
    this.entries.set(name, entry);
  }

  get(name: string): E | undefined {
    return this.entries.get(name);
  }

  has(name: unknown): name is string {
    return typeof name === 'string' && this.entries.has(name);
  }

  /** Every name: built-ins first, then additions in registration order. */
  names(): string[] {
    return [...this.entries.keys()];
  }
}
