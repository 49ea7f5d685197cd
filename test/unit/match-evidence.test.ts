import { describe, expect, it } from 'vitest';
import type { FullPost } from '../../src/contract/api.ts';
import { HIGHLIGHT_END as E, HIGHLIGHT_START as S } from '../../src/engine/matches.ts';
import { postMatch, toSnippet } from '../../src/services/search/match-evidence.ts';

const post = (over: Partial<FullPost>) =>
  ({
    id: 'p1',
    caption: '',
    content_summary: null,
    hook: null,
    key_messages: null,
    proofs: null,
    offers: null,
    calls_to_action: null,
    narrative_structure: null,
    media: [],
    ...over,
  }) as unknown as FullPost;

describe('match evidence snippets', () => {
  it('count highlight offsets in code points, so emoji and combining marks are never split', () => {
    const snippet = toSnippet(`👩🏽‍🔬 cre\u0300me ${S}serum${E} ✨${S}glow${E}`);
    expect(snippet.text).toBe('👩🏽‍🔬 cre\u0300me serum ✨glow');
    const chars = [...snippet.text];
    expect(snippet.highlights.map(({ start, end }) => chars.slice(start, end).join(''))).toEqual(['serum', 'glow']);
  });

  it('report each piece of a joined field on the API field it is verbatim in, and drop what is in none', () => {
    const match = postMatch(
      post({
        caption: 'Evening serum',
        content_summary: 'A serum routine.',
        offers: [{ summary: 'Serum bundle', types: [], stated_terms: ['20% off'] }],
        hook: { construction: 'Opens on the serum', devices: [], modalities: [] },
      }),
      {
        caption: [`Evening ${S}serum${E}`],
        // Lines of the joined text: summary, hook construction, offer summary and terms.
        content_text: [
          `A ${S}serum${E} routine.\nOpens on the ${S}serum${E}`,
          `${S}Serum${E} bundle 20% off`,
          `Not in any ${S}serum${E} field`,
        ],
      },
      'lexical',
    );
    expect(match.retrieved_by).toBe('lexical');
    expect(match.fields.map((f) => f.field)).toEqual(['caption', 'content_summary', 'hook.construction']);
    expect(match.fields[2]!.snippets).toEqual([{ text: 'Opens on the serum', highlights: [{ start: 13, end: 18 }] }]);
  });
});
