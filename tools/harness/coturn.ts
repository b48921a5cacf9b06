/**
 * TURN relays for the browser harness (issue 16): coturn (`turnserver`,
 * Debian package `coturn`) instances on 127.0.0.1, each on its own listening
 * port and its own relay-port range, with one long-term-credential user
 * (RFC 8656 §9.2). The peers' ICE traffic then runs
 * offerer -> TURN relay -> (the path's emulated link, tools/emulator) -> answerer.
 *
 * Started only by tests and the harness, never by the library. As root the
 * harness installs the package when `turnserver` is missing (as
 * tools/harness/chromium.ts does for Chromium); `.ci/run` installs it too.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One running relay. */
export interface TurnRelay {
  /** For MultipathCallOptions.relays. */
  iceServer: { urls: string; username: string; credential: string };
  port: number;
  /** The relayed-address port range it allocates from (inclusive): a peer seen from one of these ports talks through this relay. */
  relayPorts: [number, number];
  pid: number | undefined;
}

/** Index of the relay whose relayed-port range holds `port` (127.0.0.1), else -1. */
export function relayOfPort(relays: readonly TurnRelay[], port: number | undefined): number {
  if (port === undefined) return -1;
  return relays.findIndex((r) => port >= r.relayPorts[0] && port <= r.relayPorts[1]);
}

export interface CoturnSet {
  relays: readonly TurnRelay[];
  /** Stop every instance (SIGTERM, then SIGKILL after 2 s) and remove their files. Idempotent, never throws. */
  close(): Promise<void>;
}

const TURNSERVER_CANDIDATES = ['/usr/bin/turnserver', '/usr/sbin/turnserver', '/usr/local/bin/turnserver'];

/** Path of `turnserver`; as root installs the `coturn` package when missing. @throws Error naming the package when absent. */
export function ensureTurnserver(): string {
  const find = () => TURNSERVER_CANDIDATES.find((p) => existsSync(p));
  let bin = find();
  if (!bin && process.getuid?.() === 0) {
    try {
      execFileSync('apt-get', ['install', '-y', 'coturn'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 300_000 });
    } catch {
      /* reported below */
    }
    bin = find();
  }
  if (!bin) throw new Error('turnserver not found: install the Debian package coturn (apt-get install -y coturn)');
  return bin;
}

/**
 * Resolves when 127.0.0.1:`port` can be bound (UDP, without SO_REUSEPORT: a socket holding the port, coturn's
 * included, makes the bind fail). @throws Error "... Address already in use" otherwise
 */
async function checkUdpPortFree(port: number): Promise<void> {
  const sock = createSocket('udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      sock.once('error', reject);
      sock.bind(port, '127.0.0.1', () => resolve());
    });
  } catch (e) {
    throw new Error(`127.0.0.1:${port} (UDP) is taken: Address already in use (${(e as Error).message})`);
  } finally {
    await new Promise<void>((resolve) => {
      try {
        sock.close(() => resolve());
      } catch {
        resolve(); // never bound
      }
    });
  }
}

/** Resolves once a STUN Binding request to 127.0.0.1:port gets a response (RFC 8489 §6), or rejects after `timeoutMs`. */
async function waitStun(port: number, timeoutMs: number): Promise<void> {
  const sock = createSocket('udp4');
  const req = Buffer.alloc(20);
  req.writeUInt16BE(0x0001, 0); // Binding request
  req.writeUInt16BE(0, 2);
  req.writeUInt32BE(0x2112a442, 4); // magic cookie
  for (let i = 8; i < 20; i++) req[i] = (i * 37) & 0xff;
  try {
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      let done = false;
      sock.on('message', (m) => {
        if (m.length >= 20 && m.readUInt16BE(0) === 0x0101) {
          done = true;
          resolve();
        }
      });
      sock.on('error', (e) => {
        done = true;
        reject(e);
      });
      const tick = (): void => {
        if (done) return;
        if (Date.now() > deadline) {
          done = true;
          reject(new Error(`coturn on 127.0.0.1:${port} did not answer STUN within ${timeoutMs} ms`));
          return;
        }
        sock.send(req, port, '127.0.0.1');
        setTimeout(tick, 100).unref();
      };
      tick();
    });
  } finally {
    sock.close();
  }
}

