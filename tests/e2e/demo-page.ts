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
  /** Microphone frames read by this page, Opus frames encoded, and those encoded as silence (muted). */
  audioEncoded: { input: number; frames: number; muted: number };
  tiles: number;
  status: string;
}

/** What one page's call says about each remote participant (its `getStats()` entries, src/call/stats-types.ts). */
export function digest(page: Page): Promise<Digest | undefined> {
  return page.evaluate(() => {
    // The entry fields read here (a structural copy of CallStatsEntry: this runs in the page).
    type E = {
      type: string;
      kind?: string;
      participantId?: string;
      remoteParticipantIds?: string[];
      pathId?: number;
      enabled?: boolean;
      state?: string;
      packetsSent?: number;
      mediaPacketsSent?: number;
      framesDecoded?: number;
      packetsReceived?: number;
      audioLevel?: number;
      concealedSamples?: number;
      totalSamplesReceived?: number;
      mouthToEarP95?: number;
      avOffset?: number;
      freezeCount?: number;
      endToEndLatencyP95?: number;
      frames?: number;
      framesEncoded?: number;
      mutedFrames?: number;
    };
    const call = (window as unknown as { __demo?: { getStats(): Map<string, E> } }).__demo;
    if (!call) return undefined;
    const entries = [...call.getStats().values()];
    const me = entries.find((e) => e.type === 'call');
    const source = entries.find((e) => e.type === 'media-source' && e.kind === 'audio');
    return {
      me: me?.participantId,
      remotes: (me?.remoteParticipantIds ?? []).map((id) => {
        const paths = entries.filter((e) => e.type === 'path' && e.participantId === id);
        const sending = entries.some((e) => e.type === 'outbound-rtp' && e.kind === 'video' && e.participantId === id);
        const v = entries.find((e) => e.type === 'inbound-rtp' && e.kind === 'video' && e.participantId === id);
        const a = entries.find((e) => e.type === 'inbound-rtp' && e.kind === 'audio' && e.participantId === id);
        return {
          id,
          decoded: v?.framesDecoded ?? 0,
          paths: paths.map((x) => ({ id: x.pathId ?? -1, enabled: x.enabled ?? false, state: x.state ?? '' })),
          sent: Object.fromEntries(sending ? paths.map((x) => [x.pathId, x.packetsSent ?? 0]) : []),
          media: Object.fromEntries(sending ? paths.map((x) => [x.pathId, x.mediaPacketsSent ?? 0]) : []),
          audio: {
            received: a?.packetsReceived ?? 0,
            decodedRms: a?.audioLevel ?? 0,
            concealedPct: a && (a.totalSamplesReceived ?? 0) > 0 ? (100 * (a.concealedSamples ?? 0)) / (a.totalSamplesReceived ?? 1) : 0,
            mouthToEarP95Ms: (a?.mouthToEarP95 ?? 0) * 1000,
            avOffsetMs: (a?.avOffset ?? 0) * 1000,
          },
          video: { freezes: v?.freezeCount ?? 0, latencyP95Ms: (v?.endToEndLatencyP95 ?? 0) * 1000 },
        };
      }),
      audioEncoded: { input: source?.frames ?? 0, frames: source?.framesEncoded ?? 0, muted: source?.mutedFrames ?? 0 },
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
