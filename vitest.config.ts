import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Tests drive the server through the SDK's source, so they never run against a stale build.
    alias: { '@survey-service/sdk': fileURLToPath(new URL('./sdk/src/index.ts', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    env: { NODE_ENV: 'test' },
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    // Test files spend most of their time waiting (for PostgreSQL, workers, timers, child processes): run serially
    // (vitest's default on 2 cores is one worker) a file used under half a core. One file more than the cores
    // keeps them busy; each file has its own database, service and ports, so files never share state.
    maxWorkers: availableParallelism() + 1,
    // A limit for a hung test, not a speed target: a test of many sequential requests took over 30 s beside two
    // other files on a loaded 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
