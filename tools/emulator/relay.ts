/**
 * User-space UDP path emulator (this machine's kernel has no netem).
 *
 * One {@link PathRelay} per network path: two UDP sockets on 127.0.0.1.
 * Side A faces peer A (the media sender), side B faces peer B (the
 * receiver). A datagram received on socket A goes through the `up`
 * {@link Link} and leaves from socket B towards peer B; a datagram received
 * on socket B goes through the `down` link and leaves from socket A towards
 * peer A. Each browser therefore sees the relay's socket as the remote
 * address of that path (the signalling layer rewrites ICE candidates so).
 *
 * Peer addresses: learned from the source address of datagrams received on
 * each side (ICE retransmits its checks, so a first check dropped because the
 * other side is still unknown is harmless). If a side later sends from a new
 * address, the relay follows the LATEST one (counted in `peerChanges`), which
 * is what ICE does when it switches candidate pairs. {@link PathRelay.setPeer}
 * sets one explicitly. Datagrams are only ever sent to this host's addresses:
 * the sockets are bound to 127.0.0.1, so learned sources are this host, and
 * `setPeer` refuses anything else.
 *
 * NAT side A ({@link PathRelayOptions.natSideA}, for links in front of a
 * server, e.g. a TURN server behind the link): every distinct source on side
 * A gets its own socket towards peer B (an endpoint-independent mapping, RFC
 * 4787 section 4.1), and what peer B sends to that socket goes back to that
 * source only. Without it every client behind the link would reach the server
 * from one address and only the latest client would get the replies.
 *
 * Timing: link time is µs since `epochMs` (a `performance.now()` value,
 * default: relay start), so several relays of one emulator share scenario
 * time 0. One `setTimeout` per relay is armed at the earliest
 * `nextEventUs()` of its two links (ms granularity, rounded up); when it
 * fires, everything due by `performance.now()` is sent, so timer lateness
 * never accumulates as drift.
 */
import { type Socket, createSocket } from 'node:dgram';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Rng } from '../../src/core/rng.js';
import type { Link, LinkStats } from '../../sim/net/link.js';
import { DEFAULT_SCENARIO, type Scenario, buildLink } from '../../sim/net/scenario.js';

/** Bytes added to each UDP payload when charging it to a link (IPv4 20 + UDP 8 headers). */
export const DEFAULT_OVERHEAD_BYTES = 28;

export type RelaySide = 'a' | 'b';

export interface PeerAddress {
  address: string;
  port: number;
}

export interface PathRelayOptions {
  /** Path index (0-based), informational. */
  pathId: number;
  /** Media direction: peer A -> peer B. */
  up: Link<Buffer>;
  /** Feedback direction: peer B -> peer A. */
  down: Link<Buffer>;
  /** Bind address; only loopback is supported. */
  host?: '127.0.0.1';
  /** `performance.now()` (ms) that is link time 0 (default: now). */
  epochMs?: number;
  /** Fixed ports (default 0 = ephemeral). */
  portA?: number;
  portB?: number;
  /** Header bytes charged per datagram on top of its payload (default {@link DEFAULT_OVERHEAD_BYTES}). */
  overheadBytes?: number;
  /**
   * Side A is a NAT (default false): one socket towards peer B per distinct side-A source (at most
   * {@link MAX_DISTINCT_SOURCES}; datagrams of further sources are dropped and counted in `natDrops`). Mappings
   * never expire: they live until {@link PathRelay.close} (a harness call opens a few).
   * Peer B must be set with {@link PathRelay.setPeer} (or learned from its first datagram to port B).
   */
  natSideA?: boolean;
}

/** Relay-level counters (link-level ones are in {@link LinkStats}). */
export interface RelayCounters {
  /** Datagrams delivered by a link while the destination peer was still unknown (dropped). */
  noPeerDrops: number;
  /** `socket.send` failures and socket errors. */
  sendErrors: number;
  /** Times a side's learned address changed (not counted on a NAT side A, where clients alternate by design). */
  peerChanges: number;
  /**
   * Distinct source addresses seen per side (counted up to {@link MAX_DISTINCT_SOURCES}): more than one on a
   * side means several clients (sockets) share the link; only the latest is answered unless side A is a NAT.
   */
  sourcesA: number;
  sourcesB: number;
  /** NAT side A: datagrams dropped because the source would have needed a mapping beyond the bound. */
  natDrops: number;
  /** NAT side A: mappings (sockets towards peer B) opened. */
  natMappings: number;
}

