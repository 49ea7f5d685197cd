import { describe, expect, it } from 'vitest';
import {
  chooseKeys,
  compileMemoryQuery,
  fieldTable,
  MemoryDoc,
  textReads,
  type FieldTable,
} from '../../src/engine/elasticsearch/memory-query.ts';

// The evaluator's own semantics, on hand-made documents. Whether it agrees with the engine on
// real posts and real saved searches is checked against the engine itself
// (test/integration/alert-matching.test.ts, memory-analysis.test.ts).
const fields: FieldTable = fieldTable(
  {
    caption: { type: 'text', analyzer: 'text_standard' },
    caption_stemmed: { type: 'text', analyzer: 'text_client_stemmed' },
    hashtags: { type: 'keyword', normalizer: 'lowercase_keyword' },
    format: { type: 'keyword' },
    servable: { type: 'boolean' },
    views: { type: 'long' },
    posted_at: { type: 'date' },
    author: { properties: { handle: { type: 'keyword', normalizer: 'lowercase_keyword' } } },
    embedding: { type: 'dense_vector' },
    shouty: { type: 'text', analyzer: 'shouty' },
  },
  {
    analyzer: {
      text_standard: { type: 'custom', tokenizer: 'standard', filter: ['lowercase'] },
      text_client_stemmed: { type: 'custom', tokenizer: 'standard' },
      shouty: { type: 'custom', tokenizer: 'standard', filter: ['uppercase'] },
    },
    normalizer: { lowercase_keyword: { filter: ['lowercase'] } },
  },
);

const doc = new MemoryDoc(
  {
    caption: ['Sourdough starter, day 3: bubbles!', 'Baking bread at home'],
    caption_stemmed: 'sourdough starter day 3 bubbl',
    hashtags: ['Baking', 'bread'],
    format: 'reel',
    servable: true,
    views: 1200,
    posted_at: '2026-11-20T10:00:00.000Z',
    author: { handle: 'Ana.Bakes' },
  },
  fields,
);
const matches = (query: object) => compileMemoryQuery(query, fields).matches(doc);

