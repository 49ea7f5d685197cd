import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The fault drills run on their own: `npm run test:drills` (vitest.drills.config.ts).
    exclude: [...configDefaults.exclude, 'test/drills/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: two test files at a time; each has its own indices and Redis prefix.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
