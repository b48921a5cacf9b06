/**
 * What the demo e2e tests read from a demo page (tests/e2e/demo-mesh*.e2e.ts):
 * its call's stats per remote participant, the audio levels it plays, and a
 * polling wait that names what it waited for.
 */
import type { Page } from 'playwright-core';

export interface Digest {
  me: string | undefined;
  remotes: Array<{
    id: string;
    decoded: number;
    paths: Array<{ id: number; enabled: boolean; state: string }>;
    sent: Record<number, number>;
    media: Record<number, number>;
    /** Audio frames received from it, and the RMS of what its decoder gave over the last second. */
    audio: { received: number; decodedRms: number; concealedPct: number; mouthToEarP95Ms: number; avOffsetMs: number };
    /** Video from it: freezes and capture -> decoded latency p95 (ms). */
    video: { freezes: number; latencyP95Ms: number };
  }>;
  /** Opus frames encoded by this page, and those encoded as silence (muted). */
  audioEncoded: { frames: number; muted: number };
  tiles: number;
  status: string;
}

/** What one page's call says about each remote participant. */
export function digest(page: Page): Promise<Digest | undefined> {
  return page.evaluate(() => {
    type S = {
      participantId?: string;
      audioEncoder?: { framesEncoded: number; mutedFrames: number };
      participants: Array<{
        participantId: string;
        decoder: { decoded: number };
        receiver: { audio: { packetsReceived: number; concealedPct: number; mouthToEarP95Ms: number; avOffsetMs: number }; freezeCount: number; latencyMs: { p95: number } };
        audioOutput?: { rms: number };
        paths: Array<{ id: number; enabled: boolean; state: string }>;
        sender?: { paths: Array<{ id: number; packetsSent: number; mediaPacketsSent: number }> };
      }>;
    };
    const call = (window as unknown as { __demo?: { getStats(): S } }).__demo;
    if (!call) return undefined;
    const s = call.getStats();
    return {
      me: s.participantId,
      remotes: s.participants.map((p) => ({
        id: p.participantId,
        decoded: p.decoder.decoded,
        paths: p.paths.map((x) => ({ id: x.id, enabled: x.enabled, state: x.state })),
        sent: Object.fromEntries((p.sender?.paths ?? []).map((x) => [x.id, x.packetsSent])),
        media: Object.fromEntries((p.sender?.paths ?? []).map((x) => [x.id, x.mediaPacketsSent])),
        audio: {
          received: p.receiver.audio.packetsReceived,
          decodedRms: p.audioOutput?.rms ?? 0,
          concealedPct: p.receiver.audio.concealedPct,
          mouthToEarP95Ms: p.receiver.audio.mouthToEarP95Ms,
          avOffsetMs: p.receiver.audio.avOffsetMs,
        },
        video: { freezes: p.receiver.freezeCount, latencyP95Ms: p.receiver.latencyMs.p95 },
      })),
      audioEncoded: { frames: s.audioEncoder?.framesEncoded ?? 0, muted: s.audioEncoder?.mutedFrames ?? 0 },
      tiles: document.querySelectorAll('.tile.remote').length,
      status: document.getElementById('status')?.textContent ?? '',
    };
  });
}

export async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const t0 = Date.now();
  let v = await probe();
  while (!ok(v)) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 500));
    v = await probe();
  }
  return v;
}

/** Each remote participant's audio level on one page (RMS, full scale 1; the largest of the last second). */
export function levels(page: Page): Promise<Record<string, number>> {
  return page.evaluate(() => (window as unknown as { __audioLevels?: () => Record<string, number> }).__audioLevels?.() ?? {});
}
