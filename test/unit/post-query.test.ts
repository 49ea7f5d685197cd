import { describe, expect, it } from 'vitest';
import { postSearchProbes, postSearchQuery } from '../../src/engine/elasticsearch/queries/post-query.ts';
import { termProbes } from '../../src/engine/elasticsearch/queries/query-terms.ts';
import { and } from '../../src/query/ast.ts';
import type { PostSearch } from '../../src/query/search-codec.ts';
import { withoutStopWords } from '../../src/text/analysis.ts';

const search = (query: string | null): PostSearch => ({ query, filter: and([]), sort: null });
const FIELDS = ['caption^2', 'content_text^1.5', 'transcript_text', 'visible_text', 'visual_text^0.5'];
const STEMMED = [
  'caption_stemmed^2',
  'content_text_stemmed^1.5',
  'transcript_text_stemmed',
  'visible_text_stemmed',
  'visual_text_stemmed^0.5',
];

describe('post query text match', () => {
  it('takes the better of the exact words (stop words dropped) and their stems, with no tie-breaker or sum', () => {
    expect(postSearchQuery(search('A night-time skincare routine with a discount code'))).toEqual({
      bool: {
        filter: [{ term: { servable: true } }],
        must: [
          {
            dis_max: {
              queries: [
                {
                  multi_match: {
                    query: 'night time skincare routine discount code',
                    type: 'best_fields',
                    fields: FIELDS,
                  },
                },
                {
                  multi_match: {
                    query: 'night time skincar routin discount code',
                    type: 'best_fields',
                    fields: STEMMED,
                  },
                },
              ],
            },
          },
        ],
      },
    });
  });

  it('still searches a query made only of stop words, every word of it', () => {
    expect(postSearchQuery(search('To be or not to be'))).toEqual({
      bool: {
        filter: [{ term: { servable: true } }],
        must: [{ multi_match: { query: 'to be or not to be', type: 'best_fields', fields: FIELDS } }],
      },
    });
  });

  it('drops the function words of a question on both sides ("get" retrieved beat-making posts)', () => {
    const sides = (query: string) =>
      (
        postSearchQuery(search(query)) as {
          bool: { must: [{ dis_max: { queries: { multi_match: { query: string } }[] } }] };
        }
      ).bool.must[0].dis_max.queries.map((q) => q.multi_match.query);
    expect(sides('How do I get rid of acne scars?')).toEqual(['rid acne scars', 'rid acn scar']);
    expect(sides('What should I know about retinol? Any tips')).toEqual(['know retinol tips', 'know retinol tip']);
    // In the query's language when it is sure of it: Spanish function words (Snowball's list: "es" too), Spanish stems.
    expect(sides('¿cuál es la mejor rutina para el cuidado de la piel?')[0]).toBe('cuál mejor rutina cuidado piel');
  });

  it('keeps a single word, even a function word, and searches it', () => {
    const texts = JSON.stringify(postSearchQuery(search('Get')));
    expect(texts).toContain(JSON.stringify({ query: 'get', type: 'best_fields', fields: FIELDS }));
    expect(texts).toContain(JSON.stringify({ query: 'get', type: 'best_fields', fields: STEMMED }));
  });

  it('is a pure filter without a query', () => {
    expect(postSearchQuery(search(null))).toEqual({ bool: { filter: [{ term: { servable: true } }] } });
  });
});

describe('withoutStopWords', () => {
  it('lowercases, splits like the stemmed side, keeps possessives and inner apostrophes, drops stop words', () => {
    expect(withoutStopWords("The creator's DON'T-miss tips, for the win")).toBe("creator's don't miss tips win");
    expect(withoutStopWords('the and of')).toBe('');
  });
});

describe('word probes', () => {
  const probes = termProbes({ words: ['skincare', 'routine'], stems: ['skincar', 'routin'] });

  it('go in a post filter that matches every document, so the text match alone scores (top-k pruning kept)', () => {
    expect(postSearchProbes(search('skincare routine'), probes)).toEqual({
      bool: { should: [{ match_all: {} }, ...probes] },
    });
    // The query itself is the text match and the filter, nothing beside them.
    const query = postSearchQuery(search('skincare routine')) as { bool: Record<string, unknown> };
    expect(Object.keys(query.bool).sort()).toEqual(['filter', 'must']);
  });

  it('are left out where nothing reads them: no query, no probes, or entities that rank instead', () => {
    expect(postSearchProbes(search(null), probes)).toBeUndefined();
    expect(postSearchProbes(search('skincare routine'), [])).toBeUndefined();
    expect(postSearchProbes(search('#skincare routine'), probes)).toBeUndefined();
  });

  it('probe a word of an unspaced script as a phrase of the exact fields and its segmented token', () => {
    const text = ['caption', 'content_text', 'transcript_text', 'visible_text', 'visual_text'];
    expect(termProbes({ words: ['ゲーム'], stems: ['u30b2u30fcu30e0'] })).toEqual([
      {
        bool: {
          should: [
            { multi_match: { query: 'ゲーム', type: 'phrase', fields: text } },
            { multi_match: { query: 'u30b2u30fcu30e0', fields: text.map((f) => `${f}_stemmed`) } },
          ],
          boost: 1,
          _name: 'term:0',
        },
      },
    ]);
    // A Japanese run without spaces is also looked up as a tag, and still probed word by word.
    expect(postSearchProbes(search('私のゲームルーティン'), probes)).toEqual({
      bool: { should: [{ match_all: {} }, ...probes] },
    });
  });
});
