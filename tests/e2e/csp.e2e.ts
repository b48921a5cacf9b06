/**
 * Issue 14 item 3: the library under a strict Content-Security-Policy. The
 * peer pages are served with `script-src 'self'` (no 'unsafe-eval', no
 * inline scripts); a short two-path call must connect, decode video and log
 * no CSP violation. Before the wire codec was generated at build time,
 * protobufjs compiled its codecs with `new Function` and every packet failed
 * here. Behaviour only, wide margins.
 */
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../sim/net/scenario.js';
import { runCall } from '../../tools/harness/run-call.js';
import { describeCall, outDir } from './out-dir.js';

const CSP = "script-src 'self'";

describe('strict CSP', () => {
  it(`holds a call on pages served with Content-Security-Policy: ${CSP}`, async () => {
    const scenario = parseScenario(
      {
        name: 'e2e-csp',
        paths: [
          { name: 'a', up: { rateMbps: 3, delayMs: 20, queue: { ms: 200 } } },
          { name: 'b', up: { rateMbps: 3, delayMs: 40, queue: { ms: 200 } } },
        ],
      },
      process.cwd(),
    );
    const { report: r } = await runCall({ out: outDir('csp'), scenario, durationS: 10, scheduler: 'roundrobin', contentSecurityPolicy: CSP });
    const violations = r.errors.filter((e) => /Content Security Policy|unsafe-eval|Refused to/i.test(e));
    expect(violations, violations.slice(0, 3).join(' | ')).toEqual([]);
    expect(r.errors.filter((e) => !/console/.test(e))).toEqual([]);
    expect(r.frames.decoded, describeCall(r)).toBeGreaterThan(30);
    for (const p of r.paths) expect(p.mediaPacketsSent, describeCall(r)).toBeGreaterThan(10);
  });
});
