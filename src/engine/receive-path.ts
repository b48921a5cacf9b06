/**
 * What the receiver keeps per path: the sink of the reverse direction, the
 * arrival-report builder of the path's congestion control, and the counters
 * its statistics are made of.
 */
import type { PathId } from '../core/types.js';
import type { FecPathStats } from '../fec/types.js';
import { PathReportBuilder } from '../feedback/path-report-builder.js';
import type { PathSink, ReceiverPathStats } from './types.js';

export interface PathRx {
  id: PathId;
  sink: PathSink | undefined;
  reports: PathReportBuilder;
  packetsReceived: number;
  bytesReceived: number;
  mediaPacketsReceived: number;
  fecPacketsReceived: number;
  latePackets: number;
  earlyPackets: number;
  highestSeq: number;
  seqCount: number;
  firstSeq: number;
  /** Smoothed (arrival - send time) of this path's media packets, µs; the sender/receiver clock offset cancels across paths. */
  owdUs: number;
  /** When this side last answered a peer report on this path with a clock echo (µs, local clock). */
  lastEchoUs: number;
  /** Bytes sent on the path's reverse direction: all feedback, and the reports among it (ReceiverPathStats). */
  feedbackBytesSent: number;
  reportBytesSent: number;
}

/** Send `bytes` of feedback on the path's reverse direction (if it has a sink) and count them when the sink takes them; `report`: a path report. */
export function sendFeedback(p: PathRx, bytes: Uint8Array, report = false): void {
  if (!p.sink?.send(bytes)) return;
  p.feedbackBytesSent += bytes.length;
  if (report) p.reportBytesSent += bytes.length;
}

/** A path seen for the first time: no sink yet, counters at zero. */
export function newReceivePath(id: PathId): PathRx {
  return {
    id,
    sink: undefined,
    reports: new PathReportBuilder(id),
    packetsReceived: 0,
    bytesReceived: 0,
    mediaPacketsReceived: 0,
    fecPacketsReceived: 0,
    latePackets: 0,
    earlyPackets: 0,
    highestSeq: -1,
    seqCount: 0,
    firstSeq: -1,
    owdUs: NaN,
    lastEchoUs: -Infinity,
    feedbackBytesSent: 0,
    reportBytesSent: 0,
  };
}

/**
 * The path's statistics; `perPath` is the FEC decoder's counters for FEC
 * protecting this path, if any; `rttMs` its clock-exchange RTT (ms), if known;
 * `clock.offsetMs` the estimated sender - receiver clock offset (ms), if known.
 */
export function receivePathStats(p: PathRx, perPath: FecPathStats | undefined, rttMs: number | undefined, clock?: { offsetMs: number | undefined }): ReceiverPathStats {
  const expected = p.firstSeq >= 0 ? p.highestSeq - p.firstSeq + 1 : 0;
  return {
    id: p.id,
    packetsReceived: p.packetsReceived,
    bytesReceived: p.bytesReceived,
    mediaPacketsReceived: p.mediaPacketsReceived,
    fecPacketsReceived: p.fecPacketsReceived,
    fecUtilizationPct: perPath && perPath.fecReceived > 0 ? (100 * perPath.fecUsed) / perPath.fecReceived : 0,
    latePackets: p.latePackets,
    earlyPackets: p.earlyPackets,
    packetsLost: Math.max(0, expected - p.seqCount),
    lossPct: expected > 0 ? Math.max(0, (100 * (expected - p.seqCount)) / expected) : 0,
    rttMs: rttMs ?? 0,
    // Arrival (receiver clock) - send time (sender clock) = delay - offset, offset = sender - receiver.
    oneWayDelayMs: Number.isFinite(p.owdUs) && clock?.offsetMs !== undefined ? p.owdUs / 1000 + clock.offsetMs : undefined,
    feedbackBytesSent: p.feedbackBytesSent,
    reportBytesSent: p.reportBytesSent,
    reportArrivalsRelisted: p.reports.stats().relisted,
  };
}
