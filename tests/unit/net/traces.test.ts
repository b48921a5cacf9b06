import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  MAHIMAHI_MTU_BYTES,
  TraceError,
  bytesBetween,
  capacityAt,
  constantDelay,
  constantRate,
  delayAt,
  delayPeriodMs,
  loadBytesPerSecondCsv,
  loadMahimahi,
  loadMbpsList,
  loadPingList,
  meanRateBps,
  parseBytesPerSecondCsv,
  parseMahimahi,
  parseMbpsList,
  parsePingList,
  parseRunList,
} from '../../../sim/net/traces.js';

const TRACES = join(__dirname, '../../../../shared/traces');
const HAVE_SHARED = existsSync(TRACES);
if (!HAVE_SHARED) console.warn(`[traces.test] skipping real-trace tests: ${TRACES} is absent`);

function expectTraceError(fn: () => unknown, code: string, line: number, file = 'bad.trace'): TraceError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TraceError);
    const te = e as TraceError;
    expect(te.code).toBe(code);
    expect(te.line).toBe(line);
    expect(te.file).toBe(file);
    expect(te.message).toContain(file);
    if (line > 0) expect(te.message).toContain(`:${line}:`);
    return te;
  }
  throw new Error('expected a TraceError');
}

describe('parseMahimahi', () => {
  it('turns timestamps into 1500-byte opportunities per ms, repeated stamps stack, loops at the last stamp', () => {
    const t = parseMahimahi('0\n3\n3\n7\n10\n', 'x');
    expect(t.periodMs).toBe(10);
    expect(t.bytesPerMs[0]).toBe(2 * MAHIMAHI_MTU_BYTES); // ms 0 and ms 10 (= next loop's 0)
    expect(t.bytesPerMs[3]).toBe(2 * MAHIMAHI_MTU_BYTES);
    expect(t.bytesPerMs[7]).toBe(MAHIMAHI_MTU_BYTES);
    expect(t.bytesPerMs[1]).toBe(0);
    expect(capacityAt(t, 13)).toBe(2 * MAHIMAHI_MTU_BYTES);
    expect(capacityAt(t, 17)).toBe(MAHIMAHI_MTU_BYTES);
    expect(capacityAt(t, 3, 4)).toBe(MAHIMAHI_MTU_BYTES); // offset 4: link ms 3 = trace ms 7
  });

  it('the file "1" is 12 Mbps, like mm-link', () => {
    const t = parseMahimahi('1\n', 'one');
    expect(t.periodMs).toBe(1);
    expect(meanRateBps(t)).toBe(12e6);
  });

  it('accepts CRLF and blank lines', () => {
    expect(parseMahimahi('1\r\n\r\n2\r\n', 'crlf').periodMs).toBe(2);
  });

  it('rejects malformed files naming file and 1-based line', () => {
    expectTraceError(() => parseMahimahi('1\n2\nabc\n4\n', 'bad.trace'), 'syntax', 3);
    expectTraceError(() => parseMahimahi('1\n5\n3\n', 'bad.trace'), 'order', 3);
    expectTraceError(() => parseMahimahi('-1\n', 'bad.trace'), 'syntax', 1);
    expectTraceError(() => parseMahimahi('1.5\n', 'bad.trace'), 'syntax', 1);
    expectTraceError(() => parseMahimahi('1\n\n2 3\n', 'bad.trace'), 'syntax', 3);
    expectTraceError(() => parseMahimahi('', 'bad.trace'), 'empty', 0);
    expectTraceError(() => parseMahimahi('0\n0\n', 'bad.trace'), 'empty', 0);
  });

  it('reports unreadable files as io errors', () => {
    const e = expectTraceError(() => loadMahimahi('/nonexistent/x.up'), 'io', 0, '/nonexistent/x.up');
    expect(e.message).toContain('/nonexistent/x.up');
  });
});

describe('parseBytesPerSecondCsv', () => {
  it('spreads each second evenly over its 1000 ms', () => {
    const t = parseBytesPerSecondCsv('1,1000000\r\n2,2000000\r\n3,0\r\n', 'w.csv');
    expect(t.periodMs).toBe(3000);
    expect(t.bytesPerMs[0]).toBe(1000);
    expect(t.bytesPerMs[1999]).toBe(2000);
    expect(t.bytesPerMs[2500]).toBe(0);
    expect(bytesBetween(t, 0, 3000)).toBeCloseTo(3_000_000, 6);
    expect(meanRateBps(t)).toBeCloseTo(8e6, 6);
  });

  it('skips a header line', () => {
    expect(parseBytesPerSecondCsv('second,bytes\n1,10\n', 'h.csv').periodMs).toBe(1000);
  });

  it('rejects malformed lines', () => {
    expectTraceError(() => parseBytesPerSecondCsv('1,10\n2,20,3\n', 'bad.trace'), 'syntax', 2);
    expectTraceError(() => parseBytesPerSecondCsv('1,10\n2,-5\n', 'bad.trace'), 'value', 2);
    expectTraceError(() => parseBytesPerSecondCsv('1,10\n2,x\n', 'bad.trace'), 'value', 2);
    expectTraceError(() => parseBytesPerSecondCsv('1,10\n3,10\n', 'bad.trace'), 'order', 2);
    expectTraceError(() => parseBytesPerSecondCsv('1,0\n2,0\n', 'bad.trace'), 'empty', 0);
  });
});

