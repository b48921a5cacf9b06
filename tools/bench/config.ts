/**
 * Parsing of `--compare` lists for the browser benchmark.
 *
 *   converge | minrtt | mtput | mrtp | roundrobin   our MultipathCall with that scheduler
 *   single:N                                        our MultipathCall on path N only
 *   native-webrtc:N                                 plain Chromium WebRTC over path N only
 *
 * An optional `@fec` suffix picks our FEC policy for that entry
 * (`converge@none`, `minrtt@webrtc-table`); otherwise the global --fec applies.
 */

export type BenchConfig =
  | { name: string; kind: 'multipath'; scheduler: string; singlePath?: number; fec: string }
  | { name: string; kind: 'native'; path: number };

export const SCHEDULERS = ['converge', 'minrtt', 'mtput', 'mrtp', 'roundrobin'] as const;
export const FEC_POLICIES = ['path', 'webrtc-table', 'none'] as const;

/**
 * Parse a comma-separated `--compare` list.
 * @throws Error naming the bad entry (unknown scheduler or FEC policy, bad or
 *   out-of-range path index, duplicate, empty list).
 */
export function parseCompare(list: string, numPaths: number, defaultFec = 'path'): BenchConfig[] {
  const out: BenchConfig[] = [];
  const names = new Set<string>();
  const pathIndex = (s: string, entry: string): number => {
    const n = Number(s);
    if (!/^\d+$/.test(s) || n >= numPaths) throw new Error(`--compare ${entry}: path must be 0..${numPaths - 1}`);
    return n;
  };
  for (const raw of list.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    if (names.has(entry)) throw new Error(`--compare: ${entry} given twice`);
    names.add(entry);
    const [base, fecPart] = entry.split('@');
    const fec = fecPart ?? defaultFec;
    if (!(FEC_POLICIES as readonly string[]).includes(fec)) throw new Error(`--compare ${entry}: FEC policy must be one of ${FEC_POLICIES.join(', ')}`);
    const [kind, arg] = base.split(':');
    if (kind === 'native-webrtc') {
      if (fecPart !== undefined) throw new Error(`--compare ${entry}: native-webrtc takes no @fec`);
      if (arg === undefined) throw new Error(`--compare ${entry}: say which path, e.g. native-webrtc:0`);
      out.push({ name: entry, kind: 'native', path: pathIndex(arg, entry) });
    } else if (kind === 'single') {
      if (arg === undefined) throw new Error(`--compare ${entry}: say which path, e.g. single:0`);
      out.push({ name: entry, kind: 'multipath', scheduler: 'single', singlePath: pathIndex(arg, entry), fec });
    } else if ((SCHEDULERS as readonly string[]).includes(kind) && arg === undefined) {
      out.push({ name: entry, kind: 'multipath', scheduler: kind, fec });
    } else {
      throw new Error(`--compare: unknown configuration ${JSON.stringify(entry)} (use ${SCHEDULERS.join('|')}, single:N or native-webrtc:N)`);
    }
  }
  if (out.length === 0) throw new Error('--compare: empty list');
  return out;
}
