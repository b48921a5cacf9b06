/**
 * One page's `getStats()` report (its entries, as they cross
 * `page.evaluate`: `report.toJSON()`) seen from a 1:1 call: the entries about
 * the first remote participant, by role. Used by the call report, the
 * cross-browser check and the browser benchmark, so they all read the same
 * fields of the one stats contract (src/call/stats-types.ts).
 */
import {
  type CallEntryStats,
  type CallStatsEntry,
  CallStatsReport,
  type DataChannelStats,
  type IceCandidateStats,
  type InboundAudioStats,
  type InboundVideoStats,
  type OutboundAudioStats,
  type OutboundVideoStats,
  type PathStats,
  type RemoteInboundRtpStats,
  type TransportStats,
} from '../../src/call/stats-types.js';

export interface PeerStatsView {
  call: CallEntryStats | undefined;
  /** The remote participant the view is about (the first one). */
  participantId: string | undefined;
  transport: TransportStats | undefined;
  outVideo: OutboundVideoStats | undefined;
  outAudio: OutboundAudioStats | undefined;
  remoteInVideo: RemoteInboundRtpStats | undefined;
  inVideo: InboundVideoStats | undefined;
  inAudio: InboundAudioStats | undefined;
  dataChannel: DataChannelStats | undefined;
  /** Its paths, by path id. */
  paths: PathStats[];
  /** Selected route of each path (path id -> local / remote candidate), once known. */
  routes: Map<number, { local: IceCandidateStats; remote: IceCandidateStats }>;
}

/** The view of `entries` about `participantId` (default: the call's first remote participant). */
export function peerView(entries: Iterable<CallStatsEntry> | undefined, participantId?: string): PeerStatsView {
  const r = CallStatsReport.from(entries ?? []);
  const call = r.get('call') as CallEntryStats | undefined;
  const pid = participantId ?? call?.remoteParticipantIds[0];
  const mine = pid === undefined ? [] : r.ofParticipant(pid);
  const find = <T extends CallStatsEntry>(pred: (e: CallStatsEntry) => boolean): T | undefined => mine.find(pred) as T | undefined;
  const paths = mine.filter((e): e is PathStats => e.type === 'path').sort((a, b) => a.pathId - b.pathId);
  const routes = new Map<number, { local: IceCandidateStats; remote: IceCandidateStats }>();
  for (const p of paths) {
    const pair = r.get(p.candidatePairId);
    if (pair?.type !== 'candidate-pair' || !pair.localCandidateId || !pair.remoteCandidateId) continue;
    const local = r.get(pair.localCandidateId);
    const remote = r.get(pair.remoteCandidateId);
    if (local?.type === 'local-candidate' && remote?.type === 'remote-candidate') routes.set(p.pathId, { local, remote });
  }
  return {
    call,
    participantId: pid,
    transport: pid === undefined ? undefined : (r.get(`T_${pid}`) as TransportStats | undefined),
    outVideo: find((e) => e.type === 'outbound-rtp' && e.kind === 'video'),
    outAudio: find((e) => e.type === 'outbound-rtp' && e.kind === 'audio'),
    remoteInVideo: find((e) => e.type === 'remote-inbound-rtp'),
    inVideo: find((e) => e.type === 'inbound-rtp' && e.kind === 'video'),
    inAudio: find((e) => e.type === 'inbound-rtp' && e.kind === 'audio'),
    dataChannel: find((e) => e.type === 'data-channel'),
    paths,
    routes,
  };
}

/** s -> ms (undefined stays undefined). */
export const ms = (s: number | undefined): number | undefined => (s === undefined ? undefined : s * 1000);
