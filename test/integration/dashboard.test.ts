import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHolders } from '../../src/start/core.ts';
import { createHolderService } from '../../src/services/keys/holder-service.ts';
import { createHolderStore } from '../../src/services/keys/holder-store.ts';
import { createSignInAttempts } from '../../src/services/keys/sign-in-attempts.ts';
import type { HolderService } from '../../src/services/keys/holder-service.ts';
import { DashboardClient, type Page } from '../helpers/dashboard-client.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
let holders: HolderService;
let run = 0;

beforeAll(async () => {
  stack = await startStack(
    'dashboard',
    { DASHBOARD_SIGNUP: 'invite', SIGNIN_MAX_FAILURES_PER_ACCOUNT: '3', TRUSTED_PROXIES: '127.0.0.1' },
    { worker: false },
  );
  holders = openHolders(stack.config, stack.runtime.connections);
});

afterAll(async () => {
  await stack.close();
});

const email = (who: string) => `${who}-${++run}-${stack.config.REDIS_PREFIX}@example.com`;
const PASSWORD = 'correct horse battery';

/** Signs a new holder up through the form, with an invitation made for them. */
async function signUp(who: string): Promise<{ client: DashboardClient; email: string }> {
  const address = email(who);
  const { code } = await holders.invite({ email: address, days: 1 });
  const client = new DashboardClient(stack.app);
  await client.get(`/dashboard/sign-up?invitation=${code}`);
  const page = await client.post('/dashboard/sign-up', { email: address, password: PASSWORD, invitation: code });
  expect(page.status).toBe(303);
  expect(page.location).toBe('/dashboard/keys');
  return { client, email: address };
}

async function createKey(
  client: DashboardClient,
  name: string,
  scopes = ['search'],
): Promise<{ id: string; key: string; page: Page }> {
  await client.get('/dashboard/keys');
  const page = await client.post('/dashboard/keys', { name, scopes });
  expect(page.status).toBe(201);
  const key = /id="new-key">([^<]+)</.exec(page.body)?.[1];
  expect(key).toMatch(/^ssk_[a-z2-7]{16}_[A-Za-z0-9_-]{43}$/);
  return { id: `key_${key!.slice(4, 20)}`, key: key!, page };
}