/** NAT side A: a side-A source and the relay's socket that speaks for it towards peer B. */
interface NatMapping {
  sock: Socket;
  client: PeerAddress;
}

/** Distinct source addresses a relay remembers per side (a bound on the diagnostic set and on NAT mappings). */
const MAX_DISTINCT_SOURCES = 16;

export interface PathRelayStats {
  up: LinkStats;
  down: LinkStats;
  relay: RelayCounters;
}

export interface PathRelay {
  readonly pathId: number;
  readonly host: string;
  /** Port of socket A: peer A sends here. */
  readonly portA: number;
  /** Port of socket B: peer B sends here. */
  readonly portB: number;
  stats(): PathRelayStats;
  /** Manual blackhole of both directions (flushes the bottleneck queues when going down). */
  setDown(down: boolean): void;
  /** Set a peer's address explicitly. @throws Error if not an address of this host or a bad port */
  setPeer(side: RelaySide, address: string, port: number): void;
  /** Learned/set address of a peer, if known. */
  peer(side: RelaySide): PeerAddress | undefined;
  /** Stop timers and close both sockets (and a NAT side's mapping sockets); in-flight datagrams are discarded. Idempotent. */
  close(): Promise<void>;
}

/**
 * True for an address of this very machine: loopback, or one of its own
 * interfaces' addresses (Chromium does not gather 127.0.0.1 candidates, so a
 * browser's host candidate is the machine's interface address; datagrams to
 * it never leave the host).
 */
export function isThisHost(address: string): boolean {
  if (isLoopback(address)) return true;
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.address === address) return true;
  }
  return false;
}

/** True for 127.0.0.0/8, ::1 and ::ffff:127.x.y.z. */
export function isLoopback(address: string): boolean {
  if (isIP(address) === 4) return address.startsWith('127.');
  if (isIP(address) === 6) return address === '::1' || address.toLowerCase().startsWith('::ffff:127.');
  return false;
}

function bind(sock: Socket, port: number, host: string): Promise<number> {
  return new Promise((res, rej) => {
    const onErr = (e: Error): void => rej(e);
    sock.once('error', onErr);
    sock.bind(port, host, () => {
      sock.off('error', onErr);
      res(sock.address().port);
    });
  });
}

function closeSocket(sock: Socket): Promise<void> {
  return new Promise((res) => {
    try {
      sock.close(() => res());
    } catch {
      res(); // already closed
    }
  });
}

/**
 * Start the relay of one path.
 *
 * @returns once both sockets are bound
 * @throws Error if a socket cannot be bound (both are closed then)
 */
