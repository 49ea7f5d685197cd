import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { facetsResponseSchema } from '../../src/contract/search-extras.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';
import { bucketsOf, pageAll, tally } from '../helpers/facet-counts.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const MODEL_DIR = path.resolve(import.meta.dirname, '../../../shared/models/all-MiniLM-L6-v2');

// Hybrid ranking returns the lexical matches and the semantic window: facets count both.
describe('post facets with hybrid ranking', () => {
  let hybrid: Stack;
  beforeAll(async () => {
    hybrid = await startStack('facets-hybrid', { MODEL_DIR, SEARCH_RANKING: 'hybrid' });
    await hybrid.runtime.embedder.ready();
    const captions = [
      'Evening skin care regimen before sleep',
      'Bedtime face care steps: cleanser, serum, moisturiser',
      'How to change a flat tyre on the motorway',
      'Night-time skincare routine in five minutes',
      'Sourdough starter feeding schedule',
    ];
    const response = await hybrid.ingest([
      accountObs({ platform_id: 'fh-a', handle: 'fh.author' }),
      ...captions.map((caption, i) =>
        postObs('fh-a', { platform_id: `fh-${i}`, caption, format: i % 2 ? 'carousel' : 'reel' }),
      ),
    ]);
    expect(response.statusCode).toBe(200);
  }, 240_000);
  afterAll(async () => hybrid?.close());

  it('count the semantic window too', async () => {
    const scope = { query: 'night-time skincare routine' };
    const posts = await pageAll(hybrid, 'posts', { post: scope });
    // Only one caption shares the query's words; the others come from the semantic side.
    expect(posts.length).toBeGreaterThan(1);
    const response = await hybrid.post('/v1/social/posts/facets', { post: scope, facets: [{ field: 'format' }] });
    const body = facetsResponseSchema.parse(response.body);
    expect(body.total).toBe(posts.length);
    expect(bucketsOf(body.facets.format!)).toEqual(tally(posts, (p) => [p.format]));
  });
});