const api = (key: string, path: string) =>
  stack.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${key}` } });

describe('dashboard: sign-up, sessions, keys', () => {
  it('signs up with an invitation, sets a hardened session cookie, creates a key shown once, and lists it', async () => {
    const client = new DashboardClient(stack.app);
    const first = await client.get('/dashboard/sign-up');
    expect(first.status).toBe(200);
    const cookie = String([first.headers['set-cookie']].flat()[0]);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    // PUBLIC_BASE_URL is https in tests, so the cookie is Secure.
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/Path=\/dashboard/);

    const { client: holder } = await signUp('first');
    const created = await createKey(holder, 'production <crawler>', ['search', 'ingest']);
    // User text is escaped, never markup.
    expect(created.page.body).toContain('production &lt;crawler&gt;');
    expect(created.page.body).not.toContain('<crawler>');
    expect((await api(created.key, '/v1/social/posts/nope')).statusCode).toBe(404);

    const listed = await holder.get('/dashboard/keys');
    expect(listed.body).toContain(`data-key-id="${created.id}"`);
    expect(listed.body).toContain(`ssk_${created.id.slice(4)}_…`);
    // The secret is shown once: never again on the keys page.
    expect(listed.body).not.toContain(created.key);
  });

  it('refuses sign-up without a valid invitation with one message, and creates nothing', async () => {
    const client = new DashboardClient(stack.app);
    await client.get('/dashboard/sign-up');
    const address = email('uninvited');
    const bad = await client.post('/dashboard/sign-up', {
      email: address,
      password: PASSWORD,
      invitation: 'inv_not-a-real-code',
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('No account could be created with these details');
    const none = await client.post('/dashboard/sign-up', { email: address, password: PASSWORD, invitation: '' });
    expect(none.status).toBe(422);
    // The form keeps what was typed, except the password.
    expect(none.body).toContain(`value="${address}"`);
    expect(none.body).not.toContain(PASSWORD);
    const signIn = new DashboardClient(stack.app);
    await signIn.get('/dashboard/sign-in');
    expect((await signIn.post('/dashboard/sign-in', { email: address, password: PASSWORD })).status).toBe(401);
  });

  it('lets a holder created by `keys create --owner` claim the account only with an invitation bound to that email', async () => {
    const owner = email('cli');
    const fromCli = await stack.runtime.api.keys.create({ owner, name: 'made by the operator' });
    const someoneElse = await holders.invite({ days: 1 });
    const client = new DashboardClient(stack.app);
    await client.get('/dashboard/sign-up');
    expect(
      (
        await client.post('/dashboard/sign-up', {
          email: owner,
          password: 'an attacker password',
          invitation: someoneElse.code,
        })
      ).status,
    ).toBe(422);

    const bound = await holders.invite({ email: owner, days: 1 });
    const claimed = await client.post('/dashboard/sign-up', {
      email: owner,
      password: PASSWORD,
      invitation: bound.code,
    });
    expect(claimed.status).toBe(303);
    const keys = await client.get('/dashboard/keys');
    expect(keys.body).toContain(`data-key-id="${fromCli.id}"`);
    // An invitation is single-use.
    const again = new DashboardClient(stack.app);
    await again.get('/dashboard/sign-up');
    expect(
      (
        await again.post('/dashboard/sign-up', {
          email: email('reuse'),
          password: PASSWORD,
          invitation: someoneElse.code,
        })
      ).status,
    ).toBe(303);
    const third = new DashboardClient(stack.app);
    await third.get('/dashboard/sign-up');
    expect(
      (
        await third.post('/dashboard/sign-up', {
          email: email('reuse2'),
          password: PASSWORD,
          invitation: someoneElse.code,
        })
      ).status,
    ).toBe(422);
  });

  it('with open sign-up, lets a new email in without an invitation but still protects a holder created by the CLI', async () => {
    const redis = stack.runtime.redis;
    const prefix = `${stack.config.REDIS_PREFIX}:holders`;
    const open = createHolderService({
      store: createHolderStore({ redis, prefix }),
      attempts: createSignInAttempts({ redis, prefix, limits: { perAccount: 5, perAddress: 50 } }),
      signUpMode: 'open',
    });
    const fresh = email('open');
    await expect(open.signUp({ email: fresh, password: PASSWORD })).resolves.toEqual({ email: fresh });
    await expect(open.signUp({ email: fresh, password: 'another password' })).rejects.toThrow(
      /No account could be created/,
    );
    const operatorMade = email('operator-made');
    await open.ensure(operatorMade);
    await expect(open.signUp({ email: operatorMade, password: PASSWORD })).rejects.toThrow(
      /No account could be created/,
    );
    await expect(open.signIn({ email: operatorMade, password: PASSWORD, address: '192.0.2.1' })).rejects.toThrow(
      'Incorrect email or password.',
    );
    await expect(open.signIn({ email: fresh, password: PASSWORD, address: '192.0.2.1' })).resolves.toEqual({
      email: fresh,
    });
  });

  it('limits failed sign-ins per client address across emails, and leaves other addresses alone', async () => {
    const redis = stack.runtime.redis;
    const prefix = `${stack.config.REDIS_PREFIX}:holders-address`;
    const service = createHolderService({
      store: createHolderStore({ redis, prefix }),
      attempts: createSignInAttempts({ redis, prefix, limits: { perAccount: 100, perAddress: 3 } }),
      signUpMode: 'open',
    });
    const known = email('spray-target');
    await service.signUp({ email: known, password: PASSWORD });
    // A spray: one guess each at many emails from one address.
    for (let i = 0; i < 3; i++)
      await expect(
        service.signIn({ email: email(`spray-${i}`), password: 'guess', address: '198.51.100.7' }),
      ).rejects.toThrow('Incorrect email or password.');
    await expect(service.signIn({ email: known, password: PASSWORD, address: '198.51.100.7' })).rejects.toThrow(
      /Too many failed sign-in attempts/,
    );
    await expect(service.signIn({ email: known, password: PASSWORD, address: '198.51.100.8' })).resolves.toEqual({
      email: known,
    });
  });

  it('signs in and out; a session lives in Redis, so another API node honours it, and sign-out ends it everywhere', async () => {
    const { email: address } = await signUp('session');
    const client = new DashboardClient(stack.app);
    await client.get('/dashboard/sign-in');
    const before = client.sessionCookie;
    const signedIn = await client.post('/dashboard/sign-in', { email: address.toUpperCase(), password: PASSWORD });
    expect(signedIn.status).toBe(303);
    // A new session id on sign-in: no session fixation.
    expect(client.sessionCookie).toBeDefined();
    expect(client.sessionCookie).not.toBe(before);

    const { openTestRuntime } = await import('../helpers/runtime.ts');
    const other = openTestRuntime(stack.config);
    try {
      await other.ready();
      await other.api.app.ready();
      const elsewhere = new DashboardClient(other.api.app);
      elsewhere.sessionCookie = client.sessionCookie;
      expect((await elsewhere.get('/dashboard/keys')).status).toBe(200);

      await client.get('/dashboard/keys');
      const out = await client.post('/dashboard/sign-out', {});
      expect(out.status).toBe(303);
      expect(out.location).toBe('/dashboard/sign-in?signed_out');
      const after = await elsewhere.get('/dashboard/keys');
      expect(after.status).toBe(303);
      expect(after.location).toBe('/dashboard/sign-in');
    } finally {
      await other.close();
    }
  });

  it('answers unknown emails and wrong passwords alike, and limits failed attempts per account whether or not it exists', async () => {
    const { email: address } = await signUp('limits');
    const attempt = async (who: string, password: string) => {
      const client = new DashboardClient(stack.app);
      await client.get('/dashboard/sign-in');
      return client.post('/dashboard/sign-in', { email: who, password });
    };
    const wrong = await attempt(address, 'not the password');
    const unknown = await attempt(email('nobody'), 'not the password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const message = (page: Page) => /<p class="error" role="alert">([^<]+)</.exec(page.body)?.[1];
    expect(message(wrong)).toBe('Incorrect email or password.');
    expect(message(unknown)).toBe(message(wrong));

    const ghost = email('ghost');
    for (let i = 0; i < 3; i++) {
      if (i < 2) expect((await attempt(address, `wrong ${i}`)).status).toBe(401);
      expect((await attempt(ghost, `wrong ${i}`)).status).toBe(401);
    }
    // Three failures each (SIGNIN_MAX_FAILURES_PER_ACCOUNT): both blocked, the right password included.
    for (const who of [address, ghost]) {
      const blocked = await attempt(who, PASSWORD);
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
      expect(message(blocked)).toMatch(/^Too many failed sign-in attempts/);
    }
  });
});

describe('dashboard: CSRF, headers, isolation, usage', () => {
  it("refuses every form without its CSRF token, or with another session's, and changes nothing", async () => {
    const { client } = await signUp('csrf');
    const { client: other } = await signUp('csrf-other');
    await other.get('/dashboard/keys');
    const foreignToken = other.csrf;
    await client.get('/dashboard/keys');
    expect((await client.post('/dashboard/keys', { name: 'no token', scopes: 'search' }, null)).status).toBe(403);
    expect(
      (await client.post('/dashboard/keys', { name: 'foreign token', scopes: 'search' }, foreignToken)).status,
    ).toBe(403);
    const page = await client.get('/dashboard/keys');
    expect(page.body).not.toContain('no token');
    expect(page.body).not.toContain('foreign token');

    const anonymous = new DashboardClient(stack.app);
    expect(
      (await anonymous.post('/dashboard/sign-in', { email: 'a@example.com', password: PASSWORD }, null)).status,
    ).toBe(403);
  });

  it('sends a strict CSP (no inline script), forbids framing, and never caches pages; pages carry no inline script or style', async () => {
    const client = new DashboardClient(stack.app);
    for (const path of ['/dashboard/sign-in', '/dashboard/sign-up']) {
      const page = await client.get(path);
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['x-content-type-options']).toBe('nosniff');
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(page.body).not.toMatch(/\son[a-z]+=|\sstyle=/);
    }
    // The JSON API is untouched by the dashboard's headers.
    expect((await stack.get('/v1/social/posts/nope')).headers['content-security-policy']).toBeUndefined();
    const css = await stack.inject({ method: 'GET', url: `/dashboard/assets/dashboard.css` });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
  });

  it("shows, revokes and reports only the holder's own keys: holder A cannot touch holder B's", async () => {
    const a = await signUp('holder-a');
    const b = await signUp('holder-b');
    const keyA = await createKey(a.client, 'key of A');
    const keyB = await createKey(b.client, 'key of B');
    expect((await api(keyB.key, '/v1/social/posts/nope')).statusCode).toBe(404);

    const listA = await a.client.get('/dashboard/keys');
    expect(listA.body).toContain(keyA.id);
    expect(listA.body).not.toContain(keyB.id);
    const usageA = await a.client.get('/dashboard/usage');
    expect(usageA.body).not.toContain(keyB.id);

    // Revoking B's key as A: the same 404 as a key that does not exist, and B's key still works.
    const revoke = await a.client.post(`/dashboard/keys/${keyB.id}/revoke`, {});
    expect(revoke.status).toBe(404);
    expect((await a.client.post('/dashboard/keys/key_aaaaaaaaaaaaaaaa/revoke', {}, a.client.csrf)).status).toBe(404);
    expect((await api(keyB.key, '/v1/social/posts/nope')).statusCode).toBe(404);

    await a.client.get('/dashboard/keys');
    const own = await a.client.post(`/dashboard/keys/${keyA.id}/revoke`, {});
    expect(own.status).toBe(303);
    expect((await api(keyA.key, '/v1/social/posts/nope')).statusCode).toBe(401);
    const after = await a.client.get(own.location!);
    expect(after.body).toContain('key of A is revoked');
    expect(after.body).toMatch(new RegExp(`data-key-id="${keyA.id}".*status revoked`));
  });

  it('counts usage per key per day by operation, with 4xx and 429, on the usage page', async () => {
    const { client } = await signUp('usage');
    const { id, key } = await createKey(client, 'usage key');
    await stack.runtime.api.keys.setLimits(id, { search: 2 });
    const post = (body: unknown) =>
      stack.inject({
        method: 'POST',
        url: '/v1/social/posts/search',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    expect((await post({ post: { query: 'kite' } })).statusCode).toBe(200);
    expect((await post({ post: { query: 'kite' }, limit: 0 })).statusCode).toBe(422);
    expect((await post({ post: { query: 'kite' } })).statusCode).toBe(429);
    expect((await api(key, '/v1/social/posts/nope')).statusCode).toBe(404);
    expect((await api(key, '/v1/social/accounts/@nobody')).statusCode).toBe(404);

    const today = new Date().toISOString().slice(0, 10);
    // Counts reach Redis within a second (usage-recorder.ts).
    let row: string[] = [];
    for (let i = 0; i < 30 && row.length === 0; i++) {
      await sleep(200);
      const page = await client.get('/dashboard/usage?days=7');
      const section = page.body.split(`data-key-id="${id}"`)[1] ?? '';
      const match = new RegExp(`<tr><td>${today}</td>(.*?)</tr>`).exec(section);
      const cells = [...(match?.[1] ?? '').matchAll(/<td(?: class="zero")?>(\d+)<\/td>/g)].map((m) => m[1]!);
      if (cells[cells.length - 3] === '5') row = cells;
    }
    // search posts, search accounts, get post, get account, lookup posts, lookup accounts, suggest, taxonomies,
    // post facets, account facets, post counts, intake, all, 4xx, 429
    expect(row).toEqual(['3', '0', '1', '1', '0', '0', '0', '0', '0', '0', '0', '0', '5', '4', '1']);
    const page = await client.get('/dashboard/usage?days=7');
    // Every operation has its column, under its group, named in full in its heading's title.
    for (const name of ['Search posts', 'Get account', 'Typeahead (suggest)', 'Post counts', 'Intake (observations)'])
      expect(page.body).toContain(`title="${name}"`);
    expect(page.body).toContain('<th scope="colgroup" colspan="2">Lookup</th>');
    expect(page.body).toContain('<svg class="chart"');
    expect(page.body).toContain('search limit 2/min');
    const keysPage = await client.get('/dashboard/keys');
    expect(keysPage.body).toMatch(new RegExp(`data-key-id="${id}".*?<time datetime="${today}T`));
  });
});

