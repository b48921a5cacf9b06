/**
 * `npm run demo`: the signalling server (port 8787) and the demo page (Vite,
 * http://localhost:5173). Open it in two tabs, or on two machines of the same
 * network (use --host to listen on all interfaces).
 */
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createServer } from 'vite';
import { startSignallingServer } from '../src/signalling/node.js';

const root = dirname(fileURLToPath(import.meta.url));
const allHosts = process.argv.includes('--host');
const host = allHosts ? '0.0.0.0' : '127.0.0.1';
const sig = await startSignallingServer({ port: 8787, host });
const vite = await createServer({
  root,
  configFile: join(root, '..', 'vite.config.ts'),
  server: { port: 5173, host },
});
await vite.listen();
process.stdout.write(`signalling: ${sig.url}\ndemo: http://${allHosts ? '<this-host>' : 'localhost'}:5173/\n`);
const stop = async () => {
  await vite.close();
  await sig.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