/**
 * Start `count` coturn instances on 127.0.0.1: listening ports `basePort`,
 * `basePort + 10`, ..., relay ports `basePort + 1000 + 100 k` .. `+ 99`
 * (default base: 20000-29980 by pid, retried twice elsewhere when a port is taken).
 * They relay to loopback peers (`--allow-loopback-peers`: our emulated
 * paths listen there). Credentials: user `mprtc`, password `mprtc`, realm `mprtc`.
 * @throws Error when turnserver is missing or an instance does not answer within 5 s (the others are stopped)
 */
export async function startCoturn(count: number, opts: { basePort?: number; log?: (line: string) => void } = {}): Promise<CoturnSet> {
  if (!(Number.isInteger(count) && count >= 1 && count <= 8)) throw new RangeError(`startCoturn: count must be 1..8, got ${count}`);
  const bin = ensureTurnserver();
  if (opts.basePort !== undefined) return startCoturnAt(bin, count, opts.basePort, opts.log);
  // Below Linux's ephemeral range (32768-60999): there any socket of the machine (a browser's, a test's TCP
  // connection) can hold a port by chance; one bench run failed so ("Address already in use"). The slot comes
  // from the pid; slots 20 ports apart can still share listening ports between two runs at once (one run
  // spans base..base+70), and coturn binds with SO_REUSEPORT (a second coturn on a port would not fail), so
  // each listening port is checked free first, and a taken one moves the whole set to another slot.
  const slot = (process.pid * 7) % 500;
  for (let attempt = 0; ; attempt++) {
    try {
      return await startCoturnAt(bin, count, 20_000 + ((slot + 37 * attempt) % 500) * 20, opts.log);
    } catch (e) {
      if (attempt >= 2 || !/Address already in use/.test((e as Error).message)) throw e;
      opts.log?.(`coturn: ${(e as Error).message.slice(0, 120)}; retrying on other ports`);
    }
  }
}

async function startCoturnAt(bin: string, count: number, base: number, log?: (line: string) => void): Promise<CoturnSet> {
  const dir = mkdtempSync(join(tmpdir(), 'mprtc-coturn-'));
  const procs: ChildProcess[] = [];
  const relays: TurnRelay[] = [];
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            const kill = setTimeout(() => p.kill('SIGKILL'), 2000);
            p.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            p.kill('SIGTERM');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let k = 0; k < count; k++) {
      const port = base + 10 * k;
      const minPort = base + 1000 + 100 * k;
      const args = [
        '--listening-ip=127.0.0.1',
        '--relay-ip=127.0.0.1',
        `--listening-port=${port}`,
        `--min-port=${minPort}`,
        `--max-port=${minPort + 99}`,
        '--allow-loopback-peers',
        '--lt-cred-mech',
        '--user=mprtc:mprtc',
        '--realm=mprtc',
        '--fingerprint',
        '--no-tls',
        '--no-dtls',
        '--no-cli',
        '--no-rfc5780',
        '--no-software-attribute',
        `--userdb=${join(dir, `turndb-${k}`)}`,
        `--pidfile=${join(dir, `turn-${k}.pid`)}`,
        '--log-file=stdout',
        '--simple-log',
      ];
      await checkUdpPortFree(port);
      const p = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      procs.push(p);
      const tail: string[] = [];
      const keep = (b: Buffer) => {
        for (const line of b.toString().split('\n')) {
          if (!line.trim()) continue;
          tail.push(line);
          if (tail.length > 50) tail.shift(); // the last 50 lines
        }
      };
      p.stdout?.on('data', keep);
      p.stderr?.on('data', keep);
      try {
        await waitStun(port, 5000);
      } catch (e) {
        throw new Error(`${(e as Error).message}; turnserver said: ${tail.slice(-5).join(' | ')}`);
      }
      relays.push({ iceServer: { urls: `turn:127.0.0.1:${port}?transport=udp`, username: 'mprtc', credential: 'mprtc' }, port, relayPorts: [minPort, minPort + 99], pid: p.pid });
      log?.(`coturn ${k}: 127.0.0.1:${port} (pid ${p.pid}, relay ports ${minPort}-${minPort + 99})`);
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { relays, close };
}
