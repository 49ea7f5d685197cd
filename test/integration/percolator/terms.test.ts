import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileQuery } from '../../../src/percolator/compile.ts';
import { openOracle, type Oracle } from '../../helpers/percolator-oracle.ts';

// `terms` in memory (src/percolator/queries/terms.ts) against the engine's own answers.
let oracle: Oracle;
beforeAll(async () => {
  oracle = await openOracle('terms');
});
afterAll(async () => {
  await oracle?.close();
});

describe('terms', () => {
  it('finds what the engine finds: any of the values', async () => {
    await oracle.check([
      { query: { terms: { format: ['image', 'carousel'] } }, atLeast: 3 },
      { query: { terms: { hashtags: ['PASTA', 'Coffee'] } }, atLeast: 2 },
      { query: { terms: { 'author.handle': ['MEI_SKIN', 'chef.carla', 'nobody'] } }, atLeast: 2 },
      { query: { terms: { views: [999, 1000, 1200] } }, atLeast: 3 },
      { query: { terms: { servable: [false] } }, atLeast: 2 },
      { query: { terms: { format: [] } }, atLeast: 'none' },
      { query: { terms: { format: ['video'] } }, atLeast: 'none' },
    ]);
  });

  it('refuses a terms lookup (another index) rather than answer otherwise', () => {
    expect(() => compileQuery({ terms: { format: { index: 'x', id: '1', path: 'formats' } } }, oracle.fields)).toThrow(
      /terms lookup/,
    );
  });
});
