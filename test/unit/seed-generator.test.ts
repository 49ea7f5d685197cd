import { describe, it, expect } from 'vitest';
import { parseObservation } from '../../src/contract/observations.ts';
import {
  DEFAULT_SEED_NOW,
  generateObservations,
  seedAccountLabels,
  seedPostLabels,
  type SeedOptions,
} from '../../src/seed/generator.ts';
import { STYLES_PER_NICHE } from '../../src/seed/posts.ts';
import { NICHE_BY_ID } from '../../src/seed/vocabulary.ts';

type Obs = Record<string, any>;

const OPTIONS: SeedOptions = { posts: 2000, accounts: 200, seed: 7 };
const observations: Obs[] = [...generateObservations(OPTIONS)];
const byKind = (kind: string): Obs[] => observations.filter((o) => o.kind === kind);
const posts = byKind('post');
const enrichments = byKind('post_enrichment');
const accountObs = byKind('account');

/** Account observations grouped by platform ID, in emission order. */
const accountHistory = new Map<string, Obs[]>();
for (const o of accountObs) {
  const list = accountHistory.get(o.platform_id) ?? [];
  list.push(o);
  accountHistory.set(o.platform_id, list);
}

function jsonSequence(opts: SeedOptions): string[] {
  return Array.from(generateObservations(opts), (o) => JSON.stringify(o));
}

