import { defineConfig } from 'vitest/config';

// End-to-end tests: real Chromium pages, real WebCodecs, emulated paths.
// One at a time: each call uses both cores.
export default defineConfig({
  test: {
    include: ['tests/e2e/**/*.e2e.ts'],
    environment: 'node',
    testTimeout: 180_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    maxWorkers: 1,
    globalSetup: ['tests/e2e/global-setup.ts'],
  },
});
