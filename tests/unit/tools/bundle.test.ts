/**
 * The browser bundle of a page that imports MultipathCall (tools/size.ts:
 * a real Vite production build) never builds code at run time, so it runs
 * under `Content-Security-Policy: script-src 'self'` (no 'unsafe-eval').
 * The size budget itself is `npm run size` (CI), which prints the numbers.
 */
import { describe, expect, it } from 'vitest';
import { measureBundle } from '../../../tools/size.js';

describe('MultipathCall bundle', () => {
  it('has no eval / new Function / Function() and no protobufjs', async () => {
    const b = await measureBundle();
    expect(b.minBytes).toBeGreaterThan(10_000); // it really built the library
    expect(b.code).toContain('ClockEcho'); // ... including the wire codec
    expect(b.codegen).toEqual([]);
    expect(b.modules.some((m) => m.id === 'protobufjs' || m.id === 'long')).toBe(false);
    // Only the default strategies (Converge, GCC, path / none FEC): the others are opt-in (src/strategies.ts).
    const ids = b.modules.map((m) => m.id);
    expect(ids).toContain('src/sched/converge.ts');
    expect(ids).toContain('src/cc/gcc.ts');
    // Rare paths come as lazy chunks, not up front: the Firefox capture fallback and Web Audio, the Opus encoder, the audio output, app data, the capabilities probe.
    const lazy = b.lazy.flatMap((l) => l.modules);
    for (const m of [
      'src/codec/frame-source-element.ts',
      'src/audio/web-audio.ts',
      'src/audio/opus-encoder.ts',
      'src/audio/audio-output.ts',
      'src/engine/app-data.ts',
      'src/codec/capabilities-probe.ts',
    ]) {
      expect(lazy).toContain(m);
      expect(ids).not.toContain(m);
    }
    for (const optIn of [
      'src/strategies.ts',
      'src/sched/lola.ts',
      'src/sched/aggdeliv.ts',
      'src/sched/minrtt.ts',
      'src/sched/roundrobin.ts',
      'src/fec/webrtc-table-policy.ts',
      'src/fec/fec-rate-table.ts',
    ]) {
      expect(ids).not.toContain(optIn);
    }
  }, 60_000);
});
