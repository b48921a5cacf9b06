/**
 * ICE candidate lines: parsing, grouping by local network, and the policy
 * that decides which local candidates each path signals. Pure (no I/O).
 *
 * Candidate grammar: RFC 8839 §5.1 (`candidate-attribute`):
 * `candidate:<foundation> <component> <transport> <priority> <address> <port>
 *  typ <host|srflx|prflx|relay> [raddr <a>] [rport <p>] *(<ext-name> <ext-value>)`.
 * libwebrtc adds the extensions `tcptype`, `generation`, `ufrag`,
 * `network-id` and `network-cost` (see libwebrtc `api/candidate.cc`,
 * `p2p/base/port.cc`, `pc/webrtc_sdp.cc`).
 *
 * Why per-path candidate filtering is only a hint: a path's RTCPeerConnection
 * still owns sockets on every local interface. Filtering decides which of OUR
 * candidates the remote side learns, so it steers which REMOTE address each
 * of our sockets checks; but the remote's checks can still reach our
 * unsignalled sockets and create peer-reflexive (prflx) candidates (RFC 8445
 * §7.3.1.3), and our own unsignalled sockets still pair with the remote's
 * signalled candidates. The pair finally selected must therefore be checked
 * with `selectedPair()` / {@link ./path-set.ts}.
 */
import type { PathId } from '../core/types.js';

/** One parsed candidate line. */
export interface ParsedCandidate {
  foundation: string;
  /** 1 = RTP (or the only component with BUNDLE/datachannels), 2 = RTCP. */
  component: number;
  /** Lowercase transport: 'udp' | 'tcp' (others kept as given, lowercased). */
  protocol: string;
  /** ICE priority, uint32 (RFC 8445 §5.1.2). */
  priority: number;
  /** IP address, or an mDNS `*.local` name. */
  address: string;
  port: number;
  /** 'host' | 'srflx' | 'prflx' | 'relay'. */
  type: string;
  relatedAddress?: string;
  relatedPort?: number;
  tcpType?: string;
  generation?: number;
  ufrag?: string;
  /** libwebrtc's id of the local network interface (per interface and IP family). */
  networkId?: number;
  /** libwebrtc's network cost (0 wired/unknown, 10 ethernet, 50 wifi, 900 cellular, ...). */
  networkCost?: number;
}

const CANDIDATE_TYPES = new Set(['host', 'srflx', 'prflx', 'relay']);
const FOUNDATION_RE = /^[A-Za-z0-9+/]{1,32}$/;
const UINT_RE = /^[0-9]{1,10}$/;
/** Longest candidate line accepted (bytes of text); libwebrtc lines are ~150 chars. */
export const MAX_CANDIDATE_LINE = 1024;

function uint(s: string | undefined, max: number): number | undefined {
  if (s === undefined || !UINT_RE.test(s)) return undefined;
  const n = Number(s);
  return n <= max ? n : undefined;
}

/**
 * Parse one candidate line, with or without the `a=` prefix; `candidate:`
 * is required. Returns undefined for any malformed line (never throws).
 */
