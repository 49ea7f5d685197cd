import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileQuery } from '../../../src/percolator/compile.ts';
import { openOracle, type Oracle } from '../../helpers/percolator-oracle.ts';

// `constant_score` in memory (src/percolator/queries/constant-score.ts) against the engine's own answers.
let oracle: Oracle;
beforeAll(async () => {
  oracle = await openOracle('constant-score');
});
afterAll(async () => {
  await oracle?.close();
});

describe('constant_score', () => {
  it('finds what the engine finds: its filter', async () => {
    await oracle.check([
      { query: { constant_score: { filter: { term: { hashtags: 'baking' } } } }, atLeast: 2 },
      { query: { constant_score: { filter: { match_all: {} }, boost: 3 } }, atLeast: 8 },
      { query: { constant_score: { filter: { bool: { must_not: [{ exists: { field: 'format' } }] } } } }, atLeast: 2 },
    ]);
  });

  it('refuses a filter it cannot reproduce', () => {
    expect(() => compileQuery({ constant_score: { filter: { wildcard: { format: 'r*' } } } }, oracle.fields)).toThrow(
      /wildcard/,
    );
  });
});
