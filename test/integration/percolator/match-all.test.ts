import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileQuery } from '../../../src/percolator/compile.ts';
import { openOracle, type Oracle } from '../../helpers/percolator-oracle.ts';

// `match_all` and `match_none` in memory (src/percolator/queries/match-all.ts) against the engine's own answers.
let oracle: Oracle;
beforeAll(async () => {
  oracle = await openOracle('match-all');
});
afterAll(async () => {
  await oracle?.close();
});

describe('match_all, match_none, and the kinds the percolator does not know', () => {
  it('finds what the engine finds', async () => {
    await oracle.check([
      { query: { match_all: {} }, atLeast: 8 },
      { query: { match_all: { boost: 2 } }, atLeast: 8 },
      { query: { match_none: {} }, atLeast: 'none' },
    ]);
  });

  it('refuses query kinds it does not know, and a container of two kinds (src/percolator/compile.ts)', () => {
    expect(() => compileQuery({ prefix: { format: 're' } }, oracle.fields)).toThrow(/prefix/);
    expect(() => compileQuery({ knn: { field: 'x', query_vector: [1] } }, oracle.fields)).toThrow(/knn/);
    expect(() => compileQuery({ match_all: {}, match_none: {} } as never, oracle.fields)).toThrow(/2 kinds/);
  });
});
