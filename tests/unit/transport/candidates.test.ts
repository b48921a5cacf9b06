import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PathCandidatePolicy, filterSdpCandidates, groupByNetwork, networkKey, parseCandidate, parseCandidates } from '../../../src/transport/candidates.js';

const HOST_ETH = 'candidate:1467250027 1 udp 2122260223 192.0.2.2 46243 typ host generation 0 ufrag abcd network-id 1 network-cost 10';
const HOST_LO = 'candidate:2 1 udp 2122194687 127.0.0.1 51000 typ host generation 0 ufrag abcd network-id 2';
const TCP_ETH = 'candidate:3 1 tcp 1518280447 192.0.2.2 9 typ host tcptype active generation 0 ufrag abcd network-id 1';
const SRFLX = 'candidate:842163049 1 udp 1686052607 203.0.113.7 61000 typ srflx raddr 192.0.2.2 rport 46243 generation 0 ufrag abcd network-id 1';

describe('parseCandidate', () => {
  it('parses every field of a Chrome host candidate', () => {
    expect(parseCandidate(HOST_ETH)).toEqual({
      foundation: '1467250027',
      component: 1,
      protocol: 'udp',
      priority: 2122260223,
      address: '192.0.2.2',
      port: 46243,
      type: 'host',
      generation: 0,
      ufrag: 'abcd',
      networkId: 1,
      networkCost: 10,
    });
  });

  it('parses raddr/rport, tcptype, a= prefix, uppercase transport, IPv6 and mDNS', () => {
    const s = parseCandidate(`a=${SRFLX}`)!;
    expect(s).toMatchObject({ type: 'srflx', address: '203.0.113.7', relatedAddress: '192.0.2.2', relatedPort: 46243, networkId: 1 });
    expect(parseCandidate(TCP_ETH)).toMatchObject({ protocol: 'tcp', port: 9, tcpType: 'active' });
    expect(parseCandidate('candidate:1 1 UDP 100 fd00::2 5000 typ host')).toMatchObject({ protocol: 'udp', address: 'fd00::2' });
    expect(parseCandidate('candidate:1 1 udp 100 3f2c-uuid.local 5000 typ host')?.address).toBe('3f2c-uuid.local');
    // unknown extension pair ignored
    expect(parseCandidate('candidate:1 1 udp 100 1.2.3.4 5 typ host foo bar')?.address).toBe('1.2.3.4');
  });

  it('rejects malformed lines', () => {
    const bad = [
      '',
      'candidate:',
      'candidate:1 1 udp 100 1.2.3.4 5 host', // no typ
      'candidate:1 1 udp 100 1.2.3.4 5 typ weird',
      'candidate:1 0 udp 100 1.2.3.4 5 typ host', // component 0
      'candidate:1 1 udp 100 1.2.3.4 70000 typ host', // port
      'candidate:1 1 udp -5 1.2.3.4 5 typ host',
      'candidate:1 1 udp 4294967296 1.2.3.4 5 typ host', // > uint32
      'candidate:1 1 udp 100 1.2.3.4 5 typ host raddr', // odd ext pairs
      'candidate:1 1 udp 100 1.2.3.4 5 typ host network-id x',
      'candidate:1 1 udp 100 1.2.3.4 5 typ host rport 99999',
      'candidate:f@o 1 udp 100 1.2.3.4 5 typ host',
      'a=ice-ufrag:abcd',
      `candidate:1 1 udp 100 1.2.3.4 5 typ host ${'x y '.repeat(400)}`, // too long
    ];
    for (const l of bad) expect(parseCandidate(l), l).toBeUndefined();
    expect(parseCandidate(42)).toBeUndefined();
    expect(parseCandidate(null)).toBeUndefined();
  });

  it('never throws', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        parseCandidate(s);
        parseCandidate(`candidate:${s}`);
      }),
    );
  });

  it('counts malformed lines', () => {
    const r = parseCandidates([HOST_ETH, 'garbage', HOST_LO, 7]);
    expect(r.candidates).toHaveLength(2);
    expect(r.malformed).toBe(2);
  });
});

describe('groupByNetwork', () => {
  it('groups by network-id, ordered by id, srflx with its base network', () => {
    const { candidates } = parseCandidates([HOST_LO, SRFLX, HOST_ETH, TCP_ETH]);
    const g = groupByNetwork(candidates);
    expect(g.map((x) => x.key)).toEqual(['id:1', 'id:2']);
    expect(g[0]!.address).toBe('192.0.2.2');
    expect(g[0]!.candidates).toHaveLength(3);
    expect(g[1]!.address).toBe('127.0.0.1');
  });

  it('falls back to interface address (raddr for srflx) and orders id groups first', () => {
    const { candidates } = parseCandidates([
      'candidate:1 1 udp 100 10.0.0.5 1000 typ host',
      'candidate:2 1 udp 90 198.51.100.1 2000 typ srflx raddr 10.0.0.5 rport 1000',
      'candidate:3 1 udp 100 10.0.0.2 1000 typ host',
      'candidate:4 1 udp 100 172.16.0.1 1000 typ host network-id 9',
    ]);
    expect(networkKey(candidates[1]!)).toBe('addr:10.0.0.5');
    const g = groupByNetwork(candidates);
    expect(g.map((x) => x.key)).toEqual(['id:9', 'addr:10.0.0.2', 'addr:10.0.0.5']);
    expect(g[2]!.candidates).toHaveLength(2);
  });

  it('is independent of input order', () => {
    const lines = [HOST_LO, SRFLX, HOST_ETH, TCP_ETH, 'candidate:9 1 udp 1 10.1.1.1 1 typ host'];
    const ref = groupByNetwork(parseCandidates(lines).candidates).map((g) => g.key);
    fc.assert(
      fc.property(fc.shuffledSubarray(lines, { minLength: lines.length, maxLength: lines.length }), (shuffled) => {
        expect(groupByNetwork(parseCandidates(shuffled).candidates).map((g) => g.key)).toEqual(ref);
      }),
    );
  });
});

