/**
 * MultipathCallOptions.departureTimes reaches the sender engine a call
 * builds for each participant (SenderEngineConfig.departureTimes), and each
 * of its paths then times packets at the datachannel's departure.
 */
import { describe, expect, it } from 'vitest';
import { MultipathCall, type MultipathCallOptions } from '../../../src/call/multipath-call.js';
import type { SenderEngine } from '../../../src/engine/sender.js';
import type { PathSink } from '../../../src/engine/types.js';

/** The SenderEngine a call attaches to a participant's session (MultipathCall.attachSender, private). */
function engineOf(extra: Partial<MultipathCallOptions>): SenderEngine {
  const call = new MultipathCall({ signallingUrl: 'ws://127.0.0.1:1', room: 'r', ...extra });
  let engine: SenderEngine | undefined;
  const session = { attachSender: (e: SenderEngine) => (engine = e) };
  (call as unknown as { attachSender(s: unknown): void }).attachSender(session);
  call.close();
  if (!engine) throw new Error('no sender engine attached');
  return engine;
}

/** Whether a path added to the engine has departure times on (SenderPath.departureTimes). */
function pathDepartureTimes(e: SenderEngine): boolean {
  const sink = { send: () => true, bufferedAmount: () => 0 } as unknown as PathSink;
  e.addPath(0, sink);
  const paths = (e as unknown as { paths: { get(id: number): { departureTimes: boolean } | undefined } }).paths;
  const p = paths.get(0);
  if (!p) throw new Error('path 0 not found');
  return p.departureTimes;
}

describe('MultipathCallOptions.departureTimes', () => {
  it('turns departure times on in the sender engine and its paths', () => {
    const e = engineOf({ departureTimes: true });
    expect((e as unknown as { cfg: { departureTimes: boolean } }).cfg.departureTimes).toBe(true);
    expect(pathDepartureTimes(e)).toBe(true);
  });
  it('is off by default and when false', () => {
    for (const extra of [{}, { departureTimes: false }]) {
      const e = engineOf(extra);
      expect((e as unknown as { cfg: { departureTimes: boolean } }).cfg.departureTimes).toBe(false);
      expect(pathDepartureTimes(e)).toBe(false);
    }
  });
});
