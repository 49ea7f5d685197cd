import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The fault drills run on their own: `npm run test:drills` (vitest.drills.config.ts); the
    // cluster suite needs a 3-node cluster: `npm run test:cluster` (vitest.cluster.config.ts).
    exclude: [...configDefaults.exclude, 'test/drills/**', 'test/cluster/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: two test files at a time; each has its own indices and Redis prefix.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