describe('queries evaluated in memory', () => {
  it('matches any token of any field (the or operator), after each field’s analysis', () => {
    expect(matches({ multi_match: { query: 'SOURDOUGH pizza', fields: ['caption^2', 'caption_stemmed'] } })).toBe(true);
    expect(matches({ multi_match: { query: 'bubbles', fields: ['caption_stemmed'] } })).toBe(false);
    expect(matches({ multi_match: { query: 'bubbl', fields: ['caption_stemmed'] } })).toBe(true);
    // No token at all (punctuation only) matches nothing, as `zero_terms_query: none` has it.
    expect(matches({ multi_match: { query: '?!', fields: ['caption'] } })).toBe(false);
  });

  it('matches a phrase at consecutive positions of one value, never across two values', () => {
    expect(matches({ multi_match: { query: 'starter day', type: 'phrase', fields: ['caption'] } })).toBe(true);
    expect(matches({ multi_match: { query: 'day starter', type: 'phrase', fields: ['caption'] } })).toBe(false);
    expect(matches({ multi_match: { query: 'bubbles baking', type: 'phrase', fields: ['caption'] } })).toBe(false);
  });

  it('normalizes keyword values on both sides, as the index normalizer does', () => {
    expect(matches({ term: { hashtags: 'BAKING' } })).toBe(true);
    expect(matches({ term: { 'author.handle': 'ana.bakes' } })).toBe(true);
    expect(matches({ term: { format: 'REEL' } })).toBe(false);
    expect(matches({ terms: { format: ['image', 'reel'] } })).toBe(true);
  });

  it('compares numbers and timestamps, and finds no value where there is none', () => {
    expect(matches({ range: { views: { gte: 1200, lt: 1201 } } })).toBe(true);
    expect(matches({ range: { views: { gt: 1200 } } })).toBe(false);
    expect(matches({ range: { posted_at: { gte: '2026-11-20T10:00:00.000Z' } } })).toBe(true);
    expect(matches({ range: { posted_at: { gt: '2026-11-20T10:00:00.000Z' } } })).toBe(false);
    expect(matches({ exists: { field: 'views' } })).toBe(true);
    expect(matches({ bool: { must_not: [{ exists: { field: 'views' } }] } })).toBe(false);
  });

  it('reads bool as the engine does: should is optional beside filter unless minimum_should_match says otherwise', () => {
    const filter = [{ term: { servable: true } }];
    const nowhere = { term: { format: 'image' } };
    expect(matches({ bool: { filter, should: [nowhere] } })).toBe(true);
    expect(matches({ bool: { filter, should: [nowhere], minimum_should_match: 1 } })).toBe(false);
    expect(matches({ bool: { should: [nowhere] } })).toBe(false);
    expect(matches({ bool: { should: [], minimum_should_match: 1 } })).toBe(false);
    expect(matches({ bool: {} })).toBe(true);
    expect(matches({ dis_max: { queries: [nowhere, { term: { hashtags: 'bread' } }] } })).toBe(true);
  });

  it('refuses what it cannot reproduce instead of answering differently', () => {
    expect(() => compileMemoryQuery({ match: { caption: 'bread' } }, fields)).toThrow(/match/);
    expect(() => compileMemoryQuery({ term: { shouty: 'bread' } }, fields)).toThrow(/shouty/);
    expect(() => compileMemoryQuery({ range: { posted_at: { gte: 'now-7d' } } }, fields)).toThrow(/now-7d/);
    expect(() =>
      compileMemoryQuery({ multi_match: { query: 'a b', fields: ['caption'], operator: 'and' } }, fields),
    ).toThrow(/operator/);
  });

  it('looks a query up by the necessary keys fewest documents carry', () => {
    const query = compileMemoryQuery(
      {
        bool: {
          filter: [{ term: { servable: true } }, { terms: { format: ['reel'] } }],
          must: [{ multi_match: { query: 'sourdough bread', fields: ['caption'] } }],
        },
      },
      fields,
    );
    const counts: Record<string, number> = { sourdough: 3, bread: 4, '\u0000format\u0000reel': 400 };
    expect(chooseKeys(query.triggers, (k) => counts[k] ?? 0)?.keys).toEqual(['sourdough', 'bread']);
    // The hashtag or the format would do as well, were they the rarer.
    counts['\u0000format\u0000reel'] = 2;
    expect(chooseKeys(query.triggers, (k) => counts[k] ?? 0)?.keys).toEqual(['\u0000format\u0000reel']);
    // What a document offers to be looked up by.
    const offered = doc.keySets(new Set(['hashtags', 'format'])).flatMap((keys) => [...keys]);
    expect(offered).toEqual(
      expect.arrayContaining(['sourdough', 'bubbl', '\u0000hashtags\u0000baking', '\u0000format\u0000reel']),
    );
    expect(chooseKeys(compileMemoryQuery({ range: { views: { gte: 1 } } }, fields).triggers, () => 0)).toBeNull();
  });

  it('answers the same on a document that holds only the words its queries read', () => {
    const raw: object[] = [
      { multi_match: { query: 'bread pizza', fields: ['caption'] } },
      { bool: { must_not: [{ multi_match: { query: 'bubbl', fields: ['caption_stemmed'] } }] } },
      { bool: { should: [{ multi_match: { query: 'starter day', type: 'phrase', fields: ['caption'] } }] } },
      { bool: { should: [{ multi_match: { query: 'day starter', type: 'phrase', fields: ['caption'] } }] } },
      {
        dis_max: {
          queries: [{ range: { views: { gte: 1 } } }, { multi_match: { query: 'home', fields: ['caption'] } }],
        },
      },
    ];
    const queries = raw.map((q) => compileMemoryQuery(q, fields));
    const reads = textReads(queries);
    expect([...reads.paths].sort()).toEqual(['caption', 'caption_stemmed']);
    expect([...reads.words].sort()).toEqual(['bread', 'bubbl', 'day', 'home', 'pizza', 'starter']);
    const restricted = new MemoryDoc(doc.source, fields, reads.words);
    expect(queries.map((q) => q.matches(restricted))).toEqual(queries.map((q) => q.matches(doc)));
    expect(queries.map((q) => q.matches(doc))).toEqual([true, false, true, false, true]);
    // Its keys: only the words the queries read, from the fields they read (once per field).
    const offered = restricted.keySets(new Set(['format']), reads.paths).flatMap((keys) => [...keys]);
    expect(offered.sort()).toEqual([
      '\u0000format\u0000reel',
      'bread',
      'bubbl',
      'day',
      'day',
      'home',
      'starter',
      'starter',
    ]);
  });
});
