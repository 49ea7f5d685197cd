import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suggestResponseSchema, taxonomyResponseSchema } from '../../src/contract/names.ts';
import { accountEnrichmentObs, accountObs, at, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const problemType = (name: string) => `https://api.example.test/problems/${name}`;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('names');
  const caption = (tags: string) => `A morning walk ${tags}`;
  const written = await stack.ingest(
    [
      accountObs({
        platform_id: 'nm-zoe',
        handle: 'zoe_passport',
        display_name: 'Zoë Martin',
        followers_count: 48_000,
      }),
      accountObs({ platform_id: 'nm-zo2', handle: 'zoetrips', display_name: 'Zoe Trips', followers_count: 90_000 }),
      accountObs({ platform_id: 'nm-zo3', handle: 'zoe.secret', display_name: 'Zoe', is_private: true }),
      accountObs({ platform_id: 'nm-yuki', handle: 'yuki_photo', display_name: '写真家 ゆき', followers_count: 7_000 }),
      accountObs({
        platform_id: 'nm-eleni',
        handle: 'eleni.cooks',
        display_name: 'Ελένη Παππά',
        followers_count: 3_000,
      }),
      accountObs({ platform_id: 'nm-gone', handle: 'zoe_gone', followers_count: 1_000_000 }),
      { kind: 'account', platform_id: 'nm-gone', status: 'deleted', observed_at: at(5) },
      accountEnrichmentObs('nm-zoe', { niches: ['travel', 'future_registry_id'] }),
      accountEnrichmentObs('nm-zo2', { niches: ['travel'] }),
      accountEnrichmentObs('nm-yuki', { niches: ['photography'] }),
      postObs('nm-zoe', {
        platform_id: 'nm-p1',
        caption: caption('#Café #cafeteria'),
        hashtags: ['Café', 'cafeteria'],
      }),
      postObs('nm-zoe', { platform_id: 'nm-p2', caption: caption('#cafe'), caption_mentions: ['@Eleni.Cooks'] }),
      postObs('nm-zo2', { platform_id: 'nm-p3', caption: caption('#cafe'), caption_mentions: ['eleni.cooks'] }),
      postObs('nm-zo2', {
        platform_id: 'nm-p4',
        caption: caption('#cafe #CafeTeria'),
        caption_mentions: ['@zoetrips'],
      }),
      // Not served: its count is no one's.
      postObs('nm-zo2', { platform_id: 'nm-p5', caption: caption('#cafeteria #cafeteria') }),
      { kind: 'post', platform_id: 'nm-p5', status: 'unavailable', observed_at: at(10) },
      postEnrichmentObs('nm-p1', { topics: ['skin_barrier_repair'], primary_language: 'en' }),
      postEnrichmentObs('nm-p2', { topics: ['skin_barrier_repair', 'dry_skin_basics'], primary_language: 'fr' }),
      postEnrichmentObs('nm-p3', { topics: ['latte_art_2027'], primary_language: 'en' }),
    ],
    { vectors: false },
  );
  expect(written.statusCode).toBe(200);
});
afterAll(async () => stack?.close());

async function suggest(params: string) {
  const response = await stack.get(`/v1/social/suggest?${params}`);
  expect(response.statusCode).toBe(200);
  return suggestResponseSchema.parse(response.body).data;
}
const values = (data: Array<{ value: string }>) => data.map((s) => s.value);

