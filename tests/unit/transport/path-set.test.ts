import { describe, expect, it } from 'vitest';
import { SamePairDetector, findDuplicatePairs, findSharedPairs, pairKey } from '../../../src/transport/path-set.js';
import { candidateInfoKey, selectedPairFromStats } from '../../../src/transport/selected-pair.js';
import type { SelectedPair } from '../../../src/transport/types.js';

function pair(la: string, lp: number, ra: string, rp: number, protocol = 'udp'): SelectedPair {
  return {
    local: { address: la, port: lp, protocol, type: 'host' },
    remote: { address: ra, port: rp, protocol, type: 'host' },
    id: `${la}:${lp}-${ra}:${rp}`,
  };
}

describe('findDuplicatePairs', () => {
  it('groups paths on the same local+remote address:port', () => {
    const m = new Map<number, SelectedPair | undefined>([
      [0, pair('192.0.2.2', 1000, '192.0.2.3', 2000)],
      [1, pair('127.0.0.1', 1001, '127.0.0.1', 2001)],
      [2, pair('192.0.2.2', 1000, '192.0.2.3', 2000)],
      [3, undefined],
      [4, pair('127.0.0.1', 1001, '127.0.0.1', 2001)],
      [5, pair('192.0.2.2', 1000, '192.0.2.3', 2001)], // different remote port
    ]);
    const g = findDuplicatePairs(m);
    expect(g).toEqual([
      { key: 'udp 192.0.2.2:1000 -> 192.0.2.3:2000', pathIds: [0, 2] },
      { key: 'udp 127.0.0.1:1001 -> 127.0.0.1:2001', pathIds: [1, 4] },
    ]);
  });

  it('findSharedPairs returns path-id groups from {pathId, pair} entries', () => {
    const p = pair('192.0.2.2', 1000, '192.0.2.3', 2000);
    expect(
      findSharedPairs([
        { pathId: 3, pair: p },
        { pathId: 1, pair: p },
        { pathId: 2, pair: undefined },
      ]),
    ).toEqual([[1, 3]]);
    expect(findSharedPairs([])).toEqual([]);
  });

  it('distinguishes protocols and returns nothing when all differ', () => {
    expect(
      findDuplicatePairs([
        [0, pair('a', 1, 'b', 2)],
        [1, pair('a', 1, 'b', 2, 'tcp')],
      ]),
    ).toEqual([]);
    expect(pairKey(pair('a', 1, 'b', 2, 'TCP'))).toBe('tcp a:1 -> b:2');
  });

  it('ignorePorts finds paths sharing a route through different sockets', () => {
    const pairs = [
      [0, pair('192.0.2.2', 1000, '192.0.2.3', 2000)],
      [1, pair('192.0.2.2', 1001, '192.0.2.3', 2001)],
      [2, pair('fd00::2', 1002, 'fd00::3', 2002)],
    ] as const;
    expect(findDuplicatePairs(pairs)).toEqual([]);
    expect(findDuplicatePairs(pairs, { ignorePorts: true })).toEqual([{ key: 'udp 192.0.2.2 -> 192.0.2.3', pathIds: [0, 1] }]);
    expect(new SamePairDetector({ ignorePorts: true }).update(pairs)).toHaveLength(1);
  });

  it('ignorePorts keeps the ports of loopback addresses: emulated paths (one relay per path) are different routes', () => {
    const relays = [
      [0, pair('127.0.0.1', 40000, '127.0.0.1', 50000)],
      [1, pair('127.0.0.1', 40001, '127.0.0.1', 50002)],
    ] as const;
    expect(findDuplicatePairs(relays, { ignorePorts: true })).toEqual([]);
    const sameRelay = [
      [0, pair('127.0.0.1', 40000, '127.0.0.1', 50000)],
      [1, pair('127.0.0.1', 40000, '127.0.0.1', 50000)],
    ] as const;
    expect(findDuplicatePairs(sameRelay, { ignorePorts: true })).toHaveLength(1);
    expect(pairKey(pair('::1', 5, '192.0.2.3', 6), { ignorePorts: true })).toBe('udp ::1:5 -> 192.0.2.3');
  });

  it('SamePairDetector reports only changes', () => {
    const d = new SamePairDetector();
    const same = [
      [0, pair('a', 1, 'b', 2)],
      [1, pair('a', 1, 'b', 2)],
    ] as const;
    expect(d.update(same)).toEqual([{ key: 'udp a:1 -> b:2', pathIds: [0, 1] }]);
    expect(d.update(same)).toBeUndefined();
    expect(
      d.update([
        [0, pair('a', 1, 'b', 2)],
        [1, pair('c', 1, 'b', 2)],
      ]),
    ).toEqual([]);
    expect(d.update([[0, pair('a', 1, 'b', 2)]])).toBeUndefined();
  });
});

describe('selectedPairFromStats', () => {
  const local = { id: 'L1', type: 'local-candidate', address: '192.0.2.2', port: 5000, protocol: 'udp', candidateType: 'host' };
  const remote = { id: 'R1', type: 'remote-candidate', address: '192.0.2.9', port: 6000, protocol: 'udp', candidateType: 'prflx' };
  const cp = { id: 'CP1', type: 'candidate-pair', localCandidateId: 'L1', remoteCandidateId: 'R1', state: 'succeeded', nominated: true };
  const other = { id: 'CP2', type: 'candidate-pair', localCandidateId: 'L1', remoteCandidateId: 'R1', state: 'waiting' };

  it('follows transport.selectedCandidatePairId and fills networkId from the map', () => {
    const stats = [other, cp, local, remote, { id: 'T', type: 'transport', selectedCandidatePairId: 'CP1' }];
    const ids = new Map([[candidateInfoKey('udp', '192.0.2.2', 5000), 1]]);
    expect(selectedPairFromStats(stats, ids)).toEqual({
      id: 'CP1',
      local: { address: '192.0.2.2', port: 5000, protocol: 'udp', type: 'host', networkId: 1 },
      remote: { address: '192.0.2.9', port: 6000, protocol: 'udp', type: 'prflx' },
    });
  });

  it('falls back to selected, then nominated+succeeded; legacy ip field', () => {
    const legacyLocal = { id: 'L1', type: 'local-candidate', ip: '10.0.0.1', port: 1, protocol: 'udp', candidateType: 'host', networkType: 'wifi' };
    expect(selectedPairFromStats([other, cp, legacyLocal, remote])?.local).toEqual({
      address: '10.0.0.1',
      port: 1,
      protocol: 'udp',
      type: 'host',
      networkType: 'wifi',
    });
    expect(selectedPairFromStats([{ ...other, selected: true }, local, remote])?.id).toBe('CP2');
    // The browser's own estimate for its RTP rides along (the RTP carrier's rate ceiling); junk is left out.
    expect(selectedPairFromStats([{ ...cp, availableOutgoingBitrate: 812_000 }, local, remote])?.availableOutgoingBps).toBe(812_000);
    expect(selectedPairFromStats([{ ...cp, availableOutgoingBitrate: -1 }, local, remote])).not.toHaveProperty('availableOutgoingBps');
  });

  it('returns undefined when nothing is selected or data is junk', () => {
    expect(selectedPairFromStats([other, local, remote])).toBeUndefined();
    expect(selectedPairFromStats([cp, local])).toBeUndefined();
    expect(selectedPairFromStats([null as never, 5 as never, { type: 'transport', selectedCandidatePairId: 'nope' }])).toBeUndefined();
  });
});
