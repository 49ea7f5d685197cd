import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHolders } from '../../src/start/core.ts';
import { startApiProcess, type ApiProcess } from '../helpers/api-process.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { accountEnrichmentObs, accountObs, postEnrichmentObs, postObs } from '../helpers/fixtures.ts';

// Debian's chromium, driven headless by playwright-core: nothing is downloaded (`npm test` installs
// it through `scripts/services.sh browser`).
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PASSWORD = 'correct horse battery staple';

let stack: Stack;
let api: ApiProcess;
let browser: Browser;

beforeAll(async () => {
  // The stack's worker delivers the alerts page's test events to a receiver on loopback.
  stack = await startStack('browser', { WEBHOOK_ALLOW_PRIVATE: 'true' });
  api = await startApiProcess(
    stack.config,
    { DASHBOARD_SIGNUP: 'invite', WEBHOOK_ALLOW_PRIVATE: 'true' },
    { selfBaseUrl: true },
  );
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
  await api?.stop();
  await stack?.close();
});

async function callApi(key: string, path: string, body?: unknown): Promise<number> {
  const response = await fetch(`${api.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  await response.arrayBuffer();
  return response.status;
}

async function signUp(page: Page, email: string): Promise<void> {
  const { code } = await openHolders(stack.config, stack.runtime.connections).invite({ email, days: 1 });
  await page.goto(`${api.url}/dashboard/sign-up?invitation=${encodeURIComponent(code)}`);
  await expect(page.getByLabel('Invitation code').inputValue()).resolves.toBe(code);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(`${api.url}/dashboard/keys`);
}

async function createKey(page: Page, name: string): Promise<string> {
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = (await page.locator('#new-key').textContent())?.trim() ?? '';
  expect(secret).toMatch(/^ssk_[a-z2-7]{16}_[A-Za-z0-9_-]{43}$/);
  return secret;
}

/** With DASHBOARD_SCREENSHOTS=<dir>, saves the page there (how docs/dashboard-*.png are made). */
async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.DASHBOARD_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, name), fullPage: true });
}

describe('the dashboard in a real browser (headless Chromium)', () => {
  it('signs up, creates a key, calls the API with it, sees the usage, revokes it, and the API answers 401', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const scriptErrors: string[] = [];
    page.on('pageerror', (error) => scriptErrors.push(error.message));
    page.on('console', (message) => {
      // A CSP violation is reported on the console: none may happen.
      if (message.type() === 'error') scriptErrors.push(message.text());
    });
    try {
      const email = `browser-${stack.config.REDIS_PREFIX}@example.com`;
      await signUp(page, email);
      const key = await createKey(page, 'browser key');
      // The progressive enhancement is there when scripts run: the copy button shows.
      await expect(page.getByRole('button', { name: 'Copy' }).isVisible()).resolves.toBe(true);

      expect(await callApi(key, '/v1/social/posts/search', { post: { query: 'kite' } })).toBe(200);
      expect(await callApi(key, '/v1/social/posts/nope')).toBe(404);

      // Usage reaches the page within a few seconds (flushed every second).
      const today = new Date().toISOString().slice(0, 10);
      let cells: string[] = [];
      for (let i = 0; i < 20; i++) {
        await page.goto(`${api.url}/dashboard/usage?days=7`);
        cells = await page.locator('section.usage tbody tr').first().locator('td').allTextContents();
        if (cells[0] === today && cells[13] === '2') break;
        await page.waitForTimeout(300);
      }
      // day, search posts, search accounts, get post, get account, lookup posts, lookup accounts, suggest,
      // taxonomies, post facets, account facets, post counts, intake, all, 4xx, 429
      expect(cells).toEqual([today, '1', '0', '1', '0', '0', '0', '0', '0', '0', '0', '0', '0', '2', '1', '0']);
      await expect(page.locator('svg.chart').count()).resolves.toBe(1);
      await screenshot(page, 'dashboard-usage.png');

      await page.goto(`${api.url}/dashboard/keys`);
      await screenshot(page, 'dashboard-keys.png');
      // The revoke button asks first (the script's confirm); accept it.
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Revoke' }).click();
      await page.waitForURL(/\/dashboard\/keys\?revoked=/);
      await expect(page.locator('.notice').textContent()).resolves.toContain('browser key is revoked');
      await expect(page.locator('tbody .status').first().textContent()).resolves.toBe('revoked');
      expect(await callApi(key, '/v1/social/posts/nope')).toBe(401);
      expect(scriptErrors, scriptErrors.join('\n')).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('works with JavaScript turned off: sign up, create a key, sign out, sign in again', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      const email = `no-script-${stack.config.REDIS_PREFIX}@example.com`;
      await signUp(page, email);
      const key = await createKey(page, 'no-script key');
      // Without scripts the copy button stays hidden; the key is selectable text.
      await expect(page.getByRole('button', { name: 'Copy' }).isVisible()).resolves.toBe(false);
      expect(await callApi(key, '/v1/social/posts/nope')).toBe(404);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/dashboard\/sign-in\?signed_out/);
      await page.goto(`${api.url}/dashboard/keys`);
      await page.waitForURL(`${api.url}/dashboard/sign-in`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${api.url}/dashboard/keys`);
      await expect(page.locator('tbody tr').count()).resolves.toBe(1);
    } finally {
      await context.close();
    }
  });

  it('manages alerts: adds an endpoint (its secret once), sends a test event, sees the delivery, deletes a saved search', async () => {
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received.push(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      const email = `alerts-${stack.config.REDIS_PREFIX}@example.com`;
      await signUp(page, email);
      const key = await createKey(page, 'alerts key');
      await page.getByRole('link', { name: 'Alerts' }).click();
      await page.waitForURL(`${api.url}/dashboard/alerts`);
      await page.getByLabel('Endpoint URL').fill(hookUrl);
      await page.getByLabel('Description').fill('laptop receiver');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await expect(page.locator('#new-secret').textContent()).resolves.toMatch(/^whsec_/);
      // Shown once: a reload shows the endpoint, not its secret.
      await page.goto(`${api.url}/dashboard/alerts`);
      await expect(page.locator('#new-secret').count()).resolves.toBe(0);
      await expect(page.locator('section.endpoint code').first().textContent()).resolves.toBe(hookUrl);

      await page.getByRole('button', { name: 'Send a test event' }).click();
      await page.waitForURL(/\/dashboard\/alerts\?notice=/);
      await expect(page.locator('.notice').textContent()).resolves.toContain('Test event evt_');
      for (let i = 0; i < 50 && received.length === 0; i++) await page.waitForTimeout(200);
      expect(received.map((b) => JSON.parse(b).type)).toEqual(['webhook.test']);
      let statuses: string[] = [];
      for (let i = 0; i < 20 && statuses.length === 0; i++) {
        await page.goto(`${api.url}/dashboard/alerts`);
        statuses = await page.locator('table.deliveries tbody tr td:nth-child(4)').allTextContents();
      }
      expect(statuses).toEqual(['204']);

      // A saved search made with the holder's key shows here, and goes.
      const created = await fetch(`${api.url}/v1/social/saved-searches`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'kites', post: { query: 'kite' } }),
      });
      expect(created.status).toBe(201);
      await page.goto(`${api.url}/dashboard/alerts`);
      await expect(page.locator('table.searches tbody tr td').first().textContent()).resolves.toBe('kites');
      await screenshot(page, 'dashboard-alerts.png');
      page.once('dialog', (dialog) => void dialog.accept());
      await page.locator('table.searches').getByRole('button', { name: 'Delete' }).click();
      await page.waitForURL(/notice=/);
      await expect(page.locator('table.searches').count()).resolves.toBe(0);
    } finally {
      await context.close();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});