describe('GET /v1/social/suggest', () => {
  it('finds accounts by handle and display-name prefix, case- and accent-insensitively, most followed first', async () => {
    for (const q of ['zoe', 'ZOË', 'Zoe', 'ｚｏｅ']) {
      const data = await suggest(`q=${encodeURIComponent(q)}&kinds=accounts`);
      // Private and deleted accounts are not suggested (account search never returns them).
      expect(data).toEqual([
        { kind: 'account', value: '@zoetrips', label: 'Zoe Trips', count: 90_000 },
        { kind: 'account', value: '@zoe_passport', label: 'Zoë Martin', count: 48_000 },
      ]);
    }
    expect(values(await suggest('q=martin&kinds=accounts'))).toEqual(['@zoe_passport']);
    expect(values(await suggest('q=zoe_p&kinds=accounts'))).toEqual(['@zoe_passport']);
  });

  it('finds names in any script', async () => {
    expect(values(await suggest(`q=${encodeURIComponent('写真')}&kinds=accounts`))).toEqual(['@yuki_photo']);
    expect(values(await suggest(`q=${encodeURIComponent('ゆ')}&kinds=accounts`))).toEqual(['@yuki_photo']);
    expect(values(await suggest(`q=${encodeURIComponent('ελενη')}&kinds=accounts`))).toEqual(['@eleni.cooks']);
    expect(values(await suggest(`q=${encodeURIComponent('ΠΑΠ')}&kinds=accounts`))).toEqual(['@eleni.cooks']);
  });

  it('counts hashtags and mentions by the servable posts carrying them, most carried first', async () => {
    const data = await suggest('q=CAFE&kinds=hashtags');
    // #cafe and #café are two hashtags (as the filter takes them); the unavailable post counts for none.
    expect(data).toEqual([
      { kind: 'hashtag', value: '#cafe', label: '#cafe', count: 3 },
      { kind: 'hashtag', value: '#cafeteria', label: '#cafeteria', count: 2 },
      { kind: 'hashtag', value: '#café', label: '#café', count: 1 },
    ]);
    expect(await suggest('q=ele&kinds=mentions')).toEqual([
      { kind: 'mention', value: '@eleni.cooks', label: '@eleni.cooks', count: 2 },
    ]);
    // A leading @ asks for accounts and mentions, a leading # for hashtags.
    expect(await suggest(`q=${encodeURIComponent('@zoet')}`)).toEqual([
      { kind: 'account', value: '@zoetrips', label: 'Zoe Trips', count: 90_000 },
      { kind: 'mention', value: '@zoetrips', label: '@zoetrips', count: 1 },
    ]);
    expect(values(await suggest(`q=${encodeURIComponent('#ele')}`))).toEqual([]);
  });

  it('finds topics and niches by a word of their label, unknown IDs included', async () => {
    // "Skin barrier repair" and "Dry skin basics" both have words starting "skin b…".
    expect(await suggest(`q=${encodeURIComponent('skin b')}&kinds=topics`)).toEqual([
      { kind: 'topic', value: 'skin_barrier_repair', label: 'Skin barrier repair', count: 2 },
      { kind: 'topic', value: 'dry_skin_basics', label: 'Dry skin basics', count: 1 },
    ]);
    expect(values(await suggest(`q=${encodeURIComponent('skin bar')}&kinds=topics`))).toEqual(['skin_barrier_repair']);
    expect(values(await suggest('q=skin&kinds=topics'))).toEqual(['skin_barrier_repair', 'dry_skin_basics']);
    expect(await suggest('q=latte%20art&kinds=topics')).toEqual([
      { kind: 'topic', value: 'latte_art_2027', label: 'Latte art 2027', count: 1 },
    ]);
    expect(await suggest('q=regis&kinds=niches')).toEqual([
      { kind: 'niche', value: 'future_registry_id', label: 'Future registry id', count: 1 },
    ]);
    expect(await suggest('q=trav&kinds=niches')).toEqual([
      { kind: 'niche', value: 'travel', label: 'Travel', count: 2 },
    ]);
  });

  it('answers the kinds in the order asked, at most `limit` of each', async () => {
    const data = await suggest('q=zoe&kinds=mentions,accounts&limit=1');
    expect(data).toEqual([
      { kind: 'mention', value: '@zoetrips', label: '@zoetrips', count: 1 },
      { kind: 'account', value: '@zoetrips', label: 'Zoe Trips', count: 90_000 },
    ]);
    const all = await suggest('q=tra');
    expect(all.map((s) => s.kind)).toEqual(['niche']);
  });

  it('is fresh: what a waited intake wrote is suggested within a second, with its count', async () => {
    const written = await stack.ingest(
      [
        accountObs({ platform_id: 'nm-new', handle: 'brand.new.voice', display_name: 'Nouvelle Voix' }),
        postObs('nm-new', { platform_id: 'nm-p6', caption: 'First post #freshtag' }),
        postObs('nm-new', { platform_id: 'nm-p7', caption: 'Second post #freshtag' }),
      ],
      { vectors: false },
    );
    expect(written.statusCode).toBe(200);
    const deadline = Date.now() + 1000;
    let found: Array<{ value: string; count: number }>;
    do {
      found = await suggest('q=fresh&kinds=hashtags');
    } while (found.length === 0 && Date.now() < deadline);
    expect(found).toEqual([{ kind: 'hashtag', value: '#freshtag', label: '#freshtag', count: 2 }]);
    expect(values(await suggest('q=nouv&kinds=accounts'))).toEqual(['@brand.new.voice']);
  });

  it('refuses bad parameters with 422 naming the parameter', async () => {
    const refused = async (params: string, pointer: RegExp) => {
      const response = await stack.get(`/v1/social/suggest?${params}`);
      expect(response.statusCode).toBe(422);
      expect(response.body.type).toBe(problemType('validation-failed'));
      expect(response.body.detail).toMatch(pointer);
    };
    await refused('kinds=accounts', /^query parameter \/q: /);
    await refused('q=', /^query parameter \/q: /);
    await refused(`q=${'a'.repeat(101)}`, /^query parameter \/q: /);
    await refused('q=zoe&kinds=accounts,people', /^query parameter \/kinds: expected a comma-separated list of/);
    await refused('q=zoe&limit=0', /^query parameter \/limit: expected an integer from 1 to 20/);
    await refused('q=zoe&limit=21', /^query parameter \/limit: /);
    await refused('q=zoe&page=2', /^query parameter /);
  });

  it('answers nothing for a prefix of nothing', async () => {
    expect(await suggest(`q=${encodeURIComponent('  ')}`)).toEqual([]);
    expect(await suggest(`q=${encodeURIComponent('@')}`)).toEqual([]);
  });
});

