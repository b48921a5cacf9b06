/**
 * Browser helper: one ICE gathering pass with a throwaway RTCPeerConnection,
 * to snapshot the local candidates (and so the local networks) before the
 * paths are created. Feed the result to `PathCandidatePolicy.byNetwork`.
 *
 * Observed in headless Chromium 156 (Linux): only non-loopback interfaces are
 * gathered (127.0.0.1 never appears, even with
 * --allow-loopback-in-peer-connection), one host candidate per address
 * family, no TCP candidates, and candidate lines carry `network-cost` but NOT
 * `network-id`, so grouping falls back to the interface address (IPv4 and
 * IPv6 of one NIC become two groups). With mDNS obfuscation enabled (the
 * default) host addresses are `*.local` names.
 */
import type { IceServerConfig } from './candidates.js';

export interface ProbeOptions {
  /** ICE servers for the probe (default []: host candidates only). Use the paths' servers to see srflx/relay. */
  iceServers?: IceServerConfig[];
  /** Give up waiting for end-of-gathering after this long (ms, default 3000). */
  timeoutMs?: number;
  /** RTCPeerConnection constructor (default globalThis.RTCPeerConnection). */
  RTCPeerConnection?: typeof RTCPeerConnection;
}

/**
 * Gather local ICE candidates once.
 * @returns candidate lines (`candidate:...`), at most 64, in gathering order.
 * @throws Error (rejects) when no RTCPeerConnection exists.
 */
export async function probeLocalCandidates(opts: ProbeOptions = {}): Promise<string[]> {
  const Pc = opts.RTCPeerConnection ?? (globalThis as { RTCPeerConnection?: typeof RTCPeerConnection }).RTCPeerConnection;
  if (!Pc) throw new Error('probeLocalCandidates: no RTCPeerConnection in this environment');
  const pc = new Pc({ iceServers: (opts.iceServers ?? []) as RTCIceServer[] });
  const lines: string[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const done = new Promise<void>((resolve) => {
      pc.onicecandidate = (e) => {
        if (!e.candidate || e.candidate.candidate === '') resolve();
        else if (lines.length < 64) lines.push(e.candidate.candidate);
      };
      pc.onicegatheringstatechange = () => {
        if (pc.iceGatheringState === 'complete') resolve();
      };
      timer = setTimeout(resolve, opts.timeoutMs ?? 3000);
    });
    pc.createDataChannel('probe');
    await pc.setLocalDescription(await pc.createOffer());
    await done;
    return lines;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    pc.close();
  }
}
