/**
 * Build of the Chrome extension (MV3): `npm run build:extension` (extension/build.ts)
 * runs this into out/extension/. The SDK is bundled; every script is a file of
 * the extension (no inline script, no eval), as the extension CSP
 * `script-src 'self'` requires. Fixed names: the manifest and
 * `scripting.executeScript({ files })` refer to background.js and announce.js.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  // The SDK build on main bundles simple-peer's prebuilt browser build, which refers to `global`.
  define: { global: 'globalThis' },
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: resolve(here, '../out/extension'),
    emptyOutDir: true,
    target: 'chrome116',
    // Inline <script> is forbidden by the CSP; no module preload polyfill (inline code).
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    rollupOptions: {
      input: {
        call: resolve(here, 'call.html'),
        popup: resolve(here, 'popup.html'),
        background: resolve(here, 'src/background.ts'),
        announce: resolve(here, 'src/announce.ts'),
      },
      output: {
        entryFileNames: (chunk) => (chunk.name === 'background' || chunk.name === 'announce' ? '[name].js' : 'assets/[name]-[hash].js'),
        chunkFileNames: 'assets/[name]-[hash].js',
        assetFileNames: 'assets/[name]-[hash][extname]',
      },
    },
  },
});
