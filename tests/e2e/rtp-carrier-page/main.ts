/**
 * Page of tests/e2e/rtp-carrier.e2e.ts: two SimplePeerPaths (A initiator, B
 * answerer) in one page with `rtpCarrier: { attach: 'stall' }` (negotiated
 * when a stall fallback first finds the datachannel stalled), their signals exchanged
 * here with every candidate rewritten to one tools/emulator relay (A's
 * candidates point B at the relay's socket B and vice versa, as
 * tools/harness/ice-rewrite.ts does), so all ICE, RTP and SCTP traffic crosses
 * the emulated link. The Node test drives it through `window.carrierTest`.
 */
import { monotonicClock } from '../../../src/core/clock.js';
import type { DatagramCarrier } from '../../../src/transport/carrier.js';
import type { RtpCarrier } from '../../../src/transport/rtp-carrier.js';
import { SimplePeerPath } from '../../../src/transport/simple-peer-path.js';
import { StallFallbackSink } from '../../../src/transport/stall-fallback.js';

interface Relay {
  portA: number;
  portB: number;
}

function rewriteLine(line: string, toPort: number): string | null {
  const prefix = line.startsWith('a=') ? 'a=' : '';
  const parts = (prefix ? line.slice(2) : line).trim().split(/\s+/);
  if (parts.length < 8 || parts[2].toLowerCase() !== 'udp' || parts[7] !== 'host' || parts[4].includes(':')) return null;
  parts[4] = '127.0.0.1';
  parts[5] = String(toPort);
  return prefix + parts.join(' ');
}

/** A signal from one side, with its candidates pointed at the relay socket facing the other side (`toPort`). */
function rewrite(d: Record<string, unknown>, toPort: number): Record<string, unknown> | null {
  const c = d.candidate as { candidate?: string } | undefined;
  if (c && typeof c.candidate === 'string') {
    if (c.candidate === '') return d;
    const l = rewriteLine(c.candidate, toPort);
    return l ? { ...d, candidate: { ...c, candidate: l } } : null;
  }
  if (typeof d.sdp === 'string') {
    const lines = d.sdp.split('\r\n').flatMap((l) => (l.startsWith('a=candidate:') ? (rewriteLine(l, toPort) ?? []) : [l]));
    return { ...d, sdp: lines.join('\r\n') };
  }
  return d;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Datagram `seq` of `len` bytes: seq (u32), len (u16), then bytes derived from both. */
function datagram(seq: number, len: number): Uint8Array {
  const b = new Uint8Array(len);
  const v = new DataView(b.buffer);
  v.setUint32(0, seq);
  v.setUint16(4, len);
  for (let i = 6; i < len; i++) b[i] = (seq * 7 + i * 13) & 0xff;
  return b;
}
function check(b: Uint8Array): number | null {
  if (b.length < 6) return null;
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const seq = v.getUint32(0);
  if (v.getUint16(4) !== b.length) return null;
  for (let i = 6; i < b.length; i++) if (b[i] !== ((seq * 7 + i * 13) & 0xff)) return null;
  return seq;
}

/** The path's carrier (undefined until set up or when unavailable). */
const car = (p: SimplePeerPath): DatagramCarrier | undefined => (typeof p.rtpCarrier === 'object' ? p.rtpCarrier : undefined);

let a: SimplePeerPath;
let b: SimplePeerPath;
const t0 = performance.now();
const now = () => performance.now() - t0;

const pc = (p: SimplePeerPath) => (p as unknown as { peer: { _pc: RTCPeerConnection } }).peer._pc;
/** What the test asserts about the pair now. */
function state(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ms: Math.round(now()),
    a: a.state,
    b: b.state,
    aOpen: car(a)?.open ?? false,
    bOpen: car(b)?.open ?? false,
    unavailable: [a.rtpCarrier, b.rtpCarrier].map((c) => (typeof c === 'string' ? c : undefined)),
    sdp: pc(a)?.localDescription?.sdp ?? '',
    remoteSdp: pc(a)?.remoteDescription?.sdp ?? '',
    counters: [(car(a) as RtpCarrier | undefined)?.counters, (car(b) as RtpCarrier | undefined)?.counters],
    ...extra,
  };
}

/** Make the pair A (initiator) / B over `relay` and wait until both are connected and both carriers exist (idle: not negotiated). */
async function setup(relay: Relay): Promise<unknown> {
  a = new SimplePeerPath({ pathId: 0, initiator: true, rtpCarrier: { attach: 'stall' }, onSignal: (d) => deliver(b, rewrite(d, relay.portB)) });
  b = new SimplePeerPath({ pathId: 0, initiator: false, rtpCarrier: { attach: 'stall' }, onSignal: (d) => deliver(a, rewrite(d, relay.portA)) });
  const signalled: string[] = [];
  function deliver(to: SimplePeerPath, d: Record<string, unknown> | null) {
    if (!d) return;
    const c = d.candidate as { candidate?: string; sdpMid?: string } | undefined;
    if (c?.candidate) signalled.push(`${to === b ? 'A' : 'B'} mid ${c.sdpMid}: ${c.candidate}`);
    setTimeout(() => to.signal(d), 0);
  }
  const deadline = performance.now() + 20_000;
  while (performance.now() < deadline) {
    if (a.state === 'connected' && b.state === 'connected' && car(a) && car(b) && pc(a).signalingState === 'stable') break;
    if (typeof a.rtpCarrier === 'string' || typeof b.rtpCarrier === 'string') break;
    await sleep(50);
  }
  await sleep(500); // anything that would negotiate the carrier without a stall would do it by now
  return state({ candidatesSignalled: signalled });
}

