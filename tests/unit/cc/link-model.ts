/**
 * Small deterministic link model for the congestion-control tests (not a
 * test file): constant-or-stepped capacity bottleneck with a drop-tail queue,
 * fixed one-way delay both ways, optional random loss, a receiver that
 * reports every `reportIntervalMs` on its own clock (with a huge offset), and
 * a sender that sends 1200-byte packets at the estimator's target rate.
 */
import { Rng } from '../../../src/core/rng.js';
import type { PathReport } from '../../../src/core/types.js';
import type { BandwidthEstimator } from '../../../src/cc/types.js';

export interface ScenarioOptions {
  durationMs: number;
  /** Capacity (bps) as a function of sender time (ms). */
  capacityBps: (tMs: number) => number;
  oneWayDelayMs?: number;
  /** Drop-tail queue limit (bytes). */
  queueLimitBytes?: number;
  /** Random loss probability before the queue. */
  lossRate?: number;
  seed?: number;
  reportIntervalMs?: number;
  /** Receiver clock = sender clock + this (µs). */
  receiverClockOffsetUs?: number;
  packetBytes?: number;
  /** Reports are not delivered at all. */
  noReports?: boolean;
  /** Pathseq of the first packet (to exercise wrap-around). */
  firstSeq?: number;
  /** The sender holds its packets until it has this many and sends them at once (a pacer's burst). Default 1. */
  burstPackets?: number;
  /** Constant-rate cross traffic (bps) entering the same drop-tail queue each ms (fluid, never reported). Default 0. */
  crossBps?: number;
}

export interface Sample {
  tMs: number;
  targetBps: number;
  queueDelayMs: number;
}

export interface ScenarioResult {
  samples: Sample[];
  maxQueueDelayMs: number;
  sent: number;
  dropped: number;
  /** Target at a given time (ms), from the 100 ms samples. */
  at(tMs: number): number;
  /** Mean target over [fromMs, toMs). */
  mean(fromMs: number, toMs: number): number;
  min(fromMs: number, toMs: number): number;
  maxQueue(fromMs: number, toMs: number): number;
}

export function runScenario(est: BandwidthEstimator, o: ScenarioOptions): ScenarioResult {
  const owdUs = (o.oneWayDelayMs ?? 50) * 1000;
  const queueLimit = o.queueLimitBytes ?? 60_000;
  const lossRate = o.lossRate ?? 0;
  const rng = new Rng(o.seed ?? 1);
  const reportIntervalUs = (o.reportIntervalMs ?? 50) * 1000;
  const offset = o.receiverClockOffsetUs ?? 7_000_000_000_000;
  const pkt = o.packetBytes ?? 1200;
  const burst = Math.max(1, Math.floor(o.burstPackets ?? 1));
  const crossBytesPerMs = (o.crossBps ?? 0) / 8000;

  let seq = o.firstSeq ?? 0;
  let lastDepartUs = 0;
  let credit = 0;
  let sent = 0;
  let dropped = 0;
  const inFlight: { seq: number; arriveUs: number }[] = [];
  let ifHead = 0;
  const received: { seq: number; arriveUs: number }[] = [];
  const reports: { deliverUs: number; report: PathReport }[] = [];
  let rHead = 0;
  let lastEnd = -1; // receiver's last reported endSeq (as offset from firstSeq)
  let highest = -1;
  const first = o.firstSeq ?? 0;
  let nextReportUs = reportIntervalUs;
  const samples: Sample[] = [];
  let maxQ = 0;

  for (let tMs = 0; tMs < o.durationMs; tMs++) {
    const now = tMs * 1000;
    // 1. arrivals at the receiver
    while (ifHead < inFlight.length && inFlight[ifHead].arriveUs <= now) {
      const p = inFlight[ifHead++];
      received.push(p);
      const rel = (p.seq - first + 0x1_0000_0000) % 0x1_0000_0000;
      if (rel > highest) highest = rel;
    }
    // 2. receiver report
    if (now >= nextReportUs) {
      nextReportUs += reportIntervalUs;
      if (received.length > 0) {
        const report: PathReport = {
          pathId: 0,
          beginSeq: (first + lastEnd + 1) >>> 0,
          endSeq: (first + highest) >>> 0,
          arrivals: received.map((p) => ({ pathSeq: p.seq, arrivalUs: p.arriveUs + offset })),
          reportTimeUs: now + offset,
        };
        lastEnd = highest;
        received.length = 0;
        if (!o.noReports) reports.push({ deliverUs: now + owdUs, report });
      }
    }
    // 3. reports at the sender
    while (rHead < reports.length && reports[rHead].deliverUs <= now) {
      est.onReport(reports[rHead++].report, now);
    }
    if (tMs % 25 === 0) est.onTick(now);
    // 4. cross traffic, then the sender at the target rate
    if (crossBytesPerMs > 0) {
      const cap = o.capacityBps(tMs);
      const backlogBytes = (Math.max(0, lastDepartUs - now) * cap) / 8e6;
      if (backlogBytes + crossBytesPerMs <= queueLimit) lastDepartUs = Math.max(now, lastDepartUs) + (crossBytesPerMs * 8e6) / cap;
    }
    credit = Math.min(credit + est.targetRateBps() / 8 / 1000, Math.max(2, burst) * pkt);
    // A burst goes out once all of it is due (burst 1: every packet that is due).
    for (let n = burst === 1 ? Math.floor(credit / pkt) : credit >= burst * pkt ? burst : 0; n > 0; n--) {
      credit -= pkt;
      const s = seq;
      seq = (seq + 1) >>> 0;
      sent++;
      est.onPacketSent({ pathSeq: s, sizeBytes: pkt, sendTimeUs: now });
      if (rng.next() < lossRate) {
        dropped++;
        continue;
      }
      const cap = o.capacityBps(tMs);
      const backlogBytes = (Math.max(0, lastDepartUs - now) * cap) / 8e6;
      if (backlogBytes + pkt > queueLimit) {
        dropped++;
        continue;
      }
      lastDepartUs = Math.max(now, lastDepartUs) + (pkt * 8e6) / cap;
      inFlight.push({ seq: s, arriveUs: lastDepartUs + owdUs });
    }
    if (ifHead > 4096) {
      inFlight.splice(0, ifHead);
      ifHead = 0;
    }
    if (rHead > 1024) {
      reports.splice(0, rHead);
      rHead = 0;
    }
    const qd = Math.max(0, lastDepartUs - now) / 1000;
    if (qd > maxQ) maxQ = qd;
    if (tMs % 100 === 0) samples.push({ tMs, targetBps: est.targetRateBps(), queueDelayMs: qd });
  }

  const pick = (a: number, b: number) => samples.filter((s) => s.tMs >= a && s.tMs < b);
  return {
    samples,
    maxQueueDelayMs: maxQ,
    sent,
    dropped,
    at: (t) => samples[Math.min(samples.length - 1, Math.floor(t / 100))].targetBps,
    mean: (a, b) => {
      const s = pick(a, b);
      return s.reduce((x, y) => x + y.targetBps, 0) / s.length;
    },
    min: (a, b) => Math.min(...pick(a, b).map((s) => s.targetBps)),
    maxQueue: (a, b) => Math.max(...pick(a, b).map((s) => s.queueDelayMs)),
  };
}
