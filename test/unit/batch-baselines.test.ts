import { describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation, type Observation } from '../../src/contract/observations.ts';
import type { AuthorPostFacts } from '../../src/engine/intake-store.ts';
import { groupBatch, mergePostGroup } from '../../src/domain/merge.ts';
import type { PostRecord } from '../../src/domain/records.ts';
import { batchBaselines } from '../../src/services/intake/batch-baselines.ts';
import { postObs } from '../helpers/fixtures.ts';

// The ratio a batch gives its posts before writing them (the follow-up run stays what makes
// ratios right; its integration test: test/integration/follow-ups.test.ts).

const author = mintId('account', 'bb-a');
const parse = (o: object): Observation => {
  const parsed = parseObservation(o);
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.value;
};
const day = (d: number) => `2026-05-${String(d).padStart(2, '0')}T12:00:00Z`;
const stored = (id: string, d: number, views: number): AuthorPostFacts => ({
  id: mintId('post', id),
  authorId: author,
  postedAt: day(d),
  views,
  likes: 0,
  comments: 0,
  viewRatioToAccountBaseline: null,
});

/** The ratio function for `observations`, over `facts` as the engine's search would answer. */
async function ratios(observations: object[], facts: AuthorPostFacts[]) {
  const asked: Array<{ from: string; to: string } | undefined> = [];
  const store = {
    authorPostFacts: async (ids: readonly string[], within?: { from: string; to: string }) => {
      asked.push(within);
      return new Map(ids.map((id) => [id, facts.filter((f) => f.authorId === id)]));
    },
  };
  const batch = groupBatch(observations.map(parse));
  const ratioOf = await batchBaselines(store, batch.posts);
  const merged = (platformId: string, current: PostRecord | null = null) =>
    mergePostGroup(current, mintId('post', platformId), batch.posts.get(mintId('post', platformId))!);
  return { ratioOf, merged, asked };
}

describe('batch baselines', () => {
  it('reads the stored posts its windows can hold, and lays the batch over them', async () => {
    const { ratioOf, merged, asked } = await ratios(
      [postObs('bb-a', { platform_id: 'new', posted_at: day(20), views: 900 })],
      [stored('s1', 1, 100), stored('s2', 2, 300), stored('s3', 3, 200)],
    );
    // 900 / median(100, 300, 200)
    expect(ratioOf(merged('new'))).toBe(4.5);
    expect(asked).toEqual([{ from: '2026-02-19T12:00:00.000Z', to: '2026-05-20T12:00:00.000Z' }]);
  });

  it('a stored post the batch observes anew counts as the batch states it; one it makes unavailable, not at all', async () => {
    const observations = [
      postObs('bb-a', { platform_id: 'new', posted_at: day(20), views: 900 }),
      postObs('bb-a', { platform_id: 's1', posted_at: day(1), views: 600, observed_at: '2026-06-02T10:00:00Z' }),
      { kind: 'post', platform_id: 's3', status: 'unavailable', observed_at: '2026-06-02T10:00:00Z' },
    ];
    const facts = [stored('s1', 1, 100), stored('s2', 2, 300), stored('s3', 3, 200), stored('s4', 4, 500)];
    const { ratioOf, merged } = await ratios(observations, facts);
    // 900 / median(600, 300, 500): s1 at its new views, s3 gone (with s3: 2.25; s1 as stored: 3).
    expect(ratioOf(merged('new'))).toBe(1.8);
  });

  it('leaves the ratio to the follow-up where the record holds a newer observation than the batch', async () => {
    const { ratioOf, merged } = await ratios(
      [postObs('bb-a', { platform_id: 'new', posted_at: day(20), views: 900, observed_at: '2026-06-01T10:00:00Z' })],
      [stored('s1', 1, 100), stored('s2', 2, 300), stored('s3', 3, 200)],
    );
    const id = mintId('post', 'new');
    const later = postObs('bb-a', {
      platform_id: 'new',
      posted_at: day(20),
      views: 5000,
      observed_at: '2026-06-03T10:00:00Z',
    });
    const newer = mergePostGroup(null, id, groupBatch([parse(later)]).posts.get(id)!);
    expect(merged('new', newer).raw?.v.views).toBe(5000);
    expect(ratioOf(merged('new', newer))).toBeUndefined();
  });
});