/**
 * A second pair C (initiator) / D over `relay` with `rtpCarrier: true` (attach 'connect', the default):
 * until both carriers are open, at most 20 s, without any stall; then closed.
 */
async function connectMode(relay: Relay): Promise<unknown> {
  const c: SimplePeerPath = new SimplePeerPath({ pathId: 1, initiator: true, rtpCarrier: true, onSignal: (x) => deliver(d, rewrite(x, relay.portB)) });
  const d: SimplePeerPath = new SimplePeerPath({ pathId: 1, initiator: false, rtpCarrier: true, onSignal: (x) => deliver(c, rewrite(x, relay.portA)) });
  function deliver(to: SimplePeerPath, x: Record<string, unknown> | null) {
    if (x) setTimeout(() => to.signal(x), 0);
  }
  const deadline = performance.now() + 20_000;
  while (performance.now() < deadline && !(car(c)?.open && car(d)?.open)) {
    if (typeof c.rtpCarrier === 'string' || typeof d.rtpCarrier === 'string') break;
    await sleep(50);
  }
  const out = {
    states: [c.state, d.state],
    open: [car(c)?.open ?? false, car(d)?.open ?? false],
    unavailable: [c.rtpCarrier, d.rtpCarrier].map((x) => (typeof x === 'string' ? x : undefined)),
    counters: [(car(c) as RtpCarrier | undefined)?.counters, (car(d) as RtpCarrier | undefined)?.counters],
    remoteSdp: pc(c)?.remoteDescription?.sdp ?? '',
  };
  c.close();
  d.close();
  return out;
}

/** Until both carriers are open (B wakes its carrier if the stall test did not), at most 20 s. */
async function ensureOpen(): Promise<unknown> {
  (car(b) as RtpCarrier).wake();
  const deadline = performance.now() + 20_000;
  while (performance.now() < deadline && !(car(a)?.open && car(b)?.open)) await sleep(50);
  return state();
}

/**
 * B sends `kbps` of 1000-byte datagrams through a StallFallbackSink over its datachannel and its (idle)
 * carrier, in 10 ms ticks (each tick also reads the sink's bufferedAmount, as the sender engine does);
 * A counts per 100 ms what arrives on the carrier and on the datachannel.
 */
let fallback: StallFallbackSink | undefined;
const stallLog: Array<{ t: number; carrierIn: number; dcIn: number; buffered: number; pipe: string }> = [];
let stallTimer: ReturnType<typeof setInterval> | undefined;
function startStallLoad(kbps: number): void {
  const sink = new StallFallbackSink({ datachannel: { send: (d) => b.send(d), bufferedAmount: () => b.bufferedAmount() }, carrier: () => car(b), clock: monotonicClock });
  fallback = sink;
  let row = { t: -1, carrierIn: 0, dcIn: 0, buffered: 0, pipe: '' };
  const cur = () => {
    const t = Math.floor(now() / 100) * 100;
    if (row.t !== t) {
      row = { t, carrierIn: 0, dcIn: 0, buffered: 0, pipe: sink.stats().pipe };
      stallLog.push(row);
    }
    return row;
  };
  // The path's 'message' event carries both pipes' datagrams (the carrier's synchronously after its own
  // 'message'): dcIn counts all of them and stopStallLoad takes the carrier's out.
  (car(a) as DatagramCarrier).on('message', () => cur().carrierIn++);
  a.on('message', () => cur().dcIn++);
  let seq = 0;
  let credit = 0;
  let last = performance.now();
  stallTimer = setInterval(() => {
    const t = performance.now();
    credit = Math.min(credit + ((t - last) * kbps) / 8, 20_000);
    last = t;
    const r = cur();
    while (credit >= 1000) {
      credit -= 1000;
      sink.send(datagram(seq++, 1000));
    }
    r.buffered = Math.max(r.buffered, sink.bufferedAmount(), b.bufferedAmount());
  }, 10);
}
function stopStallLoad(): unknown {
  clearInterval(stallTimer);
  stallTimer = undefined;
  return state({ log: stallLog.map((r) => ({ ...r, dcIn: r.dcIn - r.carrierIn })), fallback: fallback?.stats() });
}