export function parseCandidate(line: unknown): ParsedCandidate | undefined {
  if (typeof line !== 'string' || line.length > MAX_CANDIDATE_LINE) return undefined;
  let s = line.trim();
  if (s.startsWith('a=')) s = s.slice(2);
  if (!s.startsWith('candidate:')) return undefined;
  const tok = s.slice('candidate:'.length).split(/\s+/);
  if (tok.length < 8 || tok[6] !== 'typ') return undefined;
  const [foundation, componentS, protocolS, priorityS, address, portS, , type] = tok as [string, string, string, string, string, string, string, string];
  const component = uint(componentS, 256);
  const priority = uint(priorityS, 0xffff_ffff);
  const port = uint(portS, 65535);
  if (!FOUNDATION_RE.test(foundation) || component === undefined || component < 1) return undefined;
  if (priority === undefined || port === undefined || address.length === 0) return undefined;
  if (!/^[A-Za-z]{1,16}$/.test(protocolS) || !CANDIDATE_TYPES.has(type)) return undefined;
  const c: ParsedCandidate = { foundation, component, protocol: protocolS.toLowerCase(), priority, address, port, type };
  const rest = tok.slice(8);
  if (rest.length % 2 !== 0) return undefined;
  for (let i = 0; i < rest.length; i += 2) {
    const key = rest[i]!;
    const val = rest[i + 1]!;
    switch (key) {
      case 'raddr':
        c.relatedAddress = val;
        break;
      case 'rport': {
        const p = uint(val, 65535);
        if (p === undefined) return undefined;
        c.relatedPort = p;
        break;
      }
      case 'tcptype':
        c.tcpType = val;
        break;
      case 'generation': {
        const g = uint(val, 0xffff_ffff);
        if (g === undefined) return undefined;
        c.generation = g;
        break;
      }
      case 'ufrag':
        c.ufrag = val;
        break;
      case 'network-id': {
        const n = uint(val, 0xffff_ffff);
        if (n === undefined) return undefined;
        c.networkId = n;
        break;
      }
      case 'network-cost': {
        const n = uint(val, 0xffff);
        if (n === undefined) return undefined;
        c.networkCost = n;
        break;
      }
      default:
        break; // unknown extension attribute: ignored (RFC 8839 §5.1)
    }
  }
  return c;
}

/** Parse many lines; malformed ones are dropped and counted. */
export function parseCandidates(lines: Iterable<unknown>): { candidates: ParsedCandidate[]; malformed: number } {
  const candidates: ParsedCandidate[] = [];
  let malformed = 0;
  for (const l of lines) {
    const c = parseCandidate(l);
    if (c) candidates.push(c);
    else malformed++;
  }
  return { candidates, malformed };
}

/**
 * Key of the local network a candidate belongs to: `id:<network-id>` when
 * the browser gives one (Chrome), else `addr:<interface address>` (the host
 * address, or `raddr` — the base — for srflx/prflx/relay candidates).
 */
export function networkKey(c: ParsedCandidate): string {
  if (c.networkId !== undefined) return `id:${c.networkId}`;
  const base = c.type !== 'host' && c.relatedAddress && c.relatedAddress !== '0.0.0.0' && c.relatedAddress !== '::' ? c.relatedAddress : c.address;
  return `addr:${base}`;
}

/** Local candidates sharing one network. */
export interface NetworkGroup {
  key: string;
  networkId?: number;
  /** Interface address: the smallest host-candidate address of the group (or the base address). */
  address: string;
  candidates: ParsedCandidate[];
}

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Group local candidates by network, ordered deterministically: groups with
 * a network-id first, by ascending id; then the others by address.
 */
export function groupByNetwork(candidates: Iterable<ParsedCandidate>): NetworkGroup[] {
  const map = new Map<string, NetworkGroup>();
  for (const c of candidates) {
    const key = networkKey(c);
    let g = map.get(key);
    if (!g) {
      g = { key, address: '', candidates: [] };
      if (c.networkId !== undefined) g.networkId = c.networkId;
      map.set(key, g);
    }
    g.candidates.push(c);
  }
  for (const g of map.values()) {
    if (g.key.startsWith('addr:')) {
      g.address = g.key.slice(5);
      continue;
    }
    const hosts = g.candidates
      .filter((c) => c.type === 'host')
      .map((c) => c.address)
      .sort(cmpStr);
    const first = g.candidates[0]!;
    g.address = hosts[0] ?? first.relatedAddress ?? first.address;
  }
  return [...map.values()].sort((a, b) => {
    if (a.networkId !== undefined && b.networkId !== undefined) return a.networkId - b.networkId;
    if (a.networkId !== undefined) return -1;
    if (b.networkId !== undefined) return 1;
    return cmpStr(a.address, b.address);
  });
}

/** Structural RTCIceServer (no DOM dependency). */
export interface IceServerConfig {
  urls: string | string[];
  username?: string;
  credential?: string;
}