describe('PathCandidatePolicy', () => {
  const eth = parseCandidate(HOST_ETH)!;
  const lo = parseCandidate(HOST_LO)!;
  const srflx = parseCandidate(SRFLX)!;

  it('by-network: path i signals group i mod n', () => {
    const p = PathCandidatePolicy.byNetwork([HOST_ETH, HOST_LO, SRFLX]);
    expect(p.groups).toHaveLength(2);
    expect(p.singleNetwork).toBe(false);
    expect([0, 1, 2, 3].map((i) => p.groupIndexFor(i))).toEqual([0, 1, 0, 1]);
    expect(p.allows(eth, 0)).toBe(true);
    expect(p.allows(srflx, 0)).toBe(true);
    expect(p.allows(lo, 0)).toBe(false);
    expect(p.allows(lo, 1)).toBe(true);
    expect(p.allows(eth, 1)).toBe(false);
    expect(p.allows(eth, 2)).toBe(true);
    expect(p.counters).toMatchObject({ allowed: 4, rejected: 2 });
    expect(p.describe(2)).toContain('path 1 -> id:2 (127.0.0.1)');
  });

  it('by-network with a single network lets every path use it', () => {
    const p = PathCandidatePolicy.byNetwork([HOST_ETH, SRFLX]);
    expect(p.singleNetwork).toBe(true);
    for (let i = 0; i < 8; i++) expect(p.allows(eth, i)).toBe(true);
    expect(p.describe(2)).toContain('single network');
  });

  it('by-network: unknown networks allowed by default, dropped on request', () => {
    const other = parseCandidate('candidate:5 1 udp 100 10.9.9.9 1 typ host network-id 7')!;
    const allow = PathCandidatePolicy.byNetwork([HOST_ETH, HOST_LO]);
    expect(allow.allows(other, 0) && allow.allows(other, 1)).toBe(true);
    expect(allow.counters.unknownNetwork).toBe(2);
    const drop = PathCandidatePolicy.byNetwork([HOST_ETH, HOST_LO], 'drop');
    expect(drop.allows(other, 0) || drop.allows(other, 1)).toBe(false);
  });

  it('filter: app decides; a throwing filter allows and counts', () => {
    const p = PathCandidatePolicy.filter((c, pathId) => (pathId === 0 ? c.address === '127.0.0.1' : true));
    expect(p.filterFor(0)(lo)).toBe(true);
    expect(p.filterFor(0)(eth)).toBe(false);
    expect(p.filterFor(1)(eth)).toBe(true);
    const t = PathCandidatePolicy.filter(() => {
      throw new Error('x');
    });
    expect(t.allows(eth, 0)).toBe(true);
    expect(t.counters.filterErrors).toBe(1);
    expect(() => PathCandidatePolicy.filter(undefined as never)).toThrow(TypeError);
  });

  it('per-path ICE servers', () => {
    const turn0 = [{ urls: 'turn:a.example:3478', username: 'u', credential: 'c' }];
    const p = PathCandidatePolicy.perPathIceServers([turn0]);
    expect(p.iceServersFor(0)).toEqual(turn0);
    expect(p.iceServersFor(1, [{ urls: 'stun:s' }])).toEqual([{ urls: 'stun:s' }]);
    expect(p.allows(eth, 3)).toBe(true);
    expect(PathCandidatePolicy.all().iceServersFor(0)).toEqual([]);
  });
});

describe('filterSdpCandidates', () => {
  it('removes rejected and malformed candidate lines, keeps everything else', () => {
    const sdp = ['v=0', 'm=application 9 UDP/DTLS/SCTP webrtc-datachannel', `a=${HOST_ETH}`, `a=${HOST_LO}`, 'a=candidate:broken', 'a=end-of-candidates', ''].join('\r\n');
    const r = filterSdpCandidates(sdp, (c) => c.address !== '127.0.0.1');
    expect(r.dropped).toBe(1);
    expect(r.malformed).toBe(1);
    expect(r.sdp).toBe(['v=0', 'm=application 9 UDP/DTLS/SCTP webrtc-datachannel', `a=${HOST_ETH}`, 'a=end-of-candidates', ''].join('\r\n'));
  });
});
