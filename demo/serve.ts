/**
 * `npm run demo`: the signalling server (port 8787) and the demo page (Vite,
 * http://localhost:5173). Open it in two tabs, or on two machines of the same
 * network (use --host to listen on all interfaces).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';
import { startSignallingServer } from '../src/signalling/node.js';
import { type CliValues, runCli } from '../tools/cli.js';

const USAGE = 'usage: npm run demo [-- --host]   (--host: listen on all interfaces, not only 127.0.0.1)';
const OPTIONS = { host: { type: 'boolean', default: false } } as const;

async function main(values: CliValues<typeof OPTIONS>): Promise<number> {
  const root = dirname(fileURLToPath(import.meta.url));
  const allHosts = values.host;
  const host = allHosts ? '0.0.0.0' : '127.0.0.1';
  const sig = await startSignallingServer({ port: 8787, host });
  const vite = await createServer({
    root,
    configFile: join(root, '..', 'vite.config.ts'),
    server: { port: 5173, host },
  });
  await vite.listen();
  process.stdout.write(`signalling: ${sig.url}\ndemo: http://${allHosts ? '<this-host>' : 'localhost'}:5173/\n`);
  // Serve until SIGINT / SIGTERM, then close both servers.
  await new Promise<void>((res) => {
    process.once('SIGINT', res);
    process.once('SIGTERM', res);
  });
  await vite.close();
  await sig.close();
  return 0;
}

runCli(OPTIONS, USAGE, 'demo', main);
