import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileQuery } from '../../../src/percolator/compile.ts';
import { openOracle, type Oracle } from '../../helpers/percolator-oracle.ts';

// `bool` in memory (src/percolator/queries/bool.ts) against the engine's own answers: `should` is
// optional beside `must` and `filter` unless `minimum_should_match` says otherwise.
let oracle: Oracle;
beforeAll(async () => {
  oracle = await openOracle('bool');
});
afterAll(async () => {
  await oracle?.close();
});

const servable = { term: { servable: true } };
const image = { term: { format: 'image' } };
const bread = { multi_match: { query: 'bread', fields: ['caption'] } };
const baking = { term: { hashtags: 'baking' } };

describe('bool', () => {
  it('finds what the engine finds', async () => {
    await oracle.check([
      { query: { bool: {} }, atLeast: 8 },
      { query: { bool: { filter: [servable] } }, atLeast: 4 },
      { query: { bool: { must: servable } }, atLeast: 4 },
      { query: { bool: { filter: [servable], should: [image] } }, atLeast: 4 },
      { query: { bool: { filter: [servable], should: [image], minimum_should_match: 1 } }, atLeast: 2 },
      { query: { bool: { should: [image] } }, atLeast: 2 },
      { query: { bool: { should: [image, bread] } }, atLeast: 4 },
      { query: { bool: { should: [image, baking], minimum_should_match: 2 } }, atLeast: 1 },
      { query: { bool: { should: [image, baking, bread], minimum_should_match: '2' } }, atLeast: 1 },
      { query: { bool: { should: [image], minimum_should_match: 2 } }, atLeast: 'none' },
      // What minimum_should_match means without should clauses, or with nothing required.
      { query: { bool: { should: [], minimum_should_match: 1 } }, atLeast: 8 },
      { query: { bool: { minimum_should_match: 3 } }, atLeast: 8 },
      { query: { bool: { filter: [image], should: [], minimum_should_match: 1 } }, atLeast: 'none' },
      { query: { bool: { filter: [image], minimum_should_match: 0 } }, atLeast: 2 },
      { query: { bool: { must: [image], minimum_should_match: 2 } }, atLeast: 'none' },
      { query: { bool: { must_not: [image], minimum_should_match: 1 } }, atLeast: 6 },
      { query: { bool: { must_not: [image], should: [image], minimum_should_match: 0 } }, atLeast: 'none' },
      { query: { bool: { should: [image, bread], minimum_should_match: 0 } }, atLeast: 4 },
      // A bool inside a filter scores nothing but matches as it would anywhere.
      { query: { constant_score: { filter: { bool: { filter: [servable], should: [image] } } } }, atLeast: 4 },
      { query: { bool: { must_not: [image] } }, atLeast: 6 },
      { query: { bool: { must_not: [{ exists: { field: 'views' } }] } }, atLeast: 2 },
      { query: { bool: { filter: [servable], must_not: [bread, image] } }, atLeast: 1 },
      {
        query: {
          bool: {
            filter: [{ range: { views: { gte: 1000 } } }],
            must: [{ bool: { should: [bread, { term: { hashtags: 'skincare' } }] } }],
            must_not: [{ term: { format: 'carousel' } }],
          },
        },
        atLeast: 3,
      },
    ]);
  });

  it('refuses a percentage of should clauses rather than answer otherwise', () => {
    expect(() =>
      compileQuery({ bool: { should: [image, bread], minimum_should_match: '50%' } }, oracle.fields),
    ).toThrow(/50%/);
  });
});