describe('the Explore and account pages in a real browser', () => {
  const HOUR = 3_600_000;
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const day = (ms: number) => iso(ms).slice(0, 10);

  // One kite-surfer with 14 posts over two weeks (their views seen twice), and a second account
  // with an accented display name, for the typeahead.
  beforeAll(async () => {
    const author = 'br-kiter';
    const observations: unknown[] = [
      // Three observations of the author: its followers history.
      ...[20, 10, 1].map((d, i) =>
        accountObs({
          platform_id: author,
          handle: 'br.kiter',
          followers_count: 1000 + 550 * i,
          observed_at: iso(now - d * 24 * HOUR),
        }),
      ),
      accountEnrichmentObs(author, { niches: ['kitesurfing'] }),
      accountObs({
        platform_id: 'zoe-passport',
        handle: 'zoe_passport',
        display_name: 'Zoë Martin',
        followers_count: 52_000,
        declared_locations: [{ country_code: 'FR', region_code: 'FR-NAQ', locality: 'Biarritz' }],
        observed_at: iso(now - 2 * HOUR),
      }),
    ];
    for (let i = 0; i < 14; i++) {
      const postedAt = now - (13 * 24 - i * 23) * HOUR;
      const id = `br-post-${i}`;
      observations.push(
        postObs(author, {
          platform_id: id,
          posted_at: iso(postedAt),
          observed_at: iso(postedAt + HOUR),
          views: 100 * i,
          caption: `Kite session ${i} at the lagoon #kite`,
        }),
        // Seen again a day later with more views: the post's views history.
        postObs(author, {
          platform_id: id,
          posted_at: iso(postedAt),
          observed_at: iso(Math.min(postedAt + 25 * HOUR, now - 60_000)),
          views: 300 * i + 50,
          caption: `Kite session ${i} at the lagoon #kite`,
        }),
      );
      if (i % 4 !== 0)
        observations.push(
          postEnrichmentObs(id, {
            primary_language: i % 3 === 0 ? 'fr' : 'en',
            topics: i % 2 === 0 ? ['kitesurfing_tricks'] : ['lagoon_spots'],
          }),
        );
    }
    // One post with a slip in its caption: "lagon" is a word of the corpus, rare beside "lagoon".
    observations.push(
      postObs('zoe-passport', {
        platform_id: 'zoe-post-lagon',
        posted_at: iso(now - 3 * HOUR),
        observed_at: iso(now - 2 * HOUR),
        caption: 'Sunset swim at the lagon',
      }),
    );
    const written = await stack.ingest(observations);
    expect(written.statusCode).toBe(200);
    expect(written.body.rejected).toEqual([]);
  });

  it('explores a search: the chart draws the API’s buckets, the search saves as an alert, an account has its page', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const scriptErrors: string[] = [];
    page.on('pageerror', (error) => scriptErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') scriptErrors.push(message.text());
    });
    try {
      await signUp(page, `explore-${stack.config.REDIS_PREFIX}@example.com`);
      const key = await createKey(page, 'explore key');
      const endpoint = await fetch(`${api.url}/v1/social/webhook-endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/hooks' }),
      });
      expect(endpoint.status).toBe(201);

      await page.getByRole('link', { name: 'Explore' }).click();
      await page.waitForURL(`${api.url}/dashboard/explore`);
      await page.getByLabel('Query', { exact: true }).fill('kite lagoon');
      await page.getByLabel('From').fill(day(now - 14 * 24 * HOUR));
      await page.getByLabel('To', { exact: true }).fill(day(now));
      await page.getByLabel('Interval').selectOption('day');
      await page.getByLabel('Break down by').selectOption('language');
      await page.getByRole('button', { name: 'Explore' }).click();
      await page.waitForURL(/\/dashboard\/explore\?q=kite/);

      // The API's answer to the same question, with the holder's key.
      const response = await fetch(`${api.url}/v1/social/posts/counts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          post: {
            query: 'kite lagoon',
            filters: {
              posted_at: { gte: `${day(now - 14 * 24 * HOUR)}T00:00:00Z`, lt: `${day(now + 24 * HOUR)}T00:00:00Z` },
            },
          },
          interval: 'day',
          breakdown: { by: 'language' },
        }),
      });
      expect(response.status).toBe(200);
      const answer = (await response.json()) as {
        total: number;
        buckets: Array<{
          start: string;
          count: number;
          breakdown: Array<{ value: string; count: number }>;
          other: number;
        }>;
      };
      expect(answer.total).toBe(14);
      const bars = page.locator('svg.trend g.bucket');
      const drawn = await bars.evaluateAll((groups) =>
        groups.map((g) => ({
          start: g.getAttribute('data-start'),
          count: Number(g.getAttribute('data-count')),
          parts: [...g.querySelectorAll('rect')].map((r) => [
            r.getAttribute('data-value'),
            Number(r.getAttribute('data-count')),
          ]),
          height: [...g.querySelectorAll('rect')].reduce((a, r) => a + Number(r.getAttribute('height')), 0),
        })),
      );
      expect(drawn.map((b) => [b.start, b.count])).toEqual(answer.buckets.map((b) => [b.start, b.count]));
      expect(drawn.map((b) => b.parts)).toEqual(
        answer.buckets.map((b) => [...b.breakdown.map((v) => [v.value, v.count]), ['other', b.other]]),
      );
      // Bar heights follow the counts.
      const tallest = Math.max(...drawn.map((b) => b.height));
      const most = Math.max(...answer.buckets.map((b) => b.count));
      for (const [i, b] of drawn.entries()) expect(b.height / tallest).toBeCloseTo(answer.buckets[i]!.count / most, 2);
      await expect(page.locator('svg.trend title').first().textContent()).resolves.toBe(
        'Matching posts per day, by language',
      );
      // The posts with their evidence: the query's words marked in the caption.
      await expect(page.locator('ol.posts li').count()).resolves.toBe(14);
      await expect(page.locator('ol.posts mark').first().textContent()).resolves.toMatch(/kite|lagoon/i);
      await screenshot(page, 'dashboard-explore.png');

      await page.getByLabel('Name').fill('lagoon kites');
      await page.getByRole('button', { name: 'Save as alert' }).click();
      await page.waitForURL(/\/dashboard\/alerts\?notice=/);
      await expect(page.locator('.notice').textContent()).resolves.toContain('lagoon kites');
      await expect(page.locator('table.searches tbody tr td').first().textContent()).resolves.toBe('lagoon kites');

      // The same search saved with a volume rule and no event per post.
      await page.goBack();
      await page.getByLabel('Name').fill('lagoon volume');
      await page.getByLabel('Count posts per').selectOption('day');
      await page.getByLabel('Alert above').fill('40');
      await page.getByLabel('also push each new matching post').uncheck();
      await page.getByRole('button', { name: 'Save as alert' }).click();
      await page.waitForURL(/\/dashboard\/alerts\?notice=/);
      await expect(
        page.locator('tr', { hasText: 'lagoon volume' }).locator('.volume').textContent(),
      ).resolves.toContain('above 40');
      const saved = (await (
        await fetch(`${api.url}/v1/social/saved-searches`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as { data: Array<{ name: string; events: string[]; volume: unknown }> };
      const volume = saved.data.find((s) => s.name === 'lagoon volume')!;
      expect(volume.events).toEqual(['volume']);
      expect(volume.volume).toEqual({ interval: 'day', time_zone: expect.any(String), above: 40 });
      expect(saved.data.find((s) => s.name === 'lagoon kites')!.volume).toBeNull();

      await page.goBack();
      await page.locator('ol.posts li a').first().click();
      await page.waitForURL(`${api.url}/dashboard/accounts/@br.kiter`);
      await expect(page.locator('h1').textContent()).resolves.toContain('@br.kiter');
      const history = await fetch(`${api.url}/v1/social/accounts/@br.kiter/history?interval=day`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const points = ((await history.json()) as { points: Array<{ followers_count?: number }> }).points;
      const followers = await page
        .locator('svg.lines[aria-labelledby^="followers"] circle')
        .evaluateAll((dots) => dots.map((d) => Number(d.getAttribute('data-value'))));
      expect(followers).toEqual(points.map((p) => p.followers_count));
      expect(followers).toEqual([1000, 1550, 2100]);
      await expect(page.locator('svg.lines[aria-labelledby^="views"] g.series').count()).resolves.toBe(5);
      await screenshot(page, 'dashboard-account.png');
      expect(scriptErrors, scriptErrors.join('\n')).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('names in Explore: pickers list the dictionaries, the typeahead shows the API’s suggestions, did you mean', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const scriptErrors: string[] = [];
    page.on('pageerror', (error) => scriptErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') scriptErrors.push(message.text());
    });
    // The script's requests: at most one in flight at any time.
    let inFlight = 0;
    let mostInFlight = 0;
    let asked = 0;
    const isSuggest = (url: string) => new URL(url).pathname === '/dashboard/suggest';
    page.on('request', (request) => {
      if (!isSuggest(request.url())) return;
      asked++;
      mostInFlight = Math.max(mostInFlight, ++inFlight);
    });
    const settled = (request: { url(): string }) => {
      if (isSuggest(request.url())) inFlight--;
    };
    page.on('requestfinished', settled);
    page.on('requestfailed', settled);
    try {
      await signUp(page, `names-${stack.config.REDIS_PREFIX}@example.com`);
      const key = await createKey(page, 'names key');
      const get = async (path: string) => {
        const response = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
        expect([path, response.status]).toEqual([path, 200]);
        return (await response.json()) as any;
      };
      await page.goto(`${api.url}/dashboard/explore`);

      // Each picker lists its dictionary: the labels shown with their counts, the IDs as values.
      for (const [name, label] of [
        ['niches', 'Author niches (accounts)'],
        ['topics', 'Topics (posts)'],
        ['languages', 'Languages (posts)'],
        ['countries', 'Author countries (accounts)'],
      ] as const) {
        const dictionary = await get(`/v1/social/taxonomies/${name}`);
        expect(dictionary.data.length, name).toBeGreaterThan(0);
        const options = await page
          .getByLabel(label, { exact: true })
          .locator('option')
          .evaluateAll((all) => all.map((o) => [o.getAttribute('value'), o.textContent]));
        expect(options).toEqual(
          dictionary.data.map((e: { id: string; label: string; count: number }) => [
            e.id,
            `${e.label} · ${e.count.toLocaleString('en-US')}`,
          ]),
        );
      }
      await expect(
        page.getByLabel('Topics (posts)', { exact: true }).locator('option').allTextContents(),
      ).resolves.toContain('Kitesurfing tricks · 3');

      // Typing a prefix shows what the suggest API answers for it, as an ARIA combobox.
      const query = page.getByRole('combobox', { name: 'Query' });
      await query.pressSequentially('ki', { delay: 40 });
      const listbox = page.getByRole('listbox', { name: 'Suggestions for Query' });
      await listbox.waitFor();
      await expect(query.getAttribute('aria-expanded')).resolves.toBe('true');
      const expected = await get('/v1/social/suggest?q=ki&kinds=accounts,hashtags,mentions,topics,niches&limit=3');
      const shown = () =>
        listbox.getByRole('option').evaluateAll((all) =>
          all.map((o) => ({
            kind: o.getAttribute('data-kind'),
            value: o.getAttribute('data-value'),
            label: o.querySelector('.label')?.textContent,
            count: Number(o.getAttribute('data-count')),
          })),
        );
      await expect.poll(shown).toEqual(expected.data);
      expect(expected.data.map((s: { kind: string; value: string }) => `${s.kind} ${s.value}`)).toEqual([
        // "br.kiter": a handle matches by its later parts too.
        'account @br.kiter',
        'hashtag #kite',
        'topic kitesurfing_tricks',
        'niche kitesurfing',
      ]);
      await screenshot(page, 'dashboard-explore-typeahead.png');

      // A niche is picked in its picker, and the typed word goes.
      await listbox.getByRole('option', { name: 'Kitesurfing niche 1 account' }).click();
      await expect(page.getByLabel('Author niches (accounts)', { exact: true }).inputValue()).resolves.toBe(
        'kitesurfing',
      );
      await expect(query.inputValue()).resolves.toBe('');
      await expect(listbox.isVisible()).resolves.toBe(false);

      // From the keyboard: a hashtag takes the typed word's place in the query.
      await query.pressSequentially('lagoon #ki', { delay: 40 });
      const hashtags = await get('/v1/social/suggest?q=%23ki&kinds=accounts,hashtags,mentions,topics,niches&limit=3');
      expect(hashtags.data.map((h: { value: string }) => h.value)).toEqual(['#kite']);
      await expect.poll(shown).toEqual(hashtags.data);
      await query.press('ArrowDown');
      const active = await query.getAttribute('aria-activedescendant');
      await expect(page.locator(`#${active}`).getAttribute('aria-selected')).resolves.toBe('true');
      await query.press('Enter');
      await expect(query.inputValue()).resolves.toBe('lagoon #kite ');
      await page.getByRole('button', { name: 'Explore' }).click();
      await page.waitForURL(/\/dashboard\/explore\?q=lagoon\+%23kite/);
      expect(new URL(page.url()).searchParams.getAll('niches')).toEqual(['kitesurfing']);
      await expect(page.locator('ol.posts li').count()).resolves.toBe(14);

      // Words no post carries are corrected in the search itself, and the page says what it searched.
      await page.goto(`${api.url}/dashboard/explore?q=kyte+sesion`);
      await expect(page.locator('.corrected-query strong').textContent()).resolves.toBe('kite session');
      await expect(page.locator('ol.posts li').count()).resolves.toBe(14);
      // A rare word some post carries, found in fewer than 3 posts, is offered the commoner one.
      const misspelt = await fetch(`${api.url}/v1/social/posts/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ post: { query: 'lagon' } }),
      });
      const answer = (await misspelt.json()) as { data: unknown[]; suggested_query?: string };
      expect(answer.data).toHaveLength(1);
      expect(answer.suggested_query).toBe('lagoon');
      await page.goto(`${api.url}/dashboard/explore?q=lagon`);
      await expect(page.locator('ol.posts li').count()).resolves.toBe(1);
      const link = page.locator('.did-you-mean a');
      await expect(link.textContent()).resolves.toBe('lagoon');
      await screenshot(page, 'dashboard-explore-did-you-mean.png');
      await link.click();
      await page.waitForURL(/\/dashboard\/explore\?q=lagoon(&|$)/);
      await expect(page.locator('ol.posts li').count()).resolves.toBe(14);
      await expect(page.locator('.did-you-mean').count()).resolves.toBe(0);

      // "Go to account": accents and case folded as the API folds them; choosing opens its page.
      const goto = page.getByRole('combobox', { name: 'Go to account' });
      await goto.pressSequentially('ZOE', { delay: 40 });
      const accounts = page.getByRole('listbox', { name: 'Suggestions for Go to account' });
      const zoe = await get('/v1/social/suggest?q=ZOE&kinds=accounts&limit=8');
      expect(zoe.data).toEqual([{ kind: 'account', value: '@zoe_passport', label: 'Zoë Martin', count: 52_000 }]);
      await expect
        .poll(() => accounts.getByRole('option').allTextContents())
        .toEqual(['Zoë Martin @zoe_passport account 52,000 followers']);
      await accounts.getByRole('option').first().click();
      await page.waitForURL(`${api.url}/dashboard/accounts/@zoe_passport`);
      await expect(page.locator('h1').textContent()).resolves.toContain('@zoe_passport');

      // The query box's accounts lead to their page too.
      await page.goto(`${api.url}/dashboard/explore`);
      await page.getByRole('combobox', { name: 'Query' }).pressSequentially('br', { delay: 40 });
      await page.getByRole('option', { name: /@br\.kiter/ }).click();
      await page.waitForURL(`${api.url}/dashboard/accounts/@br.kiter`);

      expect(asked).toBeGreaterThan(0);
      expect(mostInFlight).toBe(1);
      expect(scriptErrors, scriptErrors.join('\n')).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('Explore without JavaScript: the pickers, "go to account" and "did you mean" are plain links and forms', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await signUp(page, `names-no-script-${stack.config.REDIS_PREFIX}@example.com`);
      await page.goto(`${api.url}/dashboard/explore`);
      // A plain input: no combobox without the script.
      await expect(page.getByRole('combobox', { name: 'Query' }).count()).resolves.toBe(0);
      await page.getByLabel('Query', { exact: true }).fill('lagon');
      await page.getByLabel('Topics (posts)', { exact: true }).selectOption('kitesurfing_tricks');
      await page.getByRole('button', { name: 'Explore' }).click();
      await page.waitForURL(/topics=kitesurfing_tricks/);
      await page.locator('.did-you-mean a').click();
      await page.waitForURL(/q=lagoon(&|$)/);
      // The topic stays picked: 3 posts carry it.
      await expect(page.locator('ol.posts li').count()).resolves.toBe(3);
      await page.getByLabel('Go to account').fill('@br.kiter');
      await page.getByRole('button', { name: 'Open' }).click();
      await page.waitForURL(`${api.url}/dashboard/accounts/@br.kiter`);
    } finally {
      await context.close();
    }
  });
});