describe('dashboard: alerts', () => {
  it('answers a form that does not fit with a form error, never a 500, and limits test events', async () => {
    const { client } = await signUp('alerts');
    await client.get('/dashboard/alerts');
    const long = await client.post('/dashboard/alerts/endpoints', {
      url: 'https://93.184.215.14/hooks',
      description: 'x'.repeat(501),
    });
    expect(long.status).toBe(422);
    expect(long.body).toContain('at most 500 characters');
    expect((await client.get('/dashboard/alerts')).body).toContain('No endpoints yet');

    const created = await client.post('/dashboard/alerts/endpoints', {
      url: 'https://93.184.215.14/hooks',
      description: 'y'.repeat(500),
    });
    expect(created.status).toBe(201);
    const id = /data-endpoint-id="(whe_[a-z0-9]+)"/.exec(created.body)![1]!;
    // No worker runs here: the test events only queue. The sixth in a minute is refused on the page.
    for (let i = 0; i < 5; i++) {
      await client.get('/dashboard/alerts');
      expect((await client.post(`/dashboard/alerts/endpoints/${id}/test`, {})).status).toBe(303);
    }
    await client.get('/dashboard/alerts');
    const refused = await client.post(`/dashboard/alerts/endpoints/${id}/test`, {});
    expect(refused.status).toBe(429);
    expect(refused.body).toContain('5 test events a minute');

    // Explore's "save as alert" and a path that does not fit: form errors too.
    await client.get('/dashboard/alerts');
    const save = await client.post('/dashboard/explore/save', {
      name: 'n'.repeat(201),
      post: JSON.stringify({ query: 'coffee' }),
      webhook_endpoint_id: id,
    });
    expect(save.status).toBe(422);
    expect(save.body).toContain('the name may have at most 200 characters');
    await client.get('/dashboard/alerts');
    expect((await client.post(`/dashboard/alerts/endpoints/${'x'.repeat(101)}/test`, {})).status).toBe(422);

    // A failing endpoint says why on the page (what the worker notes on it: webhook-delivery.ts).
    await stack.runtime.redis.hset(`${stack.config.REDIS_PREFIX}:alert-store:endpoint:${id}`, {
      failing_since: new Date().toISOString(),
      last_error: 'service error: the signing secret cannot be opened',
    });
    const page = await client.get('/dashboard/alerts');
    expect(page.body).toContain('Deliveries failing since');
    expect(page.body).toContain('the signing secret cannot be opened');
  });
});

