import { describe, expect, it } from 'vitest';
import { compileQuery } from '../../src/percolator/compile.ts';
import { textReads } from '../../src/percolator/compiled.ts';
import { fieldTable, MemoryDoc, type FieldTable } from '../../src/percolator/document.ts';
import { chooseKeys } from '../../src/percolator/triggers.ts';

// What the percolator needs of a document to know which queries to try on it (triggers.ts), and
// that a document holding only the words its queries read answers as one holding them all. What
// each query kind answers is checked against the engine itself (test/integration/percolator/).
const fields: FieldTable = fieldTable(
  {
    caption: { type: 'text', analyzer: 'text_standard' },
    caption_stemmed: { type: 'text', analyzer: 'text_client_stemmed' },
    hashtags: { type: 'keyword', normalizer: 'lowercase_keyword' },
    format: { type: 'keyword' },
    servable: { type: 'boolean' },
    views: { type: 'long' },
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
  },
  fields,
);

describe('the percolator’s triggers', () => {
  it('leaves out fields it cannot reproduce (vectors, an analyzer with other filters)', () => {
    expect([...fields.keys()].sort()).toEqual([
      'caption',
      'caption_stemmed',
      'format',
      'hashtags',
      'servable',
      'views',
    ]);
    expect(() => compileQuery({ term: { shouty: 'bread' } }, fields)).toThrow(/shouty/);
  });

  it('looks a query up by the necessary keys fewest documents carry', () => {
    const query = compileQuery(
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
    // The format would do as well, were it the rarer.
    counts['\u0000format\u0000reel'] = 2;
    expect(chooseKeys(query.triggers, (k) => counts[k] ?? 0)?.keys).toEqual(['\u0000format\u0000reel']);
    // What a document offers to be looked up by.
    const offered = doc.keySets(new Set(['hashtags', 'format'])).flatMap((keys) => [...keys]);
    expect(offered).toEqual(
      expect.arrayContaining(['sourdough', 'bubbl', '\u0000hashtags\u0000baking', '\u0000format\u0000reel']),
    );
    expect(chooseKeys(compileQuery({ range: { views: { gte: 1 } } }, fields).triggers, () => 0)).toBeNull();
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
    const queries = raw.map((q) => compileQuery(q, fields));
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
