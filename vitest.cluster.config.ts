import { defineConfig } from 'vitest/config';

/**
 * The cluster suite (test/cluster, `npm run test:cluster`): a 3-node Elasticsearch cluster that
 * scripts/test-cluster.sh starts, two API and two worker processes, one file at a time (the
 * node-loss drill kills a node of the shared cluster). Kept out of `npm test`.
 */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['default'],
  },
});