describe('dashboard: the Explore page’s names', () => {
  const json = (page: Page) => JSON.parse(page.body) as Record<string, unknown>;

  it('answers suggestions to a signed-in session of this site only, within the API’s bounds', async () => {
    const anonymous = new DashboardClient(stack.app);
    const refused = await anonymous.get('/dashboard/suggest?q=ki');
    expect(refused.status).toBe(401);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.headers['www-authenticate']).toBeUndefined();
    expect(json(refused)).toMatchObject({ status: 401, detail: 'Sign in to the dashboard to get suggestions.' });

    const { client } = await signUp('suggest');
    const answered = await client.get('/dashboard/suggest?q=ki&kinds=hashtags,niches&limit=3', {
      'sec-fetch-site': 'same-origin',
    });
    expect(answered.status).toBe(200);
    expect(answered.headers['cache-control']).toBe('no-store');
    expect(json(answered)).toEqual({ request_id: expect.stringMatching(/^req_/), data: [] });
    // Another site's page cannot read it with the holder's session.
    const crossSite = await client.get('/dashboard/suggest?q=ki', { 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(401);

    // The API's bounds, as the API words them.
    for (const [query, member] of [
      [`q=${'k'.repeat(101)}`, '/q'],
      ['q=', '/q'],
      ['q=ki&limit=21', '/limit'],
      ['q=ki&kinds=posts', '/kinds'],
      ['q=ki&extra=1', '/extra'],
    ] as const) {
      const page = await client.get(`/dashboard/suggest?${query}`);
      expect([query, page.status]).toEqual([query, 422]);
      expect(json(page).detail).toMatch(new RegExp(`^query parameter ${member}: `));
    }
  });

  it('goes to an account by handle without a script, and needs a session', async () => {
    const anonymous = new DashboardClient(stack.app);
    expect((await anonymous.get('/dashboard/accounts?handle=kiter')).location).toBe('/dashboard/sign-in');
    const { client } = await signUp('goto');
    expect((await client.get('/dashboard/accounts?handle=%40Br.Kiter')).location).toBe('/dashboard/accounts/@Br.Kiter');
    expect((await client.get('/dashboard/accounts?handle=%20zoe_passport%20')).location).toBe(
      '/dashboard/accounts/@zoe_passport',
    );
    expect((await client.get('/dashboard/accounts?handle=')).location).toBe('/dashboard/explore');
    const unknown = await client.get('/dashboard/accounts/@nobody-here');
    expect(unknown.status).toBe(404);
  });
});