describe('generateObservations', () => {
  it('emits only observations the intake accepts', () => {
    observations.forEach((o, i) => {
      const parsed = parseObservation(o);
      if (!parsed.ok) {
        expect.fail(
          `observation ${i} (${String(o.kind)}) rejected: ${parsed.detail}\n${JSON.stringify(o).slice(0, 1000)}`,
        );
      }
    });
    expect(posts).toHaveLength(2000);
    expect(accountHistory.size).toBe(200);
  });

  it('is reproducible for a seed and differs between seeds', () => {
    const again = jsonSequence(OPTIONS);
    expect(again).toEqual(observations.map((o) => JSON.stringify(o)));
    const other = jsonSequence({ ...OPTIONS, seed: 8 });
    expect(other).not.toEqual(again);
    expect(jsonSequence({ posts: 50, accounts: 10, seed: 7, now: new Date(DEFAULT_SEED_NOW) })).toEqual(
      jsonSequence({ posts: 50, accounts: 10, seed: 7 }),
    );
  });

  it('streams: the first observations of a huge dataset come without generating it', () => {
    const started = Date.now();
    const it = generateObservations({ posts: 1_000_000_000, accounts: 1000, seed: 3 });
    let n = 0;
    for (const _ of it) if (++n >= 5000) break;
    expect(n).toBe(5000);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('has private, renamed and gone accounts', () => {
    const first = [...accountHistory.values()].map((list) => list[0]!);
    expect(first.filter((a) => a.is_private).length).toBeGreaterThan(0);
    const renamed = [...accountHistory.values()].filter(
      (list) => list.length === 2 && list.every((o) => o.status === 'active') && list[0]!.handle !== list[1]!.handle,
    );
    expect(renamed.length).toBeGreaterThan(0);
    for (const [before, after] of renamed) expect(after!.observed_at > before!.observed_at).toBe(true);
    const gone = [...accountHistory.values()].filter((list) => list.some((o) => o.status !== 'active'));
    expect(gone.length).toBeGreaterThan(0);
    for (const list of gone) {
      expect(Object.keys(list.at(-1)!).sort()).toEqual(['kind', 'observed_at', 'platform_id', 'status']);
      expect(['deleted', 'deactivated', 'unobservable']).toContain(list.at(-1)!.status);
    }
  });

  it('uses unique, realistic handles and heavy-tailed followers', () => {
    const handles = accountObs.filter((o) => o.status === 'active').map((o) => o.handle as string);
    for (const h of handles) expect(h).toMatch(/^[a-z0-9._]+$/);
    const current = new Map<string, string>();
    for (const o of accountObs) if (o.status === 'active') current.set(o.platform_id, o.handle);
    expect(new Set(current.values()).size).toBe(current.size);
    const followers = [...accountHistory.values()].map((l) => l[0]!.followers_count as number).sort((a, b) => a - b);
    const median = followers[followers.length >> 1]!;
    expect(followers.at(-1)! / median).toBeGreaterThan(100);
  });

  it('mixes formats, media types, audio, coauthors and languages', () => {
    const formats = new Set(posts.map((p) => p.format));
    expect(formats).toContain('reel');
    expect(formats).toContain('carousel');
    const mediaTypes = new Set(posts.flatMap((p) => p.media.map((m: Obs) => m.type)));
    expect([...mediaTypes].sort()).toEqual(['image', 'video']);
    expect(posts.some((p) => p.audio === null)).toBe(true);
    expect(posts.some((p) => p.audio?.type === 'music')).toBe(true);
    expect(
      posts.some(
        (p) => p.audio?.type === 'original_sound' && accountHistory.has(p.audio.attribution_account_platform_id),
      ),
    ).toBe(true);
    const withCoauthors = posts.filter((p) => p.coauthor_platform_ids.length > 0);
    expect(withCoauthors.length).toBeGreaterThan(0);
    for (const p of withCoauthors) for (const id of p.coauthor_platform_ids) expect(accountHistory.has(id)).toBe(true);
    const languages = new Set(enrichments.map((e) => e.primary_language));
    expect(languages.size).toBeGreaterThanOrEqual(3);
    expect(languages).toContain('en');
  });

  it('enriches most posts and leaves some pending', () => {
    const enrichedIds = new Set(enrichments.map((e) => e.post_platform_id));
    expect(enrichedIds.size / posts.length).toBeGreaterThanOrEqual(0.7);
    expect(enrichedIds.size).toBeLessThan(posts.length);
    expect(enrichments.some((e) => e.offers.some((o: Obs) => o.types.includes('promo_code')))).toBe(true);
  });

  it('keeps references, order and times consistent', () => {
    const now = DEFAULT_SEED_NOW.getTime();
    const t = (iso: string): number => Date.parse(iso);
    const seenAccounts = new Set<string>();
    const postObservedAt = new Map<string, string>();
    for (const o of observations) {
      if (o.kind === 'account') seenAccounts.add(o.platform_id);
      else if (o.kind === 'post') {
        expect(seenAccounts.has(o.author_platform_id)).toBe(true);
        expect(t(o.posted_at) < t(o.observed_at) && t(o.observed_at) <= now, `post ${o.platform_id} times`).toBe(true);
        postObservedAt.set(o.platform_id, o.observed_at);
      } else if (o.kind === 'post_enrichment') {
        const observed = postObservedAt.get(o.post_platform_id);
        expect(observed).toBeDefined();
        expect(
          t(o.produced_at) >= t(observed!) && t(o.produced_at) <= now,
          `enrichment ${o.post_platform_id} time`,
        ).toBe(true);
      } else {
        expect(seenAccounts.has(o.account_platform_id)).toBe(true);
      }
    }
    expect(new Set(posts.map((p) => p.shortcode)).size).toBe(posts.length);
    for (const p of posts) expect(p.shortcode).toMatch(/^[A-Za-z0-9_-]{11}$/);
  });
});

describe('seedAccountLabels', () => {
  const labels = seedAccountLabels(OPTIONS);

  it('labels the accounts the dataset holds: IDs, privacy and post counts as observed', () => {
    expect(labels.map((l) => l.id)).toEqual([...accountHistory.keys()]);
    const authored = new Map<string, number>();
    for (const p of posts) authored.set(p.author_platform_id, (authored.get(p.author_platform_id) ?? 0) + 1);
    for (const label of labels) {
      expect(label.posts).toBe(authored.get(label.id) ?? 0);
      expect(label.isPrivate).toBe(accountHistory.get(label.id)![0]!.is_private);
      expect(label.niches[0]).toBe(label.niche);
    }
    expect(new Set(labels.map((l) => l.style)).size).toBe(STYLES_PER_NICHE);
  });

  it("names the style the posts keep to: most primary-niche posts are on its topics, few on another style's", () => {
    const byId = new Map(labels.map((l) => [l.id, l]));
    const authorOf = new Map(posts.map((p) => [p.platform_id, p.author_platform_id]));
    const topicsOf = (niche: string, style: number) => {
      const topics = NICHE_BY_ID.get(niche)!.topics;
      return new Set([0, 1].map((k) => topics[(style * 2 + k) % topics.length]![0]));
    };
    let own = 0;
    let other = 0;
    for (const e of enrichments) {
      const label = byId.get(authorOf.get(e.post_platform_id))!;
      const first = e.topics[0] as string;
      if (topicsOf(label.niche, label.style).has(first)) own++;
      if (topicsOf(label.niche, (label.style + 1) % STYLES_PER_NICHE).has(first)) other++;
    }
    expect(own / enrichments.length).toBeGreaterThan(0.5);
    expect(other / enrichments.length).toBeLessThan(0.15);
  });
});

describe('seedPostLabels', () => {
  const labels = seedPostLabels(OPTIONS);

  it('labels every post, pending ones too, as its enrichment (when there is one) says', () => {
    expect([...labels.keys()]).toEqual(posts.map((p) => p.platform_id));
    const pending = new Set(labels.keys());
    for (const e of enrichments) {
      const label = labels.get(e.post_platform_id)!;
      pending.delete(e.post_platform_id);
      expect(e.topics[0]).toBe(label.topic);
      expect(NICHE_BY_ID.get(label.niche)!.topics.map((t) => t[0])).toContain(label.topic);
      expect(e.primary_language).toBe(label.language);
      expect(e.commercial_contexts.includes('discount_promotion')).toBe(label.discount);
    }
    // The generator leaves 13-55 % of the posts pending: they are the ones the labels add.
    expect(pending.size / labels.size).toBeGreaterThan(0.1);
  });
});

describe('generateObservations with history', () => {
  const withHistory: Obs[] = [...generateObservations({ ...OPTIONS, history: true })];
  const DAY = 86_400_000;
  const now = DEFAULT_SEED_NOW.getTime();
  const series = (kind: string, key: string) => {
    const out = new Map<string, Obs[]>();
    for (const o of withHistory.filter((x) => x.kind === kind)) out.set(o[key], [...(out.get(o[key]) ?? []), o]);
    for (const list of out.values()) list.sort((a, b) => Date.parse(a.observed_at) - Date.parse(b.observed_at));
    return out;
  };

  it('adds re-observations the intake accepts, and leaves every other observation as it was', () => {
    for (const o of withHistory) expect(parseObservation(o).ok).toBe(true);
    let i = 0;
    for (const o of withHistory)
      if (i < observations.length && JSON.stringify(o) === JSON.stringify(observations[i])) i++;
    expect(i).toBe(observations.length);
    expect(withHistory.length).toBeGreaterThan(observations.length * 1.5);
  });

  it('observes each active account every ~3 days from 36 days before its first observation until now', () => {
    const accounts = series('account', 'platform_id');
    const active = [...accountHistory.values()].filter((list) => list.length === 1).map((list) => list[0]!);
    expect(active.length).toBeGreaterThan(150);
    for (const first of active) {
      const list = accounts.get(first.platform_id)!.filter((o) => o.status === 'active');
      const times = list.map((o) => Date.parse(o.observed_at));
      expect(times[0]!).toBeLessThanOrEqual(Date.parse(first.observed_at) - 35 * DAY);
      expect(times.at(-1)!).toBeGreaterThan(now - DAY);
      expect(times.at(-1)!).toBeLessThanOrEqual(now);
      for (let k = 1; k < times.length; k++) expect(times[k]! - times[k - 1]!).toBeLessThan(4.5 * DAY);
    }
  });

  it('moves followers along growth curves of several shapes: rises, falls, flat lines and jumps', () => {
    const changes = [...series('account', 'platform_id').values()]
      .map((list) => list.filter((o) => o.status === 'active').map((o) => o.followers_count as number))
      .filter((counts) => counts.length > 10 && counts[0]! > 1000)
      .map((counts) => counts.at(-1)! / counts[0]!);
    expect(changes.some((r) => r > 1.05)).toBe(true);
    expect(changes.some((r) => r < 0.97)).toBe(true);
    expect(changes.some((r) => r === 1)).toBe(true);
    expect(changes.some((r) => r > 1.4)).toBe(true);
  });

  it('re-observes recent posts with counters that never go down, and older posts not at all', () => {
    const posts = series('post', 'platform_id');
    let reobserved = 0;
    for (const list of posts.values()) {
      if (list.length === 1) continue;
      reobserved++;
      expect(Date.parse(list[0]!.posted_at)).toBeGreaterThan(now - 31 * DAY);
      for (let k = 1; k < list.length; k++) {
        for (const counter of ['views', 'likes', 'comments']) {
          if (list[k]![counter] !== null) expect(list[k]![counter]).toBeGreaterThanOrEqual(list[k - 1]![counter]);
        }
        expect(Date.parse(list[k]!.observed_at)).toBeLessThanOrEqual(now);
      }
    }
    expect(reobserved).toBeGreaterThan(20);
  });
});