export async function startPathRelay(opts: PathRelayOptions): Promise<PathRelay> {
  const host = opts.host ?? '127.0.0.1';
  if (host !== '127.0.0.1') throw new Error(`startPathRelay: only 127.0.0.1 is supported, got ${String(host)}`);
  const overhead = opts.overheadBytes ?? DEFAULT_OVERHEAD_BYTES;
  if (!Number.isFinite(overhead) || overhead < 0) throw new RangeError(`startPathRelay: overheadBytes must be >= 0, got ${overhead}`);
  const epochMs = opts.epochMs ?? performance.now();
  const { up, down } = opts;
  const nowUs = (): number => (performance.now() - epochMs) * 1000;

  const sockA = createSocket('udp4');
  const sockB = createSocket('udp4');
  let portA: number;
  let portB: number;
  try {
    portA = await bind(sockA, opts.portA ?? 0, host);
    portB = await bind(sockB, opts.portB ?? 0, host);
  } catch (e) {
    await Promise.all([closeSocket(sockA), closeSocket(sockB)]);
    throw e;
  }

  const counters: RelayCounters = { noPeerDrops: 0, sendErrors: 0, peerChanges: 0, sourcesA: 0, sourcesB: 0, natDrops: 0, natMappings: 0 };
  // NAT side A: source "address:port" -> its socket towards peer B; a datagram in a link remembers its mapping.
  const mappings = new Map<string, NatMapping>();
  const via = new WeakMap<Buffer, NatMapping>();
  const seen = { a: new Set<string>(), b: new Set<string>() };
  const peers: { a?: PeerAddress; b?: PeerAddress } = {};
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAtUs = Infinity;

  const onSendDone = (err: Error | null): void => {
    if (err) counters.sendErrors++;
  };

  const learn = (side: RelaySide, address: string, port: number): void => {
    const set = seen[side];
    if (set.size < MAX_DISTINCT_SOURCES && !set.has(`${address}:${port}`)) {
      set.add(`${address}:${port}`);
      if (side === 'a') counters.sourcesA = set.size;
      else counters.sourcesB = set.size;
    }
    const cur = peers[side];
    if (cur && cur.address === address && cur.port === port) return;
    if (cur && !(side === 'a' && opts.natSideA)) counters.peerChanges++;
    peers[side] = { address, port };
  };

  const forward = (sock: Socket, to: PeerAddress | undefined, batch: Array<{ item: Buffer }>, toClient: boolean): void => {
    for (const { item } of batch) {
      // NAT side A: upstream leaves from the source's own socket; downstream goes back to that source only.
      const m = via.get(item);
      const from = m && !toClient ? m.sock : sock;
      const dest = m && toClient ? m.client : to;
      if (!dest) {
        counters.noPeerDrops++;
        continue;
      }
      try {
        from.send(item, dest.port, dest.address, onSendDone);
      } catch {
        counters.sendErrors++;
      }
    }
  };

  const tick = (): void => {
    timer = undefined;
    timerAtUs = Infinity;
    if (closed) return;
    const now = nowUs();
    forward(sockB, peers.b, up.poll(now), false);
    forward(sockA, peers.a, down.poll(now), true);
    arm();
  };

  const arm = (): void => {
    if (closed) return;
    const u = up.nextEventUs();
    const d = down.nextEventUs();
    const next = u === undefined ? d : d === undefined ? u : Math.min(u, d);
    if (next === undefined) {
      if (timer) clearTimeout(timer);
      timer = undefined;
      timerAtUs = Infinity;
      return;
    }
    if (timer && timerAtUs <= next) return;
    if (timer) clearTimeout(timer);
    timerAtUs = next;
    timer = setTimeout(tick, Math.max(0, Math.ceil((next - nowUs()) / 1000)));
  };

  const mappingFor = (client: PeerAddress): NatMapping | undefined => {
    const key = `${client.address}:${client.port}`;
    const have = mappings.get(key);
    if (have) return have;
    if (mappings.size >= MAX_DISTINCT_SOURCES) return undefined;
    const sock = createSocket('udp4');
    const m = { sock, client };
    mappings.set(key, m);
    counters.natMappings++;
    let bound = false;
    sock.once('listening', () => {
      bound = true;
    });
    sock.on('error', () => {
      counters.sendErrors++;
      if (bound || mappings.get(key) !== m) return;
      // The bind failed: forget the mapping (the source's next datagram opens a new one) and drop the socket
      // (node:dgram would otherwise re-bind it on 0.0.0.0 at the next send; close() does not wait for it).
      mappings.delete(key);
      try {
        sock.close();
      } catch {
        /* already closed */
      }
    });
    sock.on('message', (msg, rinfo) => {
      if (closed || !isLoopback(rinfo.address)) return;
      learn('b', rinfo.address, rinfo.port);
      via.set(msg, m);
      down.send(msg, msg.length + overhead, nowUs());
      arm();
    });
    sock.bind(0, host); // sends issued before the bind completes are queued by node:dgram
    return m;
  };

  sockA.on('message', (msg, rinfo) => {
    if (closed) return;
    if (opts.natSideA) {
      const m = mappingFor({ address: rinfo.address, port: rinfo.port });
      if (!m) {
        counters.natDrops++;
        return;
      }
      via.set(msg, m);
    }
    learn('a', rinfo.address, rinfo.port);
    up.send(msg, msg.length + overhead, nowUs());
    arm();
  });
  sockB.on('message', (msg, rinfo) => {
    if (closed) return;
    learn('b', rinfo.address, rinfo.port);
    down.send(msg, msg.length + overhead, nowUs());
    arm();
  });
  sockA.on('error', () => counters.sendErrors++);
  sockB.on('error', () => counters.sendErrors++);

  return {
    pathId: opts.pathId,
    host,
    portA,
    portB,
    stats: () => ({ up: up.stats(), down: down.stats(), relay: { ...counters } }),
    setDown(isDown: boolean): void {
      const now = nowUs();
      up.setDown(isDown, now);
      down.setDown(isDown, now);
      if (timer) clearTimeout(timer);
      timer = undefined;
      timerAtUs = Infinity;
      arm();
    },
    setPeer(side: RelaySide, address: string, port: number): void {
      if (side !== 'a' && side !== 'b') throw new Error(`setPeer: side must be 'a' or 'b', got ${String(side)}`);
      if (!isThisHost(address)) throw new Error(`setPeer: only addresses of this host are allowed, got ${address}`);
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`setPeer: bad port ${port}`);
      learn(side, address, port);
    },
    peer: (side: RelaySide) => (peers[side] ? { ...peers[side] } : undefined),
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await Promise.all([closeSocket(sockA), closeSocket(sockB), ...[...mappings.values()].map((m) => closeSocket(m.sock))]);
    },
  };
}