const LIST = `
###############################
Run 1
0,8,16
###############################
Run 2
4,4
`;

describe('parseMbpsList / parsePingList', () => {
  it('reads runs and their samples with the line of each run', () => {
    const runs = parseRunList(LIST, 'l.list');
    expect(runs.map((r) => r.run)).toEqual([1, 2]);
    expect(runs[0].samples).toEqual([0, 8, 16]);
    expect(runs[1].line).toBe(7);
  });

  it('converts Mbps samples to a capacity trace with the sampling period', () => {
    const t = parseMbpsList(LIST, 'l.list', { run: 1, sampleMs: 200 });
    expect(t.periodMs).toBe(600);
    expect(t.bytesPerMs[0]).toBe(0);
    expect(t.bytesPerMs[200]).toBe(1000); // 8 Mbps = 1000 bytes/ms
    expect(t.bytesPerMs[599]).toBe(2000);
    expect(meanRateBps(parseMbpsList(LIST, 'l.list', { run: 2 }))).toBeCloseTo(4e6, 6);
    expect(parseMbpsList(LIST, 'l.list', { run: 2 }).periodMs).toBe(2000); // default 1000 ms samples
  });

  it('converts ping RTT samples to one-way delay (RTT/2)', () => {
    const d = parsePingList(LIST, 'p.list', { run: 1, sampleMs: 100 });
    expect(Array.from(d.delayMs)).toEqual([0, 4, 8]);
    expect(delayAt(d, 150)).toBe(4);
    expect(delayAt(d, 350)).toBe(0); // loops
    expect(delayPeriodMs(d)).toBe(300);
  });

  it('rejects malformed lists', () => {
    expectTraceError(() => parseRunList('1,2,3\n', 'bad.trace'), 'syntax', 1);
    expectTraceError(() => parseRunList('Run 1\n1,2,abc\n', 'bad.trace'), 'value', 2);
    expectTraceError(() => parseRunList('Run 1\n1,,3\n', 'bad.trace'), 'value', 2);
    expectTraceError(() => parseRunList('Run 1\n\nRun 2\n1\n', 'bad.trace'), 'empty', 1);
    expectTraceError(() => parseMbpsList(LIST, 'bad.trace', { run: 7 }), 'run', 0);
    expectTraceError(() => parseMbpsList(LIST, 'bad.trace', { sampleMs: 0 }), 'range', 0);
    expectTraceError(() => parseMbpsList('Run 1\n0,0\n', 'bad.trace'), 'empty', 2);
  });
});

describe('synthetic traces', () => {
  it('constantRate / constantDelay', () => {
    expect(constantRate(12e6).bytesPerMs[0]).toBe(1500);
    expect(meanRateBps(constantRate(8e6))).toBe(8e6);
    expect(() => constantRate(0)).toThrow(RangeError);
    expect(() => constantRate(Number.NaN)).toThrow(RangeError);
    expect(delayAt(constantDelay(30), 123456)).toBe(30);
    expect(() => constantDelay(-1)).toThrow(RangeError);
  });
});

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out;
}

describe.skipIf(!HAVE_SHARED)('real traces under ../shared/traces', () => {
  it('mahimahi files match the README mean capacities', () => {
    const expected: Record<string, number> = {
      'Verizon-LTE-short.up': 5.95,
      'Verizon-LTE-short.down': 5.03,
      'TMobile-LTE-short.up': 13.32,
      'TMobile-LTE-short.down': 16.7,
      'ATT-LTE-driving.up': 0.83,
      'ATT-LTE-driving.down': 5.17,
    };
    for (const [f, mbps] of Object.entries(expected)) {
      const t = loadMahimahi(join(TRACES, 'mahimahi', f));
      expect(Math.abs(meanRateBps(t) / 1e6 - mbps), f).toBeLessThan(0.01);
    }
    expect(loadMahimahi(join(TRACES, 'mahimahi/Verizon-LTE-short.up')).periodMs).toBe(140_000);
  });

  it('every wifi-cellular CSV parses (CRLF, no trailing newline)', () => {
    const files = listFiles(join(TRACES, 'wifi-cellular')).filter((f) => f.endsWith('.csv'));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const t = loadBytesPerSecondCsv(f);
      expect(t.periodMs % 1000).toBe(0);
      expect(meanRateBps(t)).toBeGreaterThan(0);
    }
    const t = loadBytesPerSecondCsv(join(TRACES, 'wifi-cellular/7_1_wifi.csv'));
    expect(t.periodMs).toBe(100_000);
    expect(t.bytesPerMs[0]).toBeCloseTo(5471.526, 6);
  });

  it('every 5G-uplink list parses; runs and sample counts are right', () => {
    const files = listFiles(join(TRACES, '5g-uplink')).filter((f) => f.endsWith('.list'));
    expect(files.length).toBeGreaterThan(20);
    for (const f of files) {
      const runs = parseRunList(readFileSync(f, 'utf8'), f);
      expect(runs.length).toBeGreaterThan(0);
    }
    const tp = loadMbpsList(join(TRACES, '5g-uplink/throughput/static/5g/away_p1.list'), { run: 1 });
    expect(tp.periodMs).toBe(173 * 1000);
    const ping = loadPingList(join(TRACES, '5g-uplink/ping/static/5g/away_p1.list'), { run: 1 });
    expect(ping.delayMs[0]).toBe(156.5); // RTT 313 ms
  });
});
