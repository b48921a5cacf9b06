import { defineConfig } from 'vite';

// Used by the demo (`npm run demo`), the call harness and the library build.
// No Node shims: simple-peer-light (the transport's peer) is a plain ES module.
export default defineConfig({
  server: { host: '127.0.0.1' },
});
