/**
 * Find the selected ICE candidate pair in a WebRTC stats report. Pure.
 *
 * Order (W3C webrtc-stats §7.x and libwebrtc `pc/rtc_stats_collector.cc`):
 * 1. a `transport` stat's `selectedCandidatePairId`;
 * 2. else a `candidate-pair` with `selected: true` (Firefox);
 * 3. else a `candidate-pair` with `nominated: true` and state 'succeeded'.
 * Candidate fields: `address` (older: `ip`, Firefox legacy `ipAddress`),
 * `port` (legacy `portNumber`), `protocol`, `candidateType`. Chrome does not
 * put `network-id` in stats; the pair's `currentRoundTripTime` (s) becomes
 * `rttMs`, its `responsesReceived` `rttResponses`. Pass `localNetworkIds` (from the local candidate
 * lines, see {@link candidateInfoKey}) to fill `networkId`.
 */
import type { CandidateInfo, SelectedPair } from './types.js';

/** A stats entry: only the fields read here. */
export type StatsEntry = Record<string, unknown> & { id?: unknown; type?: unknown };

/** Key `protocol|address|port` used to look up a local candidate's network-id. */
export function candidateInfoKey(protocol: string, address: string, port: number): string {
  return `${protocol.toLowerCase()}|${address}|${port}`;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function toInfo(s: StatsEntry | undefined, networkIds?: ReadonlyMap<string, number>): CandidateInfo | undefined {
  if (!s) return undefined;
  const address = str(s.address) ?? str(s.ip) ?? str(s.ipAddress);
  const portRaw = s.port ?? s.portNumber;
  const port = typeof portRaw === 'number' ? portRaw : Number(portRaw);
  if (address === undefined || !Number.isInteger(port)) return undefined;
  const protocol = (str(s.protocol) ?? 'udp').toLowerCase();
  const info: CandidateInfo = { address, port, protocol, type: str(s.candidateType) ?? 'unknown' };
  const nid = typeof s.networkId === 'number' ? s.networkId : networkIds?.get(candidateInfoKey(protocol, address, port));
  if (nid !== undefined) info.networkId = nid;
  const nt = str(s.networkType);
  if (nt !== undefined) info.networkType = nt;
  return info;
}

/**
 * @param stats the values of an RTCStatsReport (e.g. `report.values()`), or simple-peer's flattened array.
 * @param localNetworkIds optional map {@link candidateInfoKey} -> network-id for local candidates.
 * @returns the pair, or undefined when none is selected yet or fields are missing. Never throws on odd input.
 */
export function selectedPairFromStats(stats: Iterable<StatsEntry>, localNetworkIds?: ReadonlyMap<string, number>): SelectedPair | undefined {
  const byId = new Map<string, StatsEntry>();
  const transports: StatsEntry[] = [];
  const pairs: StatsEntry[] = [];
  for (const s of stats) {
    if (!s || typeof s !== 'object') continue;
    const id = str(s.id);
    if (id !== undefined) byId.set(id, s);
    if (s.type === 'transport') transports.push(s);
    else if (s.type === 'candidate-pair' || s.type === 'candidatepair') pairs.push(s);
  }
  let pair: StatsEntry | undefined;
  for (const t of transports) {
    const pid = str(t.selectedCandidatePairId);
    if (pid !== undefined && byId.has(pid)) {
      pair = byId.get(pid);
      break;
    }
  }
  pair ??= pairs.find((p) => p.selected === true);
  pair ??= pairs.find((p) => p.nominated === true && p.state === 'succeeded');
  if (!pair) return undefined;
  const local = toInfo(byId.get(str(pair.localCandidateId) ?? ''), localNetworkIds);
  const remote = toInfo(byId.get(str(pair.remoteCandidateId) ?? ''));
  if (!local || !remote) return undefined;
  const out: SelectedPair = { local, remote, id: str(pair.id) ?? '' };
  if (typeof pair.currentRoundTripTime === 'number' && Number.isFinite(pair.currentRoundTripTime) && pair.currentRoundTripTime >= 0) out.rttMs = pair.currentRoundTripTime * 1000;
  if (typeof pair.responsesReceived === 'number') out.rttResponses = pair.responsesReceived;
  const aob = pair.availableOutgoingBitrate;
  if (typeof aob === 'number' && Number.isFinite(aob) && aob >= 0) out.availableOutgoingBps = aob;
  return out;
}
