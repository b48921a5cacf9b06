/**
 * `npm run demo`: the signalling server (port 8787) and the demo page (Vite,
 * http://localhost:5173). Open it in two tabs, or on two machines of the same
 * network (use --host to listen on all interfaces).
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startSignallingServer } from '../src/signalling/node.js';
import { type CliValues, runCli } from '../tools/cli.js';
import { startPageServer } from '../tools/harness/setup.js';

/** The demo's servers: `pageUrl` serves demo/index.html, `signallingUrl` is its ws:// signalling server. */
export interface Demo {
  signallingUrl: string;
  pageUrl: string;
  /** Stop the signalling server and start a new one on the same port (tests: calls must survive it). */
  restartSignalling(downMs?: number): Promise<void>;
  /** Stop both servers. */
  close(): Promise<void>;
}

/**
 * Start the signalling server and the demo page (Vite, tools/harness/setup.ts
 * `startPageServer`). Ports: 0 = any free one (tests).
 */
export async function startDemo(opts: { host?: string; signallingPort?: number; pagePort?: number; dev?: boolean } = {}): Promise<Demo> {
  const host = opts.host ?? '127.0.0.1';
  let sig = await startSignallingServer({ port: opts.signallingPort ?? 8787, host });
  try {
    const pages = await startPageServer({ root: dirname(fileURLToPath(import.meta.url)), port: opts.pagePort ?? 5173, host, dev: opts.dev ?? false });
    const port = Number(new URL(sig.url).port);
    return {
      signallingUrl: sig.url,
      pageUrl: pages.url('/'),
      async restartSignalling(downMs = 0) {
        await sig.close();
        await new Promise((r) => setTimeout(r, downMs));
        sig = await startSignallingServer({ port, host });
      },
      async close() {
        await pages.close();
        await sig.close();
      },
    };
  } catch (e) {
    await sig.close();
    throw e;
  }
}

const USAGE = 'usage: npm run demo [-- --host]   (--host: listen on all interfaces, not only 127.0.0.1)';
const OPTIONS = { host: { type: 'boolean', default: false } } as const;

async function main(values: CliValues<typeof OPTIONS>): Promise<number> {
  const allHosts = values.host;
  const demo = await startDemo({ host: allHosts ? '0.0.0.0' : '127.0.0.1', dev: true });
  process.stdout.write(`signalling: ${demo.signallingUrl}\ndemo: http://${allHosts ? '<this-host>' : 'localhost'}:5173/\n`);
  // Serve until SIGINT / SIGTERM, then close both servers.
  await new Promise<void>((res) => {
    process.once('SIGINT', res);
    process.once('SIGTERM', res);
  });
  await demo.close();
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) runCli(OPTIONS, USAGE, 'demo', main);
