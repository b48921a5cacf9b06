/**
 * Network trace loaders for the emulator and the simulator.
 *
 * Every capacity source (mahimahi delivery-opportunity files, per-second byte
 * counts, Mbps sample lists, a constant rate) becomes one {@link CapacityTrace}:
 * a dense array of bytes the bottleneck may send at each millisecond of a loop
 * period. Delay sources (ping RTT lists, a constant) become a
 * {@link DelayTrace}: a piecewise-constant one-way delay in ms.
 *
 * The `parse*` functions are pure (text in, trace out) and usable anywhere;
 * only the `load*` functions touch the file system (Node `fs`).
 *
 * Sources: mahimahi `README.upstream` (Winstein et al., NSDI 2013; mm-link
 * trace semantics: one line = one 1500-byte opportunity at that ms, repeated
 * timestamps = several, the file loops at its last timestamp); Aydin et al.
 * (INFOCOM CNERT 2023) `second,bytesPerSecond` CSV; Ghoshal et al.
 * (5G-MeMU 2022) `.list` files.
 */
import { readFileSync } from 'node:fs';

/** Bytes one mahimahi delivery opportunity lets leave the queue (one MTU). */
export const MAHIMAHI_MTU_BYTES = 1500;

/**
 * Sampling period assumed for the 5G uplink `.list` files (throughput and
 * ping). Their README.upstream does not state one; 1000 ms is the default
 * report interval of iperf3 and ping. Override with `sampleMs` when known.
 */
export const DEFAULT_LIST_SAMPLE_MS = 1000;

/** Longest trace period accepted (ms): bounds the dense per-ms array (~8 MB per 1000 s). */
export const MAX_TRACE_PERIOD_MS = 4 * 3600 * 1000;

/** Stable reason codes of {@link TraceError}. */
export type TraceErrorCode =
  | 'io' // file cannot be read
  | 'syntax' // a line does not have the expected shape
  | 'value' // a number is negative, not finite, or not an integer where required
  | 'order' // timestamps decrease
  | 'empty' // no samples / zero total capacity / zero period
  | 'run' // requested run does not exist
  | 'range'; // trace too long or bad option

/** A malformed trace file or a bad loader option. `line` is 1-based (0 = whole file). */
export class TraceError extends Error {
  readonly code: TraceErrorCode;
  readonly file: string;
  readonly line: number;

  constructor(code: TraceErrorCode, file: string, line: number, detail: string) {
    super(line > 0 ? `${file}:${line}: ${detail}` : `${file}: ${detail}`);
    this.name = 'TraceError';
    this.code = code;
    this.file = file;
    this.line = line;
  }
}

/**
 * Time-varying bottleneck capacity, looping with period `periodMs`.
 *
 * Millisecond `i` of the period (`0 <= i < periodMs`) offers `bytesPerMs[i]`
 * bytes, usable at the instant `i` ms and lost if the queue is empty then
 * (mahimahi semantics). Link time `t` ms maps to index `t mod periodMs`.
 */
export interface CapacityTrace {
  /** Where it came from (file path or a description), for messages. */
  readonly name: string;
  /** Loop period in ms, integer >= 1. */
  readonly periodMs: number;
  /** Bytes offered at each ms of the period, length `periodMs`, all >= 0, sum > 0. */
  readonly bytesPerMs: Float64Array;
}

/**
 * Time-varying one-way propagation delay: `delayMs[k]` holds during
 * `[k*stepMs, (k+1)*stepMs)` of a loop of `delayMs.length * stepMs` ms.
 */
export interface DelayTrace {
  readonly name: string;
  /** Duration of one sample in ms (> 0). */
  readonly stepMs: number;
  /** One-way delay samples in ms, all finite >= 0, length >= 1. */
  readonly delayMs: Float64Array;
}

function checkPeriod(name: string, periodMs: number): void {
  if (periodMs > MAX_TRACE_PERIOD_MS) {
    throw new TraceError('range', name, 0, `trace period ${periodMs} ms exceeds the limit of ${MAX_TRACE_PERIOD_MS} ms`);
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new TraceError('io', path, 0, `cannot read trace file: ${(e as Error).message}`);
  }
}

