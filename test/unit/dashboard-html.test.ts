import { describe, expect, it } from 'vitest';
import { html } from '../../src/http/dashboard/html.ts';
import { explorePage, type ExploreState } from '../../src/http/dashboard/insight-views.ts';
import { usageChart } from '../../src/http/dashboard/usage-chart.ts';
import { hashPassword, verifyPassword } from '../../src/services/keys/password-hash.ts';

describe('dashboard HTML', () => {
  it('escapes every interpolated value unless it is markup made by html``', () => {
    const name = `<img src=x onerror="alert('x')"> & co`;
    expect(html`<td title="${name}">${name}</td>`.value).toBe(
      '<td title="&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt; &amp; co">&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt; &amp; co</td>',
    );
    expect(html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.value).toBe(
      '<ul><li>a&lt;</li><li>b</li></ul>',
    );
    expect(html`${null}${undefined}${false}${0}`.value).toBe('0');
  });

  it('draws one bar per day scaled to the busiest day, with errors inside it', () => {
    const svg = usageChart(
      [
        { day: '2026-11-01', requests: 10, errors: 5 },
        { day: '2026-11-02', requests: 0, errors: 0 },
      ],
      'Requests of <key>',
    ).value;
    expect(svg.match(/<rect class="ok"/g)).toHaveLength(2);
    expect(svg).toContain('aria-label="Requests of &lt;key&gt;"');
    expect(svg).toContain('height="122.0"');
    expect(svg).toContain('height="61.0"');
    expect(svg).toContain('2026-11-01: 10 requests, 5 client errors');
  });
});

describe('the Explore page', () => {
  const ctx = { holder: 'acme', csrf: 'token', base: '/dashboard', assetVersion: 'v1' };
  const list = { data: [], counted: 'posts' as const };
  const state = (extra: Partial<ExploreState>): ExploreState => ({
    form: {
      q: 'soudough <starter>',
      niches: [],
      topics: [],
      languages: [],
      countries: [],
      from: '',
      to: '',
      min_followers: '',
      max_followers: '',
      interval: 'week',
      by: '',
      tz: 'UTC',
    },
    options: { niches: list, topics: list, languages: list, countries: list },
    breakdowns: [],
    posts: [],
    endpoints: [],
    ...extra,
  });

  it('says what a corrected search searched, escaped, above a further suggestion', () => {
    const page = explorePage(
      ctx,
      state({ correctedQuery: 'sourdough <starter>', suggestedQuery: 'sourdough starters' }),
    ).value;
    expect(page).toContain(
      '<p class="corrected-query">Showing results for <strong>sourdough &lt;starter&gt;</strong></p><p class="did-you-mean">Did you mean',
    );
    expect(explorePage(ctx, state({})).value).not.toContain('Showing results for');
  });

  it('counts one post as one post, and more in the plural with thousands grouped', () => {
    const counts = (total: number) =>
      explorePage(
        ctx,
        state({
          counts: {
            interval: 'day',
            time_zone: 'UTC',
            total,
            buckets: [{ start: '2026-11-01T00:00:00Z', count: total }],
          },
        }),
      ).value;
    expect(counts(1)).toContain('<h2>1 post, by day (UTC)</h2>');
    expect(counts(1)).toContain('<title>2026-11-01T00:00:00Z: 1 post</title>');
    expect(counts(1200)).toContain('<h2>1,200 posts, by day (UTC)</h2>');
  });
});

describe('password hashing (scrypt)', () => {
  it('verifies the right password only, with a fresh salt each time, and fails closed on a corrupt hash', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    await expect(verifyPassword('correct horse battery', a)).resolves.toBe(true);
    await expect(verifyPassword('correct horse batterY', a)).resolves.toBe(false);
    await expect(verifyPassword('correct horse battery', a.slice(0, -2))).resolves.toBe(false);
    await expect(verifyPassword('correct horse battery', 'plain')).resolves.toBe(false);
  });
});
