import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileQuery } from '../../../src/percolator/compile.ts';
import { openOracle, type Oracle } from '../../helpers/percolator-oracle.ts';

// `multi_match` in memory (src/percolator/queries/multi-match.ts) against the engine's own
// answers: each field's analysis (lowercased or not), any token or a phrase, Unicode, joiners.
let oracle: Oracle;
beforeAll(async () => {
  oracle = await openOracle('multi-match');
});
afterAll(async () => {
  await oracle?.close();
});

describe('multi_match', () => {
  it('finds what the engine finds: any token of any field, after that field’s analysis', async () => {
    await oracle.check([
      { query: { multi_match: { query: 'SOURDOUGH pizza', fields: ['caption^2', 'stemmed'] } }, atLeast: 1 },
      { query: { multi_match: { query: 'bread', fields: ['caption', 'stemmed'] } }, atLeast: 3 },
      // `stemmed` is not lowercased: case matters there.
      { query: { multi_match: { query: 'Bubbl', fields: ['stemmed'] } }, atLeast: 'none' },
      { query: { multi_match: { query: 'bubbl', fields: ['stemmed'] } }, atLeast: 1 },
      { query: { multi_match: { query: "don't", fields: ['caption'] } }, atLeast: 1 },
      { query: { multi_match: { query: 'u.s.a', fields: ['caption'] } }, atLeast: 1 },
      { query: { multi_match: { query: '3.5 1,000', fields: ['caption', 'stemmed'] } }, atLeast: 1 },
      { query: { multi_match: { query: 'σοφος istanbul', fields: ['caption'] } }, atLeast: 1 },
      // A run of Katakana is one token; Han and Hiragana one per character.
      { query: { multi_match: { query: 'スキンケアルーティン', fields: ['caption'] } }, atLeast: 1 },
      { query: { multi_match: { query: 'ルーティン', fields: ['caption'] } }, atLeast: 'none' },
      { query: { multi_match: { query: '自', fields: ['caption'] } }, atLeast: 1 },
      { query: { multi_match: { query: '🔥', fields: ['caption'] } }, atLeast: 1 },
      { query: { multi_match: { query: 'baking', fields: ['caption'], operator: 'or' } }, atLeast: 2 },
      // Punctuation only leaves no token: nothing matches.
      { query: { multi_match: { query: '?!', fields: ['caption'] } }, atLeast: 'none' },
    ]);
  });

  it('finds what the engine finds for phrases: consecutive positions of one value', async () => {
    await oracle.check([
      { query: { multi_match: { query: 'starter day', type: 'phrase', fields: ['caption'] } }, atLeast: 1 },
      { query: { multi_match: { query: 'day starter', type: 'phrase', fields: ['caption'] } }, atLeast: 'none' },
      // Never across two values of one field.
      { query: { multi_match: { query: 'bubbles baking', type: 'phrase', fields: ['caption'] } }, atLeast: 'none' },
      { query: { multi_match: { query: 'bread crumbs', type: 'phrase', fields: ['caption', 'stemmed'] } }, atLeast: 1 },
      { query: { multi_match: { query: 'garlic bread', type: 'phrase', fields: ['stemmed'] } }, atLeast: 1 },
      { query: { multi_match: { query: 'Bread', type: 'phrase', fields: ['caption'] } }, atLeast: 2 },
      { query: { multi_match: { query: '私の', type: 'phrase', fields: ['caption'] } }, atLeast: 1 },
      { query: { multi_match: { query: 'の私', type: 'phrase', fields: ['caption'] } }, atLeast: 'none' },
    ]);
  });

  it('refuses options it cannot reproduce rather than answer otherwise', () => {
    const fields = oracle.fields;
    expect(() => compileQuery({ multi_match: { query: 'a b', fields: ['caption'], operator: 'and' } }, fields)).toThrow(
      /operator/,
    );
    expect(() => compileQuery({ multi_match: { query: 'a', fields: ['caption'], fuzziness: 1 } }, fields)).toThrow(
      /fuzziness/,
    );
    expect(() => compileQuery({ multi_match: { query: 'a', fields: ['capt*'] } }, fields)).toThrow(/pattern/);
    expect(() => compileQuery({ multi_match: { query: 'a', fields: ['format'] } }, fields)).toThrow(/keyword field/);
    expect(() =>
      compileQuery({ multi_match: { query: 'a', type: 'cross_fields', fields: ['caption'] } }, fields),
    ).toThrow(/cross_fields/);
    expect(() => compileQuery({ match: { caption: 'bread' } }, fields)).toThrow(/match/);
  });
});
