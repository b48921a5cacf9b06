import { defineConfig } from 'vite';

// Used by the demo (`npm run demo`), the call harness and the library build.
// simple-peer's prebuilt browser bundle carries its own Buffer/process shims.
export default defineConfig({
  define: { global: 'globalThis' },
  optimizeDeps: { include: ['simple-peer/simplepeer.min.js'] },
  server: { host: '127.0.0.1' },
});
