import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileQuery } from '../../../src/percolator/compile.ts';
import { openOracle, type Oracle } from '../../helpers/percolator-oracle.ts';

// `dis_max` in memory (src/percolator/queries/dis-max.ts) against the engine's own answers.
let oracle: Oracle;
beforeAll(async () => {
  oracle = await openOracle('dis-max');
});
afterAll(async () => {
  await oracle?.close();
});

describe('dis_max', () => {
  it('finds what the engine finds: any of its queries', async () => {
    await oracle.check([
      {
        query: {
          dis_max: {
            queries: [{ term: { format: 'image' } }, { multi_match: { query: 'pasta', fields: ['caption'] } }],
            tie_breaker: 0.3,
          },
        },
        atLeast: 3,
      },
      { query: { dis_max: { queries: [{ range: { views: { gte: 50_000 } } }] } }, atLeast: 1 },
      { query: { dis_max: { queries: [{ match_all: {} }, { term: { format: 'reel' } }] } }, atLeast: 8 },
    ]);
  });

  it('refuses a child it cannot reproduce', () => {
    expect(() => compileQuery({ dis_max: { queries: [{ prefix: { format: 're' } }] } }, oracle.fields)).toThrow(
      /prefix/,
    );
  });
});
