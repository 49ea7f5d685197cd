import { describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation, type Observation } from '../../src/contract/observations.ts';
import { baselineFactsChanged, snapshotChanged, topicsChanged } from '../../src/domain/changes.ts';
import { applyAccountEnrichment, groupBatch, mergeAccountGroup, mergePostGroup } from '../../src/domain/merge.ts';
import type { AccountRecord, PostRecord } from '../../src/domain/records.ts';
import { accountEnrichmentObs, accountObs, at, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';

function obs(value: Record<string, unknown>): Observation {
  const parsed = parseObservation(value);
  if (!parsed.ok) throw new Error(`fixture rejected: ${parsed.detail}`);
  return parsed.value;
}

const ACCOUNT_ID = mintId('account', 'acc-c');
const POST_ID = mintId('post', 'post-c');

function account(...observations: Array<Record<string, unknown>>): AccountRecord {
  return mergeAccountGroup(null, ACCOUNT_ID, groupBatch(observations.map(obs)).accounts.get(ACCOUNT_ID)!);
}

function post(...observations: Array<Record<string, unknown>>): PostRecord {
  return mergePostGroup(null, POST_ID, groupBatch(observations.map(obs)).posts.get(POST_ID)!);
}

describe('snapshotChanged', () => {
  const before = account(accountObs({ platform_id: 'acc-c', observed_at: at(1), followers_count: 1000 }));

  it('is false when only the snapshot version moves (a later observation that reads the same)', () => {
    const later = account(accountObs({ platform_id: 'acc-c', observed_at: at(2), followers_count: 1000 }));
    expect(later.profile!.t).not.toBe(before.profile!.t);
    expect(snapshotChanged(before, later)).toBe(false);
  });

  it('is true when what posts keep of the account reads differently', () => {
    const renamed = account(accountObs({ platform_id: 'acc-c', observed_at: at(2), handle: 'renamed_handle' }));
    expect(snapshotChanged(before, renamed)).toBe(true);
    const withNiches = applyAccountEnrichment(
      before,
      obs(accountEnrichmentObs('acc-c', { produced_at: at(3), niches: ['cooking'] })) as never,
    );
    expect(snapshotChanged(before, withNiches)).toBe(true);
  });

  it('is true when the account appears or goes, false for two absences', () => {
    expect(snapshotChanged(null, before)).toBe(true);
    expect(snapshotChanged(before, null)).toBe(true);
    expect(snapshotChanged(null, null)).toBe(false);
  });
});

describe('baselineFactsChanged', () => {
  const first = post(postObs('acc-c', { platform_id: 'post-c', observed_at: at(1), views: 100, likes: 5 }));

  it('is false when nothing a baseline reads moved (the same facts observed again)', () => {
    const again = post(postObs('acc-c', { platform_id: 'post-c', observed_at: at(2), views: 100, likes: 5 }));
    expect(baselineFactsChanged(first, again)).toBe(false);
  });

  it('is true when views, likes or comments move, or the post appears', () => {
    for (const change of [{ views: 101 }, { likes: 6 }, { comments: 9 }]) {
      const moved = post(
        postObs('acc-c', { platform_id: 'post-c', observed_at: at(2), views: 100, likes: 5, ...change }),
      );
      expect(baselineFactsChanged(first, moved), JSON.stringify(change)).toBe(true);
    }
    expect(baselineFactsChanged(null, first)).toBe(true);
  });

  it('takes absent views and null views as the same fact (as JSON does)', () => {
    const none = post(postObs('acc-c', { platform_id: 'post-c', observed_at: at(1), views: null }));
    const { views: _views, ...rest } = none.raw!.v;
    const absent: PostRecord = { ...none, raw: { ...none.raw!, v: rest as NonNullable<PostRecord['raw']>['v'] } };
    expect(baselineFactsChanged(absent, none)).toBe(false);
    expect(baselineFactsChanged(absent, first)).toBe(true);
  });
});

describe('topicsChanged', () => {
  const raw = postObs('acc-c', { platform_id: 'post-c', observed_at: at(1) });
  it('follows the enrichment topics, not their arrival', () => {
    const unenriched = post(raw);
    const enriched = post(raw, postEnrichmentObs('post-c', { produced_at: at(2), topics: ['cooking', 'baking'] }));
    const again = post(raw, postEnrichmentObs('post-c', { produced_at: at(3), topics: ['cooking', 'baking'] }));
    const other = post(raw, postEnrichmentObs('post-c', { produced_at: at(3), topics: ['baking', 'cooking'] }));
    expect(topicsChanged(unenriched, enriched)).toBe(true);
    expect(topicsChanged(enriched, again)).toBe(false);
    expect(topicsChanged(enriched, other)).toBe(true);
  });
});
