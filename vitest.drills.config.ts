import { defineConfig } from 'vitest/config';

/**
 * The fault drills (test/drills, `npm run test:drills`): slow and disruptive (they stop and restart
 * services and processes), so they are kept out of `npm test` and run one file at a time.
 */
export default defineConfig({
  test: {
    include: ['test/drills/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['default'],
  },
});
