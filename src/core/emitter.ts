/**
 * The one listener convention of the library: `on(event, handler)` returns a
 * function that removes the handler. Every public class with events
 * (MultipathCall, SignallingClient, the PathTransport implementations, the
 * engines) keeps an {@link Emitter} and forwards its `on` to it.
 *
 * Storage and dispatch order come from `eventemitter3` (small, no
 * dependencies, runs in browsers and Node); this wrapper adds the typed event
 * map, the unsubscribe function, set semantics (the same handler added twice
 * runs once, as with a `Set`) and one policy for listeners that throw.
 *
 * ```ts
 * interface Events { frame: (f: Frame) => void; closed: () => void }
 * class Thing {
 *   private readonly events = new Emitter<Events>();
 *   on<K extends keyof Events>(event: K, handler: Events[K]): () => void {
 *     return this.events.on(event, handler);
 *   }
 *   private done(f: Frame): void { this.events.emit('frame', f); }
 * }
 * ```
 */
import { EventEmitter } from 'eventemitter3';

/**
 * Event name -> listener signature; interfaces fit too (any listener type
 * fits `never[]` parameters).
 */
export type EventMap<E> = { [K in keyof E]: (...args: never[]) => void };

type Listener = (...args: unknown[]) => void;

export interface EmitterOptions<E extends EventMap<E>> {
  /**
   * Called with what a listener threw (and the event); the remaining
   * listeners still run. Without it the exception propagates out of `emit`
   * and the remaining listeners are skipped.
   */
  onListenerError?: (err: unknown, event: keyof E & string) => void;
}

/** A typed event emitter whose `on` returns an unsubscribe function. */
export class Emitter<E extends EventMap<E>> {
  private readonly ee = new EventEmitter();
  private readonly onListenerError: EmitterOptions<E>['onListenerError'];

  constructor(opts: EmitterOptions<E> = {}) {
    this.onListenerError = opts.onListenerError;
  }

  /** Add `handler` (once: adding the same function again is a no-op); returns a function that removes it. */
  on<K extends keyof E & string>(event: K, handler: E[K]): () => void {
    const fn = handler as unknown as Listener;
    if (!this.ee.listeners(event).includes(fn)) this.ee.on(event, fn);
    return () => {
      this.ee.off(event, fn);
    };
  }

  /** Remove `handler` from `event` (no-op when absent). */
  off<K extends keyof E & string>(event: K, handler: E[K]): void {
    this.ee.off(event, handler as unknown as Listener);
  }

  /** Call the listeners of `event` in the order they were added (those present when the call starts). */
  emit<K extends keyof E & string>(event: K, ...args: Parameters<E[K]>): void {
    const listeners = this.ee.listeners(event);
    const onError = this.onListenerError;
    for (const l of listeners) {
      if (onError === undefined) {
        l(...args);
        continue;
      }
      try {
        l(...args);
      } catch (err) {
        onError(err, event);
      }
    }
  }

  /** Listeners registered for `event`. */
  listenerCount(event: keyof E & string): number {
    return this.ee.listenerCount(event);
  }
}