describe('GET /v1/social/taxonomies/{name}', () => {
  async function taxonomy(name: string) {
    const response = await stack.get(`/v1/social/taxonomies/${name}`);
    expect(response.statusCode).toBe(200);
    const body = taxonomyResponseSchema.parse(response.body);
    expect(body.request_id).toBe(response.headers['x-request-id']);
    return body;
  }

  it('lists every niche an account carries with how many public accounts carry it, unknown IDs included', async () => {
    const body = await taxonomy('niches');
    expect(body.counted).toBe('accounts');
    expect(body.data).toEqual([
      { id: 'travel', label: 'Travel', count: 2 },
      { id: 'future_registry_id', label: 'Future registry id', count: 1 },
      { id: 'photography', label: 'Photography', count: 1 },
    ]);
  });

  it('lists topics, languages, countries, formats and offer types with their counts', async () => {
    expect((await taxonomy('topics')).data).toEqual([
      { id: 'skin_barrier_repair', label: 'Skin barrier repair', count: 2 },
      { id: 'dry_skin_basics', label: 'Dry skin basics', count: 1 },
      { id: 'latte_art_2027', label: 'Latte art 2027', count: 1 },
    ]);
    expect((await taxonomy('languages')).data).toEqual([
      { id: 'en', label: 'English', count: 2 },
      { id: 'fr', label: 'French', count: 1 },
    ]);
    const countries = await taxonomy('countries');
    expect(countries.counted).toBe('accounts');
    expect(countries.data).toEqual([{ id: 'US', label: 'United States', count: 5 }]);
    expect((await taxonomy('formats')).data).toEqual([{ id: 'reel', label: 'Reel', count: expect.any(Number) }]);
    expect((await taxonomy('offer_types')).data).toEqual([
      { id: 'discount', label: 'Discount', count: 3 },
      { id: 'promo_code', label: 'Promo code', count: 3 },
    ]);
  });

  it('counts what a waited intake wrote at once', async () => {
    const before = (await taxonomy('topics')).data;
    const written = await stack.ingest(
      [postObs('nm-zoe', { platform_id: 'nm-p8' }), postEnrichmentObs('nm-p8', { topics: ['brand_new_topic'] })],
      { vectors: false },
    );
    expect(written.statusCode).toBe(200);
    const after = (await taxonomy('topics')).data;
    expect(after).toHaveLength(before.length + 1);
    expect(after).toEqual(
      expect.arrayContaining([...before, { id: 'brand_new_topic', label: 'Brand new topic', count: 1 }]),
    );
  });

  it('refuses an unknown dictionary with 422 naming the path parameter', async () => {
    const response = await stack.get('/v1/social/taxonomies/brands');
    expect(response.statusCode).toBe(422);
    expect(response.body.detail).toMatch(/^path parameter \/name: expected one of niches, topics, languages/);
  });
});
