/**
 * Detect paths that ended on the same ICE candidate pair (same local and
 * remote address:port and protocol): they share one network route, so the
 * scheduler gains nothing from splitting over them. Feeds the 'same-pair'
 * event of the stats. Pure.
 *
 * Note: each path has its own RTCPeerConnection and therefore its own local
 * sockets, so two paths never share a local PORT in a browser; exact
 * address:port duplicates only appear behind address rewriting (NAT, relay)
 * or in fakes. To find paths that share a route (same local interface
 * address and same remote address), pass `{ ignorePorts: true }`: on a
 * loopback address (127.0.0.0/8, ::1), which names no network, the port
 * still counts (emulated paths, e.g. one UDP relay per path, differ only
 * there). MultipathCall's 'same-pair' event and the `transport` stats entry's `samePairPathIds` use
 * that route rule.
 */
import type { PathId } from '../core/types.js';
import type { SelectedPair } from './types.js';

/** Matching options. */
export interface PairMatchOptions {
  /** Compare addresses only (same route), not ports (same socket pair). Default false. */
  ignorePorts?: boolean;
}

/** True for a loopback address (127.0.0.0/8 or ::1): it names no network, so its port tells emulated paths apart. */
export function isLoopback(address: string): boolean {
  return /^127\./.test(address) || address === '::1' || address === '[::1]';
}

/** `protocol local-address:port -> remote-address:port` (ports omitted with `ignorePorts`, except on loopback addresses). */
export function pairKey(pair: SelectedPair, opts: PairMatchOptions = {}): string {
  const p = pair.local.protocol.toLowerCase();
  if (opts.ignorePorts) {
    const end = (c: SelectedPair['local']): string => (isLoopback(c.address) ? `${c.address}:${c.port}` : c.address);
    return `${p} ${end(pair.local)} -> ${end(pair.remote)}`;
  }
  return `${p} ${pair.local.address}:${pair.local.port} -> ${pair.remote.address}:${pair.remote.port}`;
}

/** Paths sharing one candidate pair. */
export interface DuplicatePairGroup {
  key: string;
  /** Ascending path ids, at least two. */
  pathIds: PathId[];
}

/**
 * Group paths by selected pair and return the groups with two or more paths,
 * ordered by their smallest path id. Paths with an undefined pair are ignored.
 * @param pairs map or entry list pathId -> selected pair.
 */
export function findDuplicatePairs(pairs: ReadonlyMap<PathId, SelectedPair | undefined> | Iterable<readonly [PathId, SelectedPair | undefined]>, opts: PairMatchOptions = {}): DuplicatePairGroup[] {
  const byKey = new Map<string, PathId[]>();
  for (const [pathId, pair] of pairs) {
    if (!pair) continue;
    const k = pairKey(pair, opts);
    const list = byKey.get(k);
    if (list) {
      if (!list.includes(pathId)) list.push(pathId);
    } else byKey.set(k, [pathId]);
  }
  const out: DuplicatePairGroup[] = [];
  for (const [key, ids] of byKey) {
    if (ids.length > 1) out.push({ key, pathIds: ids.sort((a, b) => a - b) });
  }
  return out.sort((a, b) => a.pathIds[0]! - b.pathIds[0]!);
}

/**
 * Remembers the last duplicate groups so a 'same-pair' event fires only when
 * the set of duplicates changes (e.g. after an ICE restart).
 */
export class SamePairDetector {
  private last = '';

  constructor(private readonly opts: PairMatchOptions = {}) {}

  /**
   * @returns the new duplicate groups when they differ from the previous call
   *   (including becoming empty), else undefined.
   */
  update(pairs: ReadonlyMap<PathId, SelectedPair | undefined> | Iterable<readonly [PathId, SelectedPair | undefined]>): DuplicatePairGroup[] | undefined {
    const groups = findDuplicatePairs(pairs, this.opts);
    const sig = groups.map((g) => `${g.key}=${g.pathIds.join(',')}`).join(';');
    if (sig === this.last) return undefined;
    this.last = sig;
    return groups;
  }
}

/**
 * Convenience form of {@link findDuplicatePairs} for a list of
 * `{ pathId, pair }`: returns only the path-id groups (each ascending, at
 * least two paths), e.g. for a 'same-pair' event or a stats field.
 */
export function findSharedPairs(list: Iterable<{ pathId: PathId; pair: SelectedPair | undefined }>, opts: PairMatchOptions = {}): PathId[][] {
  const entries: [PathId, SelectedPair | undefined][] = [];
  for (const e of list) entries.push([e.pathId, e.pair]);
  return findDuplicatePairs(entries, opts).map((g) => g.pathIds);
}
