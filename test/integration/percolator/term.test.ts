import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileQuery } from '../../../src/percolator/compile.ts';
import { openOracle, type Oracle } from '../../helpers/percolator-oracle.ts';

// `term` in memory (src/percolator/queries/term.ts) against the engine's own answers.
let oracle: Oracle;
beforeAll(async () => {
  oracle = await openOracle('term');
});
afterAll(async () => {
  await oracle?.close();
});

describe('term', () => {
  it('finds what the engine finds on keyword, boolean and number fields', async () => {
    await oracle.check([
      // Normalized on both sides (lowercase_keyword), repeated values counted once.
      { query: { term: { hashtags: 'BAKING' } }, atLeast: 2 },
      { query: { term: { hashtags: { value: 'bread' } } }, atLeast: 1 },
      { query: { term: { hashtags: 'skincare' } }, atLeast: 1 },
      { query: { term: { hashtags: 'スキンケア' } }, atLeast: 1 },
      { query: { term: { 'author.handle': 'ana.bakes' } }, atLeast: 2 },
      { query: { term: { 'author.handle': 'travel.TOM' } }, atLeast: 1 },
      // Without a normalizer, case matters.
      { query: { term: { format: 'reel' } }, atLeast: 3 },
      { query: { term: { format: 'REEL' } }, atLeast: 'none' },
      { query: { term: { servable: true } }, atLeast: 4 },
      { query: { term: { servable: false } }, atLeast: 2 },
      { query: { term: { servable: 'true' } }, atLeast: 4 },
      { query: { term: { 'author.is_verified': false } }, atLeast: 2 },
      { query: { term: { views: 1000 } }, atLeast: 1 },
      { query: { term: { views: 0 } }, atLeast: 1 },
      { query: { term: { 'author.followers_count': 50_000 } }, atLeast: 1 },
      { query: { term: { rate: 0.05 } }, atLeast: 2 },
      { query: { term: { views: 12345 } }, atLeast: 'none' },
      { query: { term: { hashtags: { value: 'coffee', boost: 2, _name: 'named' } } }, atLeast: 1 },
    ]);
  });

  it('refuses a term it cannot reproduce rather than answer otherwise', () => {
    expect(() => compileQuery({ term: { caption: 'bread' } }, oracle.fields)).toThrow(/text field caption/);
    expect(() => compileQuery({ term: { posted_at: '2026-11-20T10:00:00.000Z' } }, oracle.fields)).toThrow(/date/);
    expect(() => compileQuery({ term: { unknown_field: 'x' } }, oracle.fields)).toThrow(/unknown_field/);
    expect(() => compileQuery({ term: { format: 'reel', hashtags: 'x' } }, oracle.fields)).toThrow(/2 fields/);
  });
});
