import { describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import {
  parseObservation,
  type AccountEnrichmentObservation,
  type AccountObservation,
  type Observation,
} from '../../src/contract/observations.ts';
import {
  applyAccount,
  applyAccountEnrichment,
  applyAccountSnapshot,
  sameRecord,
  groupBatch,
  hashtagsFromCaption,
  mergeAccountGroup,
  mergePostGroup,
  pickLww,
} from '../../src/domain/merge.ts';
import { emptyAccount, emptyPost, snapshotOf, type AccountRecord, type PostRecord } from '../../src/domain/records.ts';
import { accountEnrichmentObs, accountObs, at, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';

/** Validates a fixture the way the intake does (timestamps normalized), so merges see real input. */
function obs(value: Record<string, unknown>): Observation {
  const parsed = parseObservation(value);
  if (!parsed.ok) throw new Error(`fixture rejected: ${parsed.detail}`);
  return parsed.value;
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

const ACCOUNT_ID = mintId('account', 'acc-m');
const POST_ID = mintId('post', 'post-m');

/** Merges a batch into a new record the way the intake does: grouped, then applied in order. */
function mergeAccount(observations: Observation[]): AccountRecord {
  return mergeAccountGroup(null, ACCOUNT_ID, groupBatch(observations).accounts.get(ACCOUNT_ID)!);
}

function mergePost(observations: Observation[]): PostRecord {
  return mergePostGroup(null, POST_ID, groupBatch(observations).posts.get(POST_ID)!);
}

describe('groupBatch', () => {
  it('groups a batch by the record each observation applies to, keeping batch order within a record', () => {
    const batch = [
      postObs('acc-m', { platform_id: 'post-m', observed_at: at(2) }),
      accountObs({ platform_id: 'acc-m', observed_at: at(1) }),
      postEnrichmentObs('post-m', { produced_at: at(3) }),
      postObs('acc-m', { platform_id: 'post-other', observed_at: at(1) }),
      accountEnrichmentObs('acc-m', { produced_at: at(0) }),
      postObs('acc-m', { platform_id: 'post-m', observed_at: at(1) }),
    ].map(obs);
    const grouped = groupBatch(batch);
    expect([...grouped.accounts.keys()]).toEqual([ACCOUNT_ID]);
    expect([...grouped.posts.keys()]).toEqual([POST_ID, mintId('post', 'post-other')]);
    expect(grouped.accounts.get(ACCOUNT_ID)!.observations.map((o) => o.kind)).toEqual([
      'account',
      'account_enrichment',
    ]);
    const post = grouped.posts.get(POST_ID)!;
    expect(post.platformId).toBe('post-m');
    expect(post.observations).toEqual([batch[0], batch[2], batch[5]]);
  });

  it('merges an existing record forward and a missing one from empty', () => {
    const first = mergeAccount([obs(accountObs({ platform_id: 'acc-m', observed_at: at(1), followers_count: 10 }))]);
    const group = groupBatch([
      obs(accountObs({ platform_id: 'acc-m', observed_at: at(2), followers_count: 20 })),
    ]).accounts.get(ACCOUNT_ID)!;
    expect(mergeAccountGroup(first, ACCOUNT_ID, group).profile!.v.followers_count).toBe(20);
    expect(mergeAccountGroup(null, ACCOUNT_ID, group)).toEqual(
      applyAccount(emptyAccount(ACCOUNT_ID, 'acc-m'), group.observations[0] as AccountObservation),
    );
  });
});

describe('pickLww', () => {
  it('takes the later stamp whatever the argument order or content', () => {
    const older = { t: '2026-01-01T00:00:00.000Z', v: 'zzz' };
    const newer = { t: '2026-01-02T00:00:00.000Z', v: 'aaa' };
    expect(pickLww(older, newer)).toBe(newer);
    expect(pickLww(newer, older)).toBe(newer);
    expect(pickLww(null, older)).toBe(older);
    expect(pickLww(older, undefined)).toBe(older);
    expect(pickLww(null, null)).toBeNull();
  });

  it('breaks a tie on equal stamps by content, the same way in both orders', () => {
    const t = '2026-01-01T00:00:00.000Z';
    const a = { t, v: { handle: 'alpha', n: 1 } };
    const b = { t, v: { n: 1, handle: 'beta' } };
    expect(pickLww(a, b)).toBe(pickLww(b, a));
    expect([a, b]).toContain(pickLww(a, b));
    const c = { t, v: { handle: 'gamma', n: 1 } };
    // associative: any grouping of three tied registers picks the same one
    expect(pickLww(pickLww(a, b), c)).toBe(pickLww(a, pickLww(b, c)));
    expect(pickLww(pickLww(c, a), b)).toBe(pickLww(a, pickLww(b, c)));
    // equal content with a different key order is the same value
    expect(pickLww({ t, v: { x: 1, y: 2 } }, { t, v: { y: 2, x: 1 } })!.v).toEqual({ x: 1, y: 2 });
  });
});

describe('account merge', () => {
  const a1 = obs(accountObs({ platform_id: 'acc-m', handle: 'first', followers_count: 100, observed_at: at(10) }));
  const a3 = obs(accountObs({ platform_id: 'acc-m', handle: 'third', followers_count: 300, observed_at: at(30) }));
  const deactivated = obs({ kind: 'account', platform_id: 'acc-m', status: 'deactivated', observed_at: at(20) });
  const e1 = obs(
    accountEnrichmentObs('acc-m', {
      produced_at: at(10),
      publishing_summary: 'S1',
      publishing_languages: ['en'],
      niches: ['a'],
    }),
  );
  const e2 = obs({ kind: 'account_enrichment', account_platform_id: 'acc-m', produced_at: at(20), niches: ['b'] });
  const all = [a1, a3, deactivated, e1, e2];

  it('yields the same record for every order (120 permutations) and with duplicates', () => {
    const reference = mergeAccount(all);
    for (const order of permutations(all)) expect(mergeAccount(order)).toEqual(reference);
    expect(mergeAccount([...all, ...all.slice().reverse(), a1, e1])).toEqual(reference);
  });

  it('keeps the newest value per register: newest profile and status, partial enrichment keeps earlier fields', () => {
    const record = mergeAccount([e2, a3, e1, deactivated, a1]);
    expect(record.status).toEqual({ t: '2026-06-01T10:30:00.000Z', v: 'active' });
    expect(record.profile?.v).toMatchObject({ handle: 'third', followers_count: 300 });
    expect(record.publishing_summary).toEqual({ t: '2026-06-01T10:10:00.000Z', v: 'S1' });
    expect(record.publishing_languages?.v).toEqual(['en']);
    expect(record.niches).toEqual({ t: '2026-06-01T10:20:00.000Z', v: ['b'] });
  });

  it('an older observation never overwrites newer fields', () => {
    const newerOnly = mergeAccount([a3]);
    expect(mergeAccount([a3, a1])).toEqual(newerOnly);
    const laterEnrichment = mergeAccount([e2]);
    const olderNiches = obs(accountEnrichmentObs('acc-m', { produced_at: at(5), niches: ['old'] }));
    expect(mergeAccount([e2, olderNiches]).niches).toEqual(laterEnrichment.niches);
  });

  it('a newer non-active status wins but keeps the last active profile', () => {
    const gone = obs({ kind: 'account', platform_id: 'acc-m', status: 'deleted', observed_at: at(40) });
    const record = mergeAccount([gone, a1, a3]);
    expect(record.status?.v).toBe('deleted');
    expect(record.profile?.v.handle).toBe('third');
  });
});

describe('post merge', () => {
  const p1 = obs(postObs('auth-m', { platform_id: 'post-m', observed_at: at(10), views: 100, caption: 'first #One' }));
  const p2 = obs(postObs('auth-m', { platform_id: 'post-m', observed_at: at(20), views: 200, caption: 'second #Two' }));
  const e0 = obs({
    kind: 'post_enrichment',
    post_platform_id: 'post-m',
    produced_at: at(0),
    content_summary: 'stale',
    media: [{ platform_id: 'post-m-m1', visual_description: 'stale frame', transcript: 'stale words' }],
  });
  const e1 = obs(
    postEnrichmentObs('post-m', {
      produced_at: at(10),
      content_summary: 'fresh',
      media: [{ platform_id: 'post-m-m1', transcript: 'old words', visual_description: 'a jar' }],
    }),
  );
  const e2 = obs({
    kind: 'post_enrichment',
    post_platform_id: 'post-m',
    produced_at: at(20),
    topics: ['newer_topic'],
    media: [
      { platform_id: 'post-m-m1', transcript: 'new words' },
      { platform_id: 'post-m-m2', visible_text: [{ text: 'SALE' }] },
    ],
  });
  const all = [p1, p2, e0, e1, e2];

  it('yields the same record for every order (120 permutations) and with duplicates', () => {
    const reference = mergePost(all);
    for (const order of permutations(all)) expect(mergePost(order)).toEqual(reference);
    expect(mergePost([e2, e2, p1, ...all, p2, e0])).toEqual(reference);
  });

  it('keeps the newest raw facts and merges enrichment field by field and media item by media item', () => {
    const record = mergePost([e2, p2, e0, e1, p1]);
    expect(record.status).toEqual({ t: '2026-06-01T10:20:00.000Z', v: 'available' });
    expect(record.raw?.v).toMatchObject({ views: 200, caption: 'second #Two', hashtags: ['Two'] });
    expect(record.enrichment.content_summary).toEqual({ t: '2026-06-01T10:10:00.000Z', v: 'fresh' });
    expect(record.enrichment.topics).toEqual({ t: '2026-06-01T10:20:00.000Z', v: ['newer_topic'] });
    // fields only e1 carried survive e2's partial enrichment
    expect(record.enrichment.creative_formats?.v).toEqual(['tutorial']);
    expect(record.enrichment.primary_language?.v).toBe('en');
    expect(record.media_enrichment['post-m-m1']).toEqual({
      transcript: { t: '2026-06-01T10:20:00.000Z', v: 'new words' },
      visual_description: { t: '2026-06-01T10:10:00.000Z', v: 'a jar' },
    });
    expect(record.media_enrichment['post-m-m2']?.visible_text?.v).toEqual([{ text: 'SALE' }]);
  });

  it('an older observation or enrichment arriving later changes nothing', () => {
    const newer = mergePost([p2, e1]);
    expect(mergePost([p2, e1, p1, e0])).toEqual(newer);
  });

  it('a later-arriving older available observation keeps the newer unavailable status but refreshes older raw facts', () => {
    const p0 = obs(postObs('auth-m', { platform_id: 'post-m', observed_at: at(0), views: 1 }));
    const gone = obs({ kind: 'post', platform_id: 'post-m', status: 'unavailable', observed_at: at(30) });
    const record = mergePost([p0, gone, p2]);
    expect(record.status).toEqual({ t: '2026-06-01T10:30:00.000Z', v: 'unavailable' });
    expect(record.raw?.t).toBe('2026-06-01T10:20:00.000Z');
    expect(record.raw?.v.views).toBe(200);
    // an even older available observation does not replace the raw facts held
    expect(mergePost([p0, gone, p2, p1]).raw?.v.views).toBe(200);
  });

  it('keeps hashtags given explicitly instead of deriving them', () => {
    const explicit = obs(
      postObs('auth-m', { platform_id: 'post-m', caption: '#fromcaption', hashtags: ['#Given', 'other'] }),
    );
    expect(mergePost([explicit]).raw?.v.hashtags).toEqual(['Given', 'other']);
  });
});

describe('hashtagsFromCaption', () => {
  it('dedupes case-insensitively, keeping the first spelling and caption order', () => {
    expect(hashtagsFromCaption('Routine #Skincare then #NightRoutine and #skincare #SKINCARE')).toEqual([
      'Skincare',
      'NightRoutine',
    ]);
  });

  it('reads tags in any script, including combining marks', () => {
    expect(hashtagsFromCaption('#café #日本 #Ünïcode #ünÏCODE')).toEqual(['café', '日本', 'Ünïcode']);
    expect(hashtagsFromCaption('नमस्ते #हिन्दी')).toEqual(['हिन्दी']);
    expect(hashtagsFromCaption('#cafe\u0301 ok')).toEqual(['cafe\u0301']);
  });

  it('needs a word boundary before the marker and stops at punctuation', () => {
    expect(hashtagsFromCaption('a#b')).toEqual([]);
    expect(hashtagsFromCaption('it&#39;s')).toEqual([]);
    expect(hashtagsFromCaption('#tag, more (#paren) #end.')).toEqual(['tag', 'paren', 'end']);
    expect(hashtagsFromCaption('#snake_case #2026goals # lonely')).toEqual(['snake_case', '2026goals']);
    expect(hashtagsFromCaption('no tags here')).toEqual([]);
  });
});

describe('applyAccountSnapshot', () => {
  const older = mergeAccount([obs(accountObs({ platform_id: 'acc-m', handle: 'old', observed_at: at(10) }))]);
  const newer = applyAccount(
    older,
    obs(accountObs({ platform_id: 'acc-m', handle: 'new', observed_at: at(20) })) as AccountObservation,
  );
  const enriched = applyAccountEnrichment(
    newer,
    obs(accountEnrichmentObs('acc-m', { produced_at: at(5), niches: ['n'] })) as AccountEnrichmentObservation,
  );
  const post = emptyPost(POST_ID, 'post-m');

  it('keeps the newer snapshot whichever arrives first', () => {
    const a = applyAccountSnapshot(
      applyAccountSnapshot(post, ACCOUNT_ID, snapshotOf(newer)),
      ACCOUNT_ID,
      snapshotOf(older),
    );
    const b = applyAccountSnapshot(
      applyAccountSnapshot(post, ACCOUNT_ID, snapshotOf(older)),
      ACCOUNT_ID,
      snapshotOf(newer),
    );
    expect(a.accounts[ACCOUNT_ID]?.profile?.handle).toBe('new');
    expect(b).toEqual(a);
  });

  it('an enrichment-only change (even with an older produced_at than the profile) is a newer version', () => {
    const held = applyAccountSnapshot(post, ACCOUNT_ID, snapshotOf(newer));
    const next = applyAccountSnapshot(held, ACCOUNT_ID, snapshotOf(enriched));
    expect(next.accounts[ACCOUNT_ID]?.niches).toEqual(['n']);
    expect(applyAccountSnapshot(next, ACCOUNT_ID, snapshotOf(newer))).toBe(next);
  });

  it('the same snapshot again changes nothing', () => {
    const held = applyAccountSnapshot(post, ACCOUNT_ID, snapshotOf(newer));
    expect(applyAccountSnapshot(held, ACCOUNT_ID, snapshotOf(newer))).toBe(held);
  });
});

describe('sameRecord', () => {
  const record = { id: 'p', raw: { v: { caption: 'hi', media: [{ w: 1 }, { w: 2 }] }, t: 't1' }, accounts: {} };

  it('is true for the same state whatever the key order, and when a key holds undefined', () => {
    expect(
      sameRecord(record, {
        accounts: {},
        raw: { t: 't1', v: { media: [{ w: 1 }, { w: 2 }], caption: 'hi' } },
        id: 'p',
      }),
    ).toBe(true);
    expect(sameRecord(record, { ...record, embedding: undefined })).toBe(true);
    expect(sameRecord({ ...record, embedding: undefined }, record)).toBe(true);
  });

  it('is false for any difference a stored document would show', () => {
    expect(sameRecord(record, { ...record, raw: { ...record.raw, t: 't2' } })).toBe(false);
    expect(sameRecord(record, { ...record, raw: { v: { caption: 'hi', media: [{ w: 2 }, { w: 1 }] }, t: 't1' } })).toBe(
      false,
    );
    expect(sameRecord(record, { ...record, raw: { v: { caption: 'hi', media: [{ w: 1 }] }, t: 't1' } })).toBe(false);
    expect(sameRecord(record, { ...record, extra: null })).toBe(false);
    expect(sameRecord({ ...record, extra: null }, record)).toBe(false);
    expect(sameRecord({ a: [] }, { a: {} })).toBe(false);
    expect(sameRecord({ a: 1 }, { a: '1' })).toBe(false);
  });
});
