import { describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation, type Observation } from '../../src/contract/observations.ts';
import { createMediaUrlSigner } from '../../src/media/url-signer.ts';
import { applyAccount, applyAccountSnapshot, applyPost } from '../../src/domain/merge.ts';
import { emptyAccount, emptyPost, snapshotOf, type PostRecord } from '../../src/domain/records.ts';
import type { AlertMatching, AlertQuery } from '../../src/engine/alerts.ts';
import { createMatchWrites } from '../../src/services/alerts/matching.ts';
import type { SavedSearchRecord } from '../../src/services/alerts/search-store.ts';
import { accountObs, postObs } from '../helpers/fixtures.ts';

// The matching's own bookkeeping, apart from the engine and Redis (tested against them in
// test/integration/alert-*.test.ts): here only what a number of saved searches does to it.

function valid(value: unknown): Observation {
  const parsed = parseObservation(value);
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.value;
}

/** A servable post, first written at `firstSeen`. */
function post(firstSeen: string): PostRecord {
  const account = applyAccount(
    emptyAccount(mintId('account', 'mw-author'), 'mw-author'),
    valid(accountObs({ platform_id: 'mw-author' })) as never,
  );
  const record = applyPost(
    emptyPost(mintId('post', 'mw-p1'), 'mw-p1'),
    valid(postObs('mw-author', { platform_id: 'mw-p1' })) as never,
  );
  return { ...applyAccountSnapshot(record, account.id, snapshotOf(account)), first_seen_at: firstSeen };
}

describe('matching writes against many saved searches', () => {
  it('takes more saved searches than one call can spread (200,000) and still asks the engine', async () => {
    const now = Date.parse('2026-12-01T00:00:00Z');
    const created = new Date(now - 60_000).toISOString();
    const searches: SavedSearchRecord[] = Array.from({ length: 200_000 }, (_, i) => ({
      id: `s${i}`,
      owner: 'o',
      name: 'n',
      post: { query: 'x' },
      vector: null,
      webhook_endpoint_id: null,
      created_at: created,
      last_match_at: null,
      events_dropped: 0,
      events: ['posts'],
      volume: null,
    }));
    const queries = searches.map((s) => ({ id: s.id }) as AlertQuery);
    const asked: string[][] = [];
    const engine: AlertMatching = {
      match: async (posts) => {
        asked.push(posts.map((p) => p.id));
        return new Map();
      },
    };
    const matchWrites = createMatchWrites({
      searches: { current: async () => ({ searches, queries }) },
      engine,
      reads: { currentFollowers: async () => new Map() },
      signer: createMediaUrlSigner({ baseUrl: 'http://127.0.0.1', secret: 'mw', ttlSeconds: 60 }),
      events: { record: async () => new Map() },
      volume: async () => ({ events: 0, dropped: 0 }),
      now: () => now,
    });
    const written = post(new Date(now - 1000).toISOString());
    const result = await matchWrites([{ before: null, after: written }]);
    expect(result.posts).toBe(1);
    expect(asked).toEqual([[written.id]]);
  });
});
