import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileQuery } from '../../../src/percolator/compile.ts';
import { openOracle, type Oracle } from '../../helpers/percolator-oracle.ts';

// `range` in memory (src/percolator/queries/range.ts) against the engine's own answers: bounds
// open and closed, integers, doubles and instants, documents with several values or none.
let oracle: Oracle;
beforeAll(async () => {
  oracle = await openOracle('range');
});
afterAll(async () => {
  await oracle?.close();
});

describe('range', () => {
  it('finds what the engine finds on numbers', async () => {
    await oracle.check([
      { query: { range: { views: { gte: 1000 } } }, atLeast: 4 },
      { query: { range: { views: { gt: 1000 } } }, atLeast: 3 },
      { query: { range: { views: { gte: 1200, lt: 1201 } } }, atLeast: 1 },
      { query: { range: { views: { lte: 999 } } }, atLeast: 3 },
      { query: { range: { views: { lt: 0 } } }, atLeast: 'none' },
      // A document with values 10 and 20,000 is in a range holding either.
      { query: { range: { views: { gt: 15, lt: 25 } } }, atLeast: 'none' },
      { query: { range: { views: { gt: 15_000, lt: 25_000 } } }, atLeast: 1 },
      { query: { range: { 'author.followers_count': { gte: 10_000, lt: 1_000_000 } } }, atLeast: 4 },
      { query: { range: { rate: { gt: 0.05 } } }, atLeast: 1 },
      { query: { range: { rate: { gte: 0.05, lte: 0.05 } } }, atLeast: 2 },
      { query: { range: { rate: { gte: 0 } } }, atLeast: 4 },
    ]);
  });

  it('finds what the engine finds on instants, to the millisecond', async () => {
    await oracle.check([
      { query: { range: { posted_at: { gte: '2026-11-20T10:00:00.000Z' } } }, atLeast: 4 },
      { query: { range: { posted_at: { gt: '2026-11-20T10:00:00.000Z' } } }, atLeast: 2 },
      { query: { range: { posted_at: { lt: '2026-11-20T10:00:00.000Z' } } }, atLeast: 3 },
      {
        query: { range: { posted_at: { gte: '2026-11-20T09:59:59.999Z', lte: '2026-11-20T09:59:59.999Z' } } },
        atLeast: 1,
      },
      { query: { range: { posted_at: { gte: '2027-01-01T00:00:00.000Z' } } }, atLeast: 'none' },
    ]);
  });

  it('refuses date math, options and fields it cannot compare rather than answer otherwise', () => {
    expect(() => compileQuery({ range: { posted_at: { gte: 'now-7d' } } }, oracle.fields)).toThrow(/now-7d/);
    expect(() => compileQuery({ range: { posted_at: { gte: '2026-01-01||/d' } } }, oracle.fields)).toThrow(/\|\|/);
    expect(() => compileQuery({ range: { views: { gte: 1, format: 'x' } } }, oracle.fields)).toThrow(/format/);
    expect(() => compileQuery({ range: { format: { gte: 'a' } } }, oracle.fields)).toThrow(/keyword field format/);
  });
});
