import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileQuery } from '../../../src/percolator/compile.ts';
import { openOracle, type Oracle } from '../../helpers/percolator-oracle.ts';

// `exists` in memory (src/percolator/queries/exists.ts) against the engine's own answers: null,
// an empty list and an absent field hold no value.
let oracle: Oracle;
beforeAll(async () => {
  oracle = await openOracle('exists');
});
afterAll(async () => {
  await oracle?.close();
});

describe('exists', () => {
  it('finds what the engine finds', async () => {
    await oracle.check([
      { query: { exists: { field: 'views' } }, atLeast: 6 },
      { query: { exists: { field: 'hashtags' } }, atLeast: 5 },
      { query: { exists: { field: 'rate' } }, atLeast: 4 },
      { query: { exists: { field: 'caption' } }, atLeast: 6 },
      { query: { exists: { field: 'stemmed' } }, atLeast: 4 },
      { query: { exists: { field: 'author.is_verified' } }, atLeast: 4 },
      { query: { exists: { field: 'posted_at' } }, atLeast: 5 },
    ]);
  });

  it('refuses a field it does not know', () => {
    expect(() => compileQuery({ exists: { field: 'nowhere' } }, oracle.fields)).toThrow(/nowhere/);
  });
});