function splitLines(text: string): string[] {
  return text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

// ---------------------------------------------------------------- mahimahi

/**
 * Parse a mahimahi trace: one non-negative integer ms timestamp per line,
 * non-decreasing; each line = one {@link MAHIMAHI_MTU_BYTES}-byte delivery
 * opportunity; repeated timestamps = several opportunities in that ms. The
 * trace loops with period = last timestamp (as mm-link: the file "1" is one
 * packet per ms = 12 Mbps), so an opportunity at the last timestamp coincides
 * with ms 0 of the next loop. Blank lines are ignored.
 *
 * @param text file contents
 * @param name file name used in error messages
 * @throws TraceError (code syntax/value/order/empty) naming `name` and the 1-based line
 */
export function parseMahimahi(text: string, name: string): CapacityTrace {
  const lines = splitLines(text);
  const stamps: number[] = [];
  let prev = -1;
  for (let i = 0; i < lines.length; i++) {
    const s = lines[i].trim();
    if (s === '') continue;
    if (!/^\d+$/.test(s)) {
      throw new TraceError('syntax', name, i + 1, `expected a non-negative integer ms timestamp, got ${JSON.stringify(s.slice(0, 40))}`);
    }
    const t = Number(s);
    if (!Number.isSafeInteger(t)) throw new TraceError('value', name, i + 1, `timestamp ${s} is too large`);
    if (t < prev) throw new TraceError('order', name, i + 1, `timestamp ${t} ms is smaller than the previous one (${prev} ms)`);
    prev = t;
    stamps.push(t);
  }
  if (stamps.length === 0) throw new TraceError('empty', name, 0, 'trace has no delivery opportunities');
  const periodMs = stamps[stamps.length - 1];
  if (periodMs <= 0) {
    throw new TraceError('empty', name, 0, 'last timestamp must be > 0 ms (it is the loop period)');
  }
  checkPeriod(name, periodMs);
  const bytesPerMs = new Float64Array(periodMs);
  for (const t of stamps) bytesPerMs[t % periodMs] += MAHIMAHI_MTU_BYTES;
  return { name, periodMs, bytesPerMs };
}

/** Read and parse a mahimahi trace file. @throws TraceError (also code io) */
export function loadMahimahi(path: string): CapacityTrace {
  return parseMahimahi(readText(path), path);
}

// ---------------------------------------------------------------- second,bytesPerSecond CSV

/**
 * Parse a `second,bytesPerSecond` CSV (wifi-cellular data set): one line per
 * second, consecutive integer seconds (the first may be any value; an
 * optional non-numeric header line is allowed), bytes as a non-negative
 * number. Second k's bytes are spread evenly over its 1000 ms. Loops after
 * the last second. CRLF line ends are accepted.
 *
 * @throws TraceError naming `name` and the 1-based line
 */
export function parseBytesPerSecondCsv(text: string, name: string): CapacityTrace {
  const lines = splitLines(text);
  const rates: number[] = [];
  let prevSecond: number | undefined;
  let sawData = false;
  for (let i = 0; i < lines.length; i++) {
    const s = lines[i].trim();
    if (s === '') continue;
    const parts = s.split(',');
    if (!sawData && parts.length === 2 && !/\d/.test(parts[0]) && !/\d/.test(parts[1])) continue; // header
    if (parts.length !== 2) {
      throw new TraceError('syntax', name, i + 1, `expected "second,bytesPerSecond", got ${JSON.stringify(s.slice(0, 40))}`);
    }
    const sec = Number(parts[0].trim());
    const bps = Number(parts[1].trim());
    if (parts[0].trim() === '' || !Number.isInteger(sec) || sec < 0) {
      throw new TraceError('value', name, i + 1, `second must be a non-negative integer, got ${JSON.stringify(parts[0])}`);
    }
    if (parts[1].trim() === '' || !Number.isFinite(bps) || bps < 0) {
      throw new TraceError('value', name, i + 1, `bytesPerSecond must be a finite number >= 0, got ${JSON.stringify(parts[1])}`);
    }
    if (prevSecond !== undefined && sec !== prevSecond + 1) {
      throw new TraceError('order', name, i + 1, `second ${sec} does not follow ${prevSecond} (seconds must be consecutive)`);
    }
    prevSecond = sec;
    sawData = true;
    rates.push(bps);
  }
  return fromPerSampleBytesPerSecond(name, rates, 1000);
}

/** Read and parse a `second,bytesPerSecond` CSV file. @throws TraceError */
export function loadBytesPerSecondCsv(path: string): CapacityTrace {
  return parseBytesPerSecondCsv(readText(path), path);
}

/** `file`/`line` locate errors; `name` names the trace. */
function fromPerSampleBytesPerSecond(file: string, bytesPerSecond: number[], sampleMs: number, name = file, line = 0): CapacityTrace {
  if (bytesPerSecond.length === 0) throw new TraceError('empty', file, line, 'trace has no samples');
  let total = 0;
  for (const r of bytesPerSecond) total += r;
  if (!(total > 0)) throw new TraceError('empty', file, line, 'trace has zero total capacity');
  const periodMs = Math.round(bytesPerSecond.length * sampleMs);
  checkPeriod(file, periodMs);
  const bytesPerMs = new Float64Array(periodMs);
  for (let ms = 0; ms < periodMs; ms++) {
    const k = Math.min(bytesPerSecond.length - 1, Math.floor(ms / sampleMs));
    bytesPerMs[ms] = bytesPerSecond[k] / 1000;
  }
  return { name, periodMs, bytesPerMs };
}

// ---------------------------------------------------------------- 5G uplink .list

/** One "Run N" block of a `.list` file. */
export interface ListRun {
  /** N from the "Run N" header. */
  run: number;
  /** 1-based line of the samples. */
  line: number;
  samples: number[];
}

/**
 * Parse a 5G-uplink `.list` file into its runs: `#...` separator lines,
 * `Run N` headers, then one line of comma-separated non-negative numbers
 * (a run's samples may span several lines). Blank lines are ignored.
 *
 * @throws TraceError (syntax/value/empty) naming `name` and the 1-based line
 */
export function parseRunList(text: string, name: string): ListRun[] {
  const lines = splitLines(text);
  const runs: ListRun[] = [];
  let cur: ListRun | undefined;
  for (let i = 0; i < lines.length; i++) {
    const s = lines[i].trim();
    if (s === '' || /^#+$/.test(s)) continue;
    const header = /^Run\s+(\d+)$/i.exec(s);
    if (header) {
      const run = Number(header[1]);
      if (runs.some((r) => r.run === run)) throw new TraceError('syntax', name, i + 1, `duplicate header "Run ${run}"`);
      cur = { run, line: i + 1, samples: [] };
      runs.push(cur);
      continue;
    }
    if (!cur) throw new TraceError('syntax', name, i + 1, `samples before the first "Run N" header: ${JSON.stringify(s.slice(0, 40))}`);
    if (cur.samples.length === 0) cur.line = i + 1;
    const fields = s.split(',');
    for (let f = 0; f < fields.length; f++) {
      const v = fields[f].trim();
      if (f === fields.length - 1 && v === '') continue; // trailing comma
      const x = Number(v);
      if (v === '' || !Number.isFinite(x) || x < 0) {
        throw new TraceError('value', name, i + 1, `sample ${f + 1} must be a finite number >= 0, got ${JSON.stringify(v.slice(0, 40))}`);
      }
      cur.samples.push(x);
    }
  }
  if (runs.length === 0) throw new TraceError('empty', name, 0, 'no "Run N" block found');
  for (const r of runs) {
    if (r.samples.length === 0) throw new TraceError('empty', name, r.line, `Run ${r.run} has no samples`);
  }
  return runs;
}

function pickRun(runs: ListRun[], name: string, run: number): ListRun {
  const r = runs.find((x) => x.run === run);
  if (!r) {
    throw new TraceError('run', name, 0, `no "Run ${run}" in the file (runs: ${runs.map((x) => x.run).join(', ')})`);
  }
  return r;
}

/** Options of the `.list` loaders. */
export interface ListOptions {
  /** Run number as written in the "Run N" header (default 1). */
  run?: number;
  /** Sampling period in ms (default {@link DEFAULT_LIST_SAMPLE_MS}). */
  sampleMs?: number;
}

function checkSampleMs(name: string, sampleMs: number): void {
  if (!Number.isFinite(sampleMs) || sampleMs < 1 || !Number.isInteger(sampleMs)) {
    throw new TraceError('range', name, 0, `sampleMs must be an integer >= 1, got ${sampleMs}`);
  }
}

/**
 * Parse a 5G-uplink throughput `.list` (Mbps samples) into a capacity trace:
 * sample k holds for `[k*sampleMs, (k+1)*sampleMs)`, the run loops.
 *
 * @throws TraceError (also code run when the run is missing, empty when its total is 0)
 */
export function parseMbpsList(text: string, name: string, opts: ListOptions = {}): CapacityTrace {
  const sampleMs = opts.sampleMs ?? DEFAULT_LIST_SAMPLE_MS;
  checkSampleMs(name, sampleMs);
  const r = pickRun(parseRunList(text, name), name, opts.run ?? 1);
  return fromPerSampleBytesPerSecond(
    name,
    r.samples.map((mbps) => (mbps * 1e6) / 8),
    sampleMs,
    `${name}#run${r.run}`,
    r.line,
  );
}

/** Read and parse a throughput `.list` file. @throws TraceError */
export function loadMbpsList(path: string, opts: ListOptions = {}): CapacityTrace {
  return parseMbpsList(readText(path), path, opts);
}

/**
 * Parse a 5G-uplink ping `.list` (RTT samples in ms) into a one-way delay
 * trace: one-way delay = RTT * `rttScale` (default 0.5, i.e. a symmetric
 * path). Sample k holds for `[k*sampleMs, (k+1)*sampleMs)`; loops.
 *
 * @throws TraceError
 */
export function parsePingList(text: string, name: string, opts: ListOptions & { rttScale?: number } = {}): DelayTrace {
  const sampleMs = opts.sampleMs ?? DEFAULT_LIST_SAMPLE_MS;
  checkSampleMs(name, sampleMs);
  const scale = opts.rttScale ?? 0.5;
  if (!Number.isFinite(scale) || scale <= 0) throw new TraceError('range', name, 0, `rttScale must be > 0, got ${scale}`);
  const r = pickRun(parseRunList(text, name), name, opts.run ?? 1);
  return { name: `${name}#run${r.run}`, stepMs: sampleMs, delayMs: Float64Array.from(r.samples, (x) => x * scale) };
}

/** Read and parse a ping `.list` file. @throws TraceError */
export function loadPingList(path: string, opts: ListOptions & { rttScale?: number } = {}): DelayTrace {
  return parsePingList(readText(path), path, opts);
}

// ---------------------------------------------------------------- synthetic

/**
 * A constant capacity of `bps` bits per second (1 ms period, `bps/8000` bytes
 * per ms). 12e6 equals the mahimahi trace "1".
 *
 * @throws RangeError if `bps` is not finite or <= 0
 */
export function constantRate(bps: number): CapacityTrace {
  if (!Number.isFinite(bps) || bps <= 0) throw new RangeError(`constantRate: bps must be a finite number > 0, got ${bps}`);
  return { name: `constant ${bps / 1e6} Mbps`, periodMs: 1, bytesPerMs: Float64Array.of(bps / 8000) };
}

/** A constant one-way delay of `ms` milliseconds. @throws RangeError if negative or not finite */
export function constantDelay(ms: number): DelayTrace {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`constantDelay: ms must be finite and >= 0, got ${ms}`);
  return { name: `constant ${ms} ms`, stepMs: 1, delayMs: Float64Array.of(ms) };
}

// ---------------------------------------------------------------- helpers

/** Positive modulo for integers. */
function mod(a: number, m: number): number {
  const r = a % m;
  return r < 0 ? r + m : r;
}

/**
 * Bytes the trace offers at integer link-time millisecond `ms` (looping;
 * `offsetMs` shifts the start into the trace).
 */
export function capacityAt(trace: CapacityTrace, ms: number, offsetMs = 0): number {
  return trace.bytesPerMs[mod(Math.floor(ms) + Math.floor(offsetMs), trace.periodMs)];
}

/** Mean capacity over one full period, in bits per second. */
export function meanRateBps(trace: CapacityTrace): number {
  let sum = 0;
  for (let i = 0; i < trace.periodMs; i++) sum += trace.bytesPerMs[i];
  return (sum * 8 * 1000) / trace.periodMs;
}

/**
 * Bytes offered during link time `[fromMs, toMs)` (integer ms, looping).
 * O(toMs - fromMs).
 */
export function bytesBetween(trace: CapacityTrace, fromMs: number, toMs: number, offsetMs = 0): number {
  let sum = 0;
  for (let ms = Math.floor(fromMs); ms < toMs; ms++) sum += capacityAt(trace, ms, offsetMs);
  return sum;
}

/** One-way delay (ms) of the trace at link time `ms` (looping, shifted by `offsetMs`). */
export function delayAt(trace: DelayTrace, ms: number, offsetMs = 0): number {
  const n = trace.delayMs.length;
  const k = Math.floor(mod(ms + offsetMs, n * trace.stepMs) / trace.stepMs);
  return trace.delayMs[Math.min(n - 1, k)];
}

/** Duration of one loop of the delay trace, ms. */
export function delayPeriodMs(trace: DelayTrace): number {
  return trace.delayMs.length * trace.stepMs;
}
