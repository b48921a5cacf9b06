/**
 * The call setup shared by `npm run call` (tools/harness/run-call.ts) and
 * `npm run bench:browser` (bench/browser/run.ts), so the two cannot drift
 * apart again (issue "The browser benchmark really uses every path"):
 * - {@link startPathEnv}: one UDP relay per scenario path (tools/emulator) and
 *   a signalling server whose `rewriteSignal` hook makes each peer learn only
 *   its path's relay address (tools/harness/ice-rewrite.ts); the peer with id
 *   `sender` is side A (media goes A -> B, the scenario's `up`);
 * - {@link startPageServer}: the Vite server for the peer pages (and the demo's, demo/serve.ts);
 * - {@link launchChromium}: headless Debian Chromium with the project's flags.
 * The pages must signal every candidate on every path (`candidates: 'all'`):
 * the relays, not the candidate split, make the paths differ here.
 */
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { createServer } from 'vite';
import type { Plugin, ViteDevServer } from 'vite';
import { startSignallingServer } from '../../src/signalling/node.js';
import { startEmulator } from '../emulator/relay.js';
import type { Emulator, PathRelay } from '../emulator/relay.js';
import type { Scenario } from '../../sim/net/scenario.js';
import { chromiumArgs, ensureChromium } from './chromium.js';
import { rewriteSignalForRelay } from './ice-rewrite.js';
import { REPO_ROOT } from './paths.js';

/** Emulated paths plus the signalling server that routes each peer through them. */
export interface PathEnv {
  emulator: Emulator;
  relays: readonly PathRelay[];
  /** ws:// URL of the signalling server. */
  signallingUrl: string;
  /** Stop the signalling server and the relays (idempotent, never throws). */
  close(): Promise<void>;
}

/**
 * Start the relays of `scenario` and a signalling server that rewrites candidates onto them.
 * With `{ rewrite: false }` (overlay mode, tools/harness/coturn.ts) signals pass unchanged: the
 * emulated links then sit in front of the TURN servers instead of between the peers; there
 * `{ natSideA: true }` gives each client socket behind a link its own address towards the server.
 */
export async function startPathEnv(scenario: Scenario, seed: number, opts: { rewrite?: boolean; natSideA?: boolean } = {}): Promise<PathEnv> {
  const emulator = await startEmulator(scenario, { seed, natSideA: opts.natSideA ?? false });
  const relays = emulator.relays;
  const rewrite = opts.rewrite ?? true;
  let sig: Awaited<ReturnType<typeof startSignallingServer>>;
  try {
    sig = await startSignallingServer({
      port: 0,
      // Loopback test rooms: dev mode on purpose (no authorize), without the production warning on every run.
      log: () => undefined,
      rewriteSignal: ({ from, pathId, data }) => {
        if (!rewrite) return data;
        const relay = relays[pathId];
        if (!relay) return null;
        return rewriteSignalForRelay(data, from === 'sender' ? 'a' : 'b', relay);
      },
    });
  } catch (e) {
    await emulator.close();
    throw e;
  }
  let closed = false;
  return {
    emulator,
    relays,
    signallingUrl: sig.url,
    async close() {
      if (closed) return;
      closed = true;
      await Promise.resolve(sig.close()).catch(() => undefined);
      await Promise.resolve(emulator.close()).catch(() => undefined);
    },
  };
}

/** The Vite server of the peer pages; `url(page)` gives e.g. `http://127.0.0.1:PORT/tools/page/index.html`. */
export interface PageServer {
  server: ViteDevServer;
  url(pagePath: string): string;
  close(): Promise<void>;
}

export interface PageServerOptions {
  /** Vite plugins (e.g. the benchmark's clip route). */
  plugins?: Plugin[];
  /** Folder served (default: the repository, so `url('tools/page/index.html')`). */
  root?: string;
  /** TCP port (default 0: any free one). */
  port?: number;
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** A developer's page (`npm run demo`): Vite's hot reload and info logs on (default off). */
  dev?: boolean;
  /** Extra response headers on every page and module (e.g. a Content-Security-Policy). */
  headers?: Record<string, string>;
}

/** Serve pages with Vite and the repository's vite.config.ts (default: the repository on 127.0.0.1, random port). */
export async function startPageServer(opts: PageServerOptions = {}): Promise<PageServer> {
  const server = await createServer({
    root: opts.root ?? REPO_ROOT,
    configFile: join(REPO_ROOT, 'vite.config.ts'),
    ...(opts.dev ? {} : { logLevel: 'error' as const }),
    server: { port: opts.port ?? 0, host: opts.host ?? '127.0.0.1', ...(opts.dev ? {} : { hmr: false }), ...(opts.headers ? { headers: opts.headers } : {}) },
    plugins: opts.plugins ?? [],
  });
  await server.listen();
  const addr = server.httpServer?.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    server,
    url: (pagePath) => `http://127.0.0.1:${port}/${pagePath.replace(/^\//, '')}`,
    close: () => server.close().catch(() => undefined),
  };
}

/** Headless Debian Chromium with the project's flags (tools/harness/chromium.ts); a Y4M file feeds the fake camera. */
export async function launchChromium(opts: { fakeVideoFile?: string } = {}): Promise<Browser> {
  return chromium.launch({ executablePath: ensureChromium(), headless: true, args: chromiumArgs(opts) });
}
