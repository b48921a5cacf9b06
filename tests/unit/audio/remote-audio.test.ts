/**
 * RemoteAudio loads the audio output with import() at the first remote audio
 * frame (bundle size, issue 14): the playouts that arrive meanwhile are held
 * (at most 50, the newest) and played in order once it is there; the track is
 * announced once; nothing is built after close().
 */
import { describe, expect, it, vi } from 'vitest';
import type { AudioPlayoutEvent } from '../../../src/audio/audio-receiver.js';
import { RemoteAudio } from '../../../src/audio/call-audio.js';
import type { ReceiverEngine } from '../../../src/engine/receiver.js';

const played: number[] = [];
let built = 0;
vi.mock('../../../src/audio/audio-output.js', () => ({
  AudioOutput: class {
    track = { kind: 'audio' } as unknown as MediaStreamTrack;
    constructor() {
      built++;
    }
    play(ev: AudioPlayoutEvent): void {
      played.push(ev.atUs);
    }
    close(): void {}
  },
}));

function fakeReceiver() {
  let handler: ((ev: AudioPlayoutEvent) => void) | undefined;
  const receiver = {
    on: (_event: 'audio', h: (ev: AudioPlayoutEvent) => void) => {
      handler = h;
      return () => {
        handler = undefined;
      };
    },
  } as unknown as ReceiverEngine;
  const emit = (atUs: number) => handler?.({ atUs, playout: { kind: 'frame' } } as unknown as AudioPlayoutEvent);
  return { receiver, emit };
}

describe('RemoteAudio', () => {
  it('holds the newest 50 playouts while the output loads, then plays them in order and announces the track once', async () => {
    played.length = 0;
    built = 0;
    const { receiver, emit } = fakeReceiver();
    const tracks: MediaStreamTrack[] = [];
    const audio = new RemoteAudio(
      receiver,
      (t) => tracks.push(t),
      (e) => {
        throw e;
      },
    );
    for (let i = 0; i < 60; i++) emit(i);
    expect(played).toEqual([]);
    await vi.waitFor(() => expect(built).toBe(1));
    expect(played).toEqual(Array.from({ length: 50 }, (_, i) => i + 10));
    emit(60);
    expect(played.at(-1)).toBe(60);
    expect(tracks).toHaveLength(1);
    expect(audio.track).toBe(tracks[0]);
    audio.close();
  });

  it('builds nothing when closed before the output loaded', async () => {
    built = 0;
    const { receiver, emit } = fakeReceiver();
    const audio = new RemoteAudio(
      receiver,
      () => undefined,
      () => undefined,
    );
    emit(1);
    audio.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(built).toBe(0);
    expect(audio.track).toBeUndefined();
  });
});