// ---------------------------------------------------------------- whole emulator

export interface EmulatorOptions {
  /** Seed of the loss models (each link gets its own stream derived from it). */
  seed: number;
  host?: '127.0.0.1';
  /** `performance.now()` (ms) that is scenario time 0 (default: when the emulator starts). */
  epochMs?: number;
  overheadBytes?: number;
  /** Every relay's side A is a NAT ({@link PathRelayOptions.natSideA}; default false). */
  natSideA?: boolean;
}

export interface PathStats extends PathRelayStats {
  pathId: number;
  name: string;
}

export interface Emulator {
  readonly scenario: Scenario;
  /** One relay per scenario path, index = pathId. */
  readonly relays: readonly PathRelay[];
  /** `performance.now()` (ms) of scenario time 0. */
  readonly epochMs: number;
  /**
   * Where a peer must send for `pathId`: side 'a' = the address peer A (media
   * sender) uses as peer B's candidate; side 'b' = the address peer B uses.
   * @throws RangeError on an unknown path
   */
  addressFor(pathId: number, side: RelaySide): PeerAddress;
  stats(): PathStats[];
  close(): Promise<void>;
}

/** Seed of link `dir` (0 = up, 1 = down) of path `pathId`, derived from the emulator seed. */
export function linkSeed(seed: number, pathId: number, dir: 0 | 1): number {
  return (Math.imul((seed >>> 0) ^ 0x5bd1e995, 0x9e3779b1) + Math.imul(pathId * 2 + dir + 1, 0x85ebca6b)) >>> 0;
}

/**
 * Start one relay per path of `scenario` (default {@link DEFAULT_SCENARIO}).
 * Scenario time 0 (down periods, schedules, trace start) = `opts.epochMs`.
 *
 * @throws TraceError / RangeError on a bad trace or link config; socket errors (already started relays are closed)
 */
export async function startEmulator(scenario: Scenario = DEFAULT_SCENARIO, opts: EmulatorOptions): Promise<Emulator> {
  const epochMs = opts.epochMs ?? performance.now();
  const relays: PathRelay[] = [];
  try {
    for (let i = 0; i < scenario.paths.length; i++) {
      const p = scenario.paths[i];
      const up = buildLink<Buffer>(p.up, new Rng(linkSeed(opts.seed, i, 0)));
      const down = buildLink<Buffer>(p.down, new Rng(linkSeed(opts.seed, i, 1)));
      relays.push(
        await startPathRelay({
          pathId: i,
          up,
          down,
          host: opts.host ?? '127.0.0.1',
          epochMs,
          natSideA: opts.natSideA ?? false,
          ...(opts.overheadBytes !== undefined ? { overheadBytes: opts.overheadBytes } : {}),
        }),
      );
    }
  } catch (e) {
    await Promise.all(relays.map((r) => r.close()));
    throw e;
  }
  const relayOf = (pathId: number): PathRelay => {
    const r = relays[pathId];
    if (!r) throw new RangeError(`emulator: unknown path ${pathId} (have ${relays.length})`);
    return r;
  };
  return {
    scenario,
    relays,
    epochMs,
    addressFor(pathId: number, side: RelaySide): PeerAddress {
      const r = relayOf(pathId);
      if (side !== 'a' && side !== 'b') throw new RangeError(`emulator: side must be 'a' or 'b', got ${String(side)}`);
      return { address: r.host, port: side === 'a' ? r.portA : r.portB };
    },
    stats: () => relays.map((r, i) => ({ pathId: i, name: scenario.paths[i].name, ...r.stats() })),
    close: async () => {
      await Promise.all(relays.map((r) => r.close()));
    },
  };
}
