import { describe, expect, it, vi } from 'vitest';
import { Emitter } from '../../../src/core/emitter.js';

interface Events {
  tick: (n: number) => void;
  done: () => void;
}

describe('Emitter', () => {
  it('calls listeners in order with the arguments, once per handler, until unsubscribed', () => {
    const e = new Emitter<Events>();
    const seen: string[] = [];
    const a = (n: number) => seen.push(`a${n}`);
    const offA = e.on('tick', a);
    e.on('tick', a); // same handler again: still once
    const offB = e.on('tick', (n) => seen.push(`b${n}`));
    e.emit('tick', 1);
    offA();
    e.emit('tick', 2);
    offB();
    e.emit('tick', 3);
    expect(seen).toEqual(['a1', 'b1', 'b2']);
    expect(e.listenerCount('tick')).toBe(0);
  });

  it('off removes a handler; events are independent', () => {
    const e = new Emitter<Events>();
    const done = vi.fn();
    const tick = vi.fn();
    e.on('done', done);
    e.on('tick', tick);
    e.off('tick', tick);
    e.emit('tick', 1);
    e.emit('done');
    expect(tick).not.toHaveBeenCalled();
    expect(done).toHaveBeenCalledTimes(1);
  });

  it('without onListenerError a throwing listener propagates and skips the rest', () => {
    const e = new Emitter<Events>();
    const later = vi.fn();
    e.on('tick', () => {
      throw new Error('boom');
    });
    e.on('tick', later);
    expect(() => e.emit('tick', 1)).toThrow('boom');
    expect(later).not.toHaveBeenCalled();
  });

  it('with onListenerError the error is reported and the other listeners still run', () => {
    const errors: Array<[unknown, string]> = [];
    const e = new Emitter<Events>({ onListenerError: (err, ev) => errors.push([err, ev]) });
    const later = vi.fn();
    const boom = new Error('boom');
    e.on('tick', () => {
      throw boom;
    });
    e.on('tick', later);
    e.emit('tick', 7);
    expect(later).toHaveBeenCalledWith(7);
    expect(errors).toEqual([[boom, 'tick']]);
  });

  it('a listener added or removed during emit takes effect from the next emit', () => {
    const e = new Emitter<Events>();
    const seen: string[] = [];
    let offB: () => void = () => {};
    e.on('tick', (n) => {
      seen.push(`a${n}`);
      offB();
      e.on('tick', (m) => seen.push(`c${m}`));
    });
    offB = e.on('tick', (n) => seen.push(`b${n}`));
    e.emit('tick', 1);
    e.emit('tick', 2);
    expect(seen).toEqual(['a1', 'b1', 'a2', 'c2']);
  });
});
