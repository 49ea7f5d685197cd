import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The test files whose outcomes rest on the model's vectors: rankings, the relevance floor, the
 * question weights, vector feedback, lookalikes, alert matching, unreadable text. They run once
 * more per seed below with every vector perturbed (docs/testing.md, "What the ranking tolerates").
 */
const MODEL_OUTPUT = [
  'account-hybrid',
  'alerts-semantic',
  'facets-hybrid',
  'function-words',
  'lookalike-languages',
  'lookalikes',
  'match-evidence',
  'query-subjects',
  'query-words',
  'question-weights',
  'related-posts',
  'semantic-search',
  'social-relevance',
  'unreadable-text',
  'vector-feedback',
].map((name) => `test/integration/${name}.test.ts`);

/**
 * The cosine distance each vector is moved by (EMBEDDING_NOISE): what separates two CPUs' int8
 * kernels, measured with the query–document cosines it moves (bench/embeddings.md, "Kernel noise").
 */
const KERNEL_NOISE = 0.015;
const NOISE_SEEDS = [1, 2];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: two test files at a time; each has its own indices and Redis prefix.
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'tests',
          include: ['test/**/*.test.ts'],
          // The fault drills run on their own: `npm run test:drills` (vitest.drills.config.ts); the
          // cluster suite needs a 3-node cluster: `npm run test:cluster` (vitest.cluster.config.ts).
          exclude: [...configDefaults.exclude, 'test/drills/**', 'test/cluster/**'],
        },
      },
      ...NOISE_SEEDS.map((seed) => ({
        extends: true as const,
        test: {
          name: `kernel-noise-${seed}`,
          include: MODEL_OUTPUT,
          env: { EMBEDDING_NOISE: `${KERNEL_NOISE}:${seed}` },
        },
      })),
    ],
  },
});