/** Send `n` datagrams of 6..1200 bytes from `from` to `to` on the carrier, keeping the queue short; wait for them. */
async function integrity(dir: 'ab' | 'ba', n: number): Promise<unknown> {
  const [from, to] = dir === 'ab' ? [a, b] : [b, a];
  const tx = car(from) as DatagramCarrier;
  const rx = car(to) as DatagramCarrier;
  const got = new Map<number, number>();
  let bad = 0;
  let bytes = 0;
  const off = rx.on('message', (d) => {
    const s = check(d);
    if (s === null) bad++;
    else {
      got.set(s, (got.get(s) ?? 0) + 1);
      bytes += d.length;
    }
  });
  let sentBytes = 0;
  let refused = 0;
  for (let i = 0; i < n; i++) {
    const len = 6 + ((i * 397) % 1195);
    while (tx.queuedBytes() > 8000) await sleep(5);
    const d = datagram(i, len);
    if (tx.send(d)) sentBytes += len;
    else {
      refused++;
      i--;
      await sleep(20);
      if (refused > 500) break;
    }
  }
  const deadline = performance.now() + 10_000;
  while (got.size < n && performance.now() < deadline) await sleep(50);
  await sleep(300);
  off();
  return {
    sent: n,
    sentBytes,
    refused,
    distinct: got.size,
    duplicates: [...got.values()].reduce((s, c) => s + c - 1, 0),
    bytes,
    bad,
    worker: await (car(from) as RtpCarrier).workerStats(),
    rxWorker: await (car(to) as RtpCarrier).workerStats(),
    ceiling: tx.rateCeilingBps(),
  };
}

/** Offered load on A: carrier and datachannel, each `kbps`, 1000-byte datagrams, in 10 ms ticks; per-100 ms log. */
const log: Array<{ t: number; carrierIn: number; dcIn: number; carrierOut: number; dcOut: number; buffered: number; open: boolean; ice: string }> = [];
let loadTimer: ReturnType<typeof setInterval> | undefined;
let slot = { t: -1, carrierIn: 0, dcIn: 0, carrierOut: 0, dcOut: 0, buffered: 0, open: true, ice: '' };
let listening = false;
/** The log row of the current 100 ms. */
function cur() {
  const t = Math.floor(now() / 100) * 100;
  if (slot.t !== t) {
    slot = { t, carrierIn: 0, dcIn: 0, carrierOut: 0, dcOut: 0, buffered: 0, open: car(a)?.open ?? false, ice: a.iceConnectionState };
    log.push(slot);
  }
  return slot;
}
/** `follow`: offer at most 0.9 x the carrier's rate ceiling (Chromium's GCC estimate), as a caller must (README answer 3). */
function startLoad(kbps: number, on: 'both' | 'carrier' | 'datachannel' = 'both', follow = false): void {
  const ca = car(a) as DatagramCarrier;
  if (!listening) {
    (car(b) as DatagramCarrier).on('message', () => cur().carrierIn++);
    b.on('message', () => cur().dcIn++);
    listening = true;
  }
  let seq = 0;
  let credit = 0;
  let last = performance.now();
  loadTimer = setInterval(() => {
    const t = performance.now();
    const ceiling = follow ? ca.rateCeilingBps() : undefined;
    const rate = ceiling === undefined ? kbps : Math.min(kbps, (0.9 * ceiling) / 1000);
    credit = Math.min(credit + ((t - last) * rate) / 8, 20_000);
    last = t;
    const s = cur();
    while (credit >= 1000) {
      credit -= 1000;
      const d = datagram(seq++, 1000);
      if (on !== 'datachannel' && ca.queuedBytes() < 30_000 && ca.send(d)) s.carrierOut++;
      if (on !== 'carrier' && a.bufferedAmount() < 4_000_000 && a.send(d)) s.dcOut++;
    }
    s.buffered = Math.max(s.buffered, a.bufferedAmount());
  }, 10);
}
async function stopLoad(): Promise<unknown> {
  clearInterval(loadTimer);
  loadTimer = undefined;
  return { log, now: now(), worker: await (car(a) as RtpCarrier).workerStats(), counters: (car(a) as RtpCarrier).counters };
}

/** Cumulative counts (for the CPU measurement): delivered datagrams on each pipe and the A carrier worker's frames. */
async function stopLoadStats(): Promise<Record<string, number>> {
  const w = (await (car(a) as RtpCarrier).workerStats()) as unknown as Record<string, number>;
  return { carrierIn: log.reduce((s, r) => s + r.carrierIn, 0), dcIn: log.reduce((s, r) => s + r.dcIn, 0), framesSent: w.framesSent, framesIn: w.framesIn, framesEmpty: w.framesEmpty };
}

(window as unknown as Record<string, unknown>).carrierTest = {
  setup,
  connectMode,
  ensureOpen,
  startStallLoad,
  stopStallLoad,
  integrity,
  startLoad,
  stopLoad,
  stopLoadStats,
  now,
  close: () => (a.close(), b.close()),
};
