import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSearchResponseSchema } from '../../src/contract/api.ts';
import { mintId } from '../../src/contract/ids.ts';
import { accountObs, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Match evidence end to end, with hybrid ranking (the real model): snippets are verbatim text of
// the fields the API returns, the spans point at the query's words, and each result says which
// side of the fusion retrieved it.
const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');
let stack: Stack;
const search = (body: unknown) => stack.post('/v1/social/posts/search', body);

// Emoji (with joiners and variation selectors) and decomposed accents (e + U+0300) around the words.
const CAPTION = 'Cre\u0300me de la cre\u0300me 💆‍♀️✨ my nightly serum routines 👩🏽‍🔬 then sleep';
const TRANSCRIPT =
  'Okay 🙌🏾 first the serum. Then the moisturiser, gently. Voilà — de\u0301ja\u0300 vu 🧴 routine done.';
const id = (key: string) => mintId('post', key);

beforeAll(async () => {
  stack = await startStack('matches', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
  await stack.runtime.embedder.ready();
  const response = await stack.ingest([
    accountObs({ platform_id: 'me-a', handle: 'matches.author' }),
    postObs('me-a', { platform_id: 'me-emoji', caption: CAPTION }),
    postEnrichmentObs('me-emoji', {
      content_summary: 'A calm serum routine before bed 🌙, step by step.',
      media: [{ platform_id: 'me-emoji-m1', transcript: TRANSCRIPT }],
    }),
    postObs('me-a', { platform_id: 'me-semantic', caption: 'Bedtime face care: cleanser, moisturiser, lights out' }),
    postObs('me-a', { platform_id: 'me-other', caption: 'Serum routine two, for mornings' }),
    postObs('me-a', { platform_id: 'me-tyre', caption: 'Changing a flat tyre on the motorway' }),
  ]);
  expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
  expect(response.body.rejected).toEqual([]);
}, 240_000);
afterAll(async () => stack?.close());

/** A JSON-path-like field name (`media[0].transcript`) read from a full post. */
function valueAt(post: unknown, field: string): unknown {
  return field
    .split(/\.|(?=\[)/)
    .reduce<any>((at, key) => (key.startsWith('[') ? at?.[Number(key.slice(1, -1))] : at?.[key]), post);
}

describe('match evidence ("include": ["matches"])', () => {
  it('gives snippets that are verbatim in the fields the API returns, with spans on the query words', async () => {
    const response = await search({ post: { query: 'serum routine' }, include: ['matches'], limit: 10 });
    expect(response.statusCode, JSON.stringify(response.body)).toBe(200);
    const body = postSearchResponseSchema.parse(response.body);
    expect(body.matches!.map((m) => m.id)).toEqual(body.data.map((p) => p.id));
    const match = body.matches!.find((m) => m.id === id('me-emoji'))!;
    expect(match.fields.map((f) => f.field)).toEqual(['caption', 'content_summary', 'media[0].transcript']);
    const full = (await stack.get(`/v1/social/posts/${id('me-emoji')}`)).body;
    for (const { field, snippets } of match.fields) {
      const text = valueAt(full, field) as string;
      for (const snippet of snippets) {
        expect(text, field).toContain(snippet.text);
        const chars = [...snippet.text];
        expect(snippet.highlights.length).toBeGreaterThan(0);
        for (const { start, end } of snippet.highlights) {
          // Spans count code points: each is exactly a query word or its inflection.
          expect(chars.slice(start, end).join('').toLowerCase(), field).toMatch(/^(serum|routines?)$/);
        }
      }
    }
    // The caption's snippet keeps the emoji and decomposed accents intact.
    const caption = match.fields[0]!.snippets.map((s) => s.text).join(' ');
    expect(caption).toContain('💆‍♀️✨');
    expect(caption.normalize('NFC')).not.toContain('\uFFFD');
  });

  it('says which side of the hybrid ranking retrieved each result', async () => {
    const response = await search({ post: { query: 'serum routine' }, include: ['matches'], limit: 10 });
    const matches = new Map(postSearchResponseSchema.parse(response.body).matches!.map((m) => [m.id, m]));
    // Shares the words, and the window of this small index holds every post: both sides.
    expect(matches.get(id('me-other'))!.retrieved_by).toBe('both');
    // Shares no word with the query: the semantic side alone, and no field matched.
    expect(matches.get(id('me-semantic'))).toMatchObject({ retrieved_by: 'semantic', fields: [] });
  });

  it('keeps the option on cursor pages, and a continuation cannot change it', async () => {
    const first = await search({ post: { query: 'serum routine' }, include: ['matches'], limit: 1 });
    expect(first.body.matches).toHaveLength(1);
    const next = await search({ cursor: first.body.next_cursor });
    expect(next.statusCode).toBe(200);
    expect(next.body.matches.map((m: { id: string }) => m.id)).toEqual(next.body.data.map((p: { id: string }) => p.id));
    const changed = await search({ cursor: first.body.next_cursor, include: ['matches'] });
    expect(changed.statusCode).toBe(422);
    expect(changed.body.detail).toContain('/include:');
    const bad = await search({ post: { query: 'serum' }, include: ['explanations'] });
    expect(bad.statusCode).toBe(422);
    expect(bad.body.detail).toContain('/include/0:');
  });

  it('without include, the response is the envelope of the spec, byte for byte', async () => {
    const body = { post: { filters: { format: { in: ['reel'] } } }, limit: 3 };
    const plain = await stack.inject({
      method: 'POST',
      url: '/v1/social/posts/search',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expect(Object.keys(plain.body)).toEqual(['request_id', 'data', 'has_more', 'next_cursor']);
    const withMatches = await search({ ...body, include: ['matches'] });
    const { matches, ...rest } = withMatches.body;
    // A filters-only search: no ranking sides, nothing to highlight.
    expect(
      matches.every(
        (m: { retrieved_by: unknown; fields: unknown[] }) => m.retrieved_by === null && m.fields.length === 0,
      ),
    ).toBe(true);
    const same = (b: Record<string, unknown>) =>
      JSON.stringify({ ...b, request_id: 'x', next_cursor: b.next_cursor === null ? null : 'c' });
    expect(same(rest)).toBe(same(plain.body));
  });
});