/** App-given filter: true keeps `candidate` for path `pathId`. */
export type CandidateFilter = (candidate: ParsedCandidate, pathId: PathId) => boolean;

/** What to do with a local candidate whose network was not in the snapshot given to `byNetwork`. */
export type UnknownNetworkAction = 'allow' | 'drop';

/** Counters of a {@link PathCandidatePolicy}. */
export interface CandidatePolicyStats {
  allowed: number;
  rejected: number;
  /** by-network only: candidates of a network absent from the snapshot. */
  unknownNetwork: number;
  /** Candidate filters that threw (the candidate was then allowed). */
  filterErrors: number;
}

/**
 * Which local ICE candidates each path signals, and which ICE servers it uses.
 *
 * - `byNetwork(localCandidates)`: groups the snapshot with
 *   {@link groupByNetwork}; path i signals only the candidates of group
 *   `i mod groupCount`. With one network every path signals the same
 *   candidates: paths then differ only through the REMOTE side's candidates
 *   (its networks, or a relay/NAT rewriting addresses per path).
 * - `filter(fn)`: the app decides per candidate and path.
 * - `perPathIceServers(servers)`: every candidate is signalled; paths differ
 *   by their ICE servers (e.g. one TURN server per path).
 * - `all()`: no filtering.
 *
 * The snapshot should come from one gathering pass in the same page
 * (Chrome's network-ids are stable within a page). See the module comment
 * for why filtering is a hint, not a guarantee.
 */
export class PathCandidatePolicy {
  readonly kind: 'all' | 'by-network' | 'filter' | 'ice-servers';
  /** Network groups (by-network only; empty otherwise). */
  readonly groups: readonly NetworkGroup[];
  readonly counters: CandidatePolicyStats = { allowed: 0, rejected: 0, unknownNetwork: 0, filterErrors: 0 };
  private readonly keyToGroup = new Map<string, number>();
  private readonly fn: CandidateFilter | undefined;
  private readonly servers: ((pathId: PathId) => IceServerConfig[] | undefined) | undefined;
  private readonly unknown: UnknownNetworkAction;

  private constructor(
    kind: PathCandidatePolicy['kind'],
    groups: NetworkGroup[],
    fn: CandidateFilter | undefined,
    servers: ((pathId: PathId) => IceServerConfig[] | undefined) | undefined,
    unknown: UnknownNetworkAction,
  ) {
    this.kind = kind;
    this.groups = groups;
    this.fn = fn;
    this.servers = servers;
    this.unknown = unknown;
    for (const [i, g] of groups.entries()) this.keyToGroup.set(g.key, i);
  }

  /** No filtering: every path signals every candidate. */
  static all(): PathCandidatePolicy {
    return new PathCandidatePolicy('all', [], undefined, undefined, 'allow');
  }

  /**
   * One network group per path, round-robin.
   * @param localCandidates snapshot of local candidates (lines or parsed); malformed lines are ignored.
   * @param unknownNetwork a later candidate from a network absent from the snapshot is
   *   'allow'ed on every path (default: keeps connectivity when interfaces change) or 'drop'ped.
   */
  static byNetwork(localCandidates: Iterable<string | ParsedCandidate>, unknownNetwork: UnknownNetworkAction = 'allow'): PathCandidatePolicy {
    const parsed: ParsedCandidate[] = [];
    for (const c of localCandidates) {
      const p = typeof c === 'string' ? parseCandidate(c) : c;
      if (p) parsed.push(p);
    }
    return new PathCandidatePolicy('by-network', groupByNetwork(parsed), undefined, undefined, unknownNetwork);
  }

  /** App-given filter. Exceptions in it allow the candidate (and are counted). */
  static filter(fn: CandidateFilter): PathCandidatePolicy {
    if (typeof fn !== 'function') throw new TypeError('PathCandidatePolicy.filter: fn must be a function');
    return new PathCandidatePolicy('filter', [], fn, undefined, 'allow');
  }

