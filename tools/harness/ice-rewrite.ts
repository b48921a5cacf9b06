import { networkInterfaces } from 'node:os';

/**
 * Makes each path's ICE traffic cross its emulated-path relay: the signalling
 * server hands every simple-peer signal to {@link rewriteSignalForRelay},
 * which keeps only this host's IPv4 UDP host candidates and replaces their
 * address with the relay socket facing the other side. Each browser then only
 * knows the relay's address as the remote candidate.
 */

/** Relay ports of one path: A faces the media sender, B faces the receiver. */
export interface RelayPorts {
  portA: number;
  portB: number;
  /** Tell the relay where a peer really is (learned from its candidate). */
  setPeer?: (side: 'a' | 'b', address: string, port: number) => void;
}

const LOOPBACK = '127.0.0.1';

/** IPv4 addresses of this machine (loopback and its interfaces). */
function localIpv4(): Set<string> {
  const out = new Set<string>([LOOPBACK]);
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4') out.add(a.address);
  return out;
}
const LOCAL_V4 = localIpv4();

/**
 * Rewrite one candidate line (with or without the `a=` prefix). Returns the
 * rewritten line, or null when the candidate must not be used (not UDP, not a
 * loopback IPv4 host candidate, or malformed).
 */
export function rewriteCandidateLine(line: string, fromSide: 'a' | 'b', relay: RelayPorts): string | null {
  const prefix = line.startsWith('a=') ? 'a=' : '';
  const body = prefix ? line.slice(2) : line;
  const parts = body.trim().split(/\s+/);
  if (parts.length < 8 || !parts[0].startsWith('candidate:') || parts[6] !== 'typ') return null;
  const [foundation, component, protocol, priority, address, portStr, , type] = parts;
  // Chromium does not gather 127.0.0.1, so a host candidate is on one of this
  // machine's interfaces; the relay listens on 127.0.0.1 and answers it there.
  if (protocol.toLowerCase() !== 'udp' || type !== 'host' || !LOCAL_V4.has(address)) return null;
  const port = Number(portStr);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return null;
  relay.setPeer?.(fromSide, address, port);
  // The other side must send to the relay socket that faces it.
  const relayPort = fromSide === 'a' ? relay.portB : relay.portA;
  const rest: string[] = [];
  for (let i = 8; i + 1 < parts.length; i += 2) {
    if (parts[i] === 'raddr' || parts[i] === 'rport') continue;
    rest.push(parts[i], parts[i + 1]);
  }
  return `${prefix}${[foundation, component, protocol, priority, LOOPBACK, String(relayPort), 'typ', 'host', ...rest].join(' ')}`;
}

/**
 * Rewrite a simple-peer signal object coming from `fromSide`. Returns the
 * object to forward, or null to drop it (a candidate we do not use).
 */
export function rewriteSignalForRelay(data: unknown, fromSide: 'a' | 'b', relay: RelayPorts): unknown | null {
  if (!data || typeof data !== 'object') return data;
  const d = data as Record<string, unknown>;
  if (d.type === 'candidate' && d.candidate && typeof d.candidate === 'object') {
    const c = d.candidate as Record<string, unknown>;
    if (typeof c.candidate !== 'string') return null;
    if (c.candidate === '') return data; // end-of-candidates
    const line = rewriteCandidateLine(c.candidate, fromSide, relay);
    if (line === null) return null;
    return { ...d, candidate: { ...c, candidate: line } };
  }
  if ((d.type === 'offer' || d.type === 'answer') && typeof d.sdp === 'string') {
    const lines = d.sdp.split(/\r\n/);
    const out: string[] = [];
    for (const l of lines) {
      if (l.startsWith('a=candidate:')) {
        const r = rewriteCandidateLine(l, fromSide, relay);
        if (r !== null) out.push(r);
      } else {
        out.push(l);
      }
    }
    return { ...d, sdp: out.join('\r\n') };
  }
  return data;
}