  /**
   * Per-path ICE servers (array indexed by path id, or a function); every candidate is signalled.
   * A path with no entry uses the transport's default servers.
   */
  static perPathIceServers(servers: readonly IceServerConfig[][] | ((pathId: PathId) => IceServerConfig[] | undefined)): PathCandidatePolicy {
    const fn = typeof servers === 'function' ? servers : (pathId: PathId) => servers[pathId];
    return new PathCandidatePolicy('ice-servers', [], undefined, fn, 'allow');
  }

  /** True when by-network found at most one network (all paths share it). */
  get singleNetwork(): boolean {
    return this.kind === 'by-network' && this.groups.length <= 1;
  }

  /** Index into {@link groups} used by `pathId` (by-network only). */
  groupIndexFor(pathId: PathId): number | undefined {
    if (this.kind !== 'by-network' || this.groups.length === 0) return undefined;
    return pathId % this.groups.length;
  }

  /** Decide whether path `pathId` signals `candidate`; counts the outcome. Never throws. */
  allows(candidate: ParsedCandidate, pathId: PathId): boolean {
    let ok = true;
    if (this.kind === 'by-network' && this.groups.length > 1) {
      const g = this.keyToGroup.get(networkKey(candidate));
      if (g === undefined) {
        this.counters.unknownNetwork++;
        ok = this.unknown === 'allow';
      } else {
        ok = g === pathId % this.groups.length;
      }
    } else if (this.kind === 'filter') {
      try {
        ok = this.fn!(candidate, pathId) !== false;
      } catch {
        this.counters.filterErrors++;
        ok = true;
      }
    }
    if (ok) this.counters.allowed++;
    else this.counters.rejected++;
    return ok;
  }

  /** The per-path filter to give to a transport. */
  filterFor(pathId: PathId): (candidate: ParsedCandidate) => boolean {
    return (c) => this.allows(c, pathId);
  }

  /** ICE servers for `pathId`: the per-path list when configured, else `fallback`. */
  iceServersFor(pathId: PathId, fallback: IceServerConfig[] = []): IceServerConfig[] {
    if (this.kind !== 'ice-servers') return fallback;
    try {
      return this.servers!(pathId) ?? fallback;
    } catch {
      return fallback;
    }
  }

  /** Human-readable summary, e.g. for logs: which group each of `pathCount` paths uses. */
  describe(pathCount: number): string {
    if (this.kind !== 'by-network') return this.kind;
    if (this.groups.length === 0) return 'by-network: no local candidates known; nothing filtered';
    const parts: string[] = [];
    for (let p = 0; p < pathCount; p++) {
      const g = this.groups[p % this.groups.length]!;
      parts.push(`path ${p} -> ${g.key} (${g.address})`);
    }
    const note = this.singleNetwork ? ' [single network: paths differ only by the remote side]' : '';
    return `by-network: ${parts.join(', ')}${note}`;
  }
}

/**
 * Remove `a=candidate:` lines of an SDP that `allow` rejects (for non-trickle
 * offers/answers, whose SDP carries the candidates). Malformed candidate
 * lines are dropped and counted. Other lines are kept byte for byte.
 */
export function filterSdpCandidates(sdp: string, allow: (c: ParsedCandidate) => boolean): { sdp: string; dropped: number; malformed: number } {
  const eol = sdp.includes('\r\n') ? '\r\n' : '\n';
  const lines = sdp.split(eol);
  const out: string[] = [];
  let dropped = 0;
  let malformed = 0;
  for (const line of lines) {
    if (line.startsWith('a=candidate:')) {
      const c = parseCandidate(line);
      if (!c) {
        malformed++;
        continue;
      }
      let ok = true;
      try {
        ok = allow(c);
      } catch {
        ok = true;
      }
      if (!ok) {
        dropped++;
        continue;
      }
    }
    out.push(line);
  }
  return { sdp: out.join(eol), dropped, malformed };
}
