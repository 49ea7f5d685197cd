import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHolders } from '../../src/start/core.ts';
import type { HolderService } from '../../src/services/keys/holder-service.ts';
import { DashboardClient } from '../helpers/dashboard-client.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const SEARCHES = 2;
const READS = 3;

let stack: Stack;
let holders: HolderService;
let run = 0;

beforeAll(async () => {
  stack = await startStack(
    'dashbudget',
    {
      RATE_LIMIT_SEARCH_PER_MINUTE: String(SEARCHES),
      RATE_LIMIT_READ_PER_MINUTE: String(READS),
      // The test client speaks as the TLS-terminating proxy (the session cookie is Secure).
      TRUSTED_PROXIES: '127.0.0.1',
    },
    { worker: false },
  );
  holders = openHolders(stack.config, stack.runtime.connections);
});

afterAll(async () => {
  await stack.close();
});

/** A new holder signed in through the forms. */
async function signedIn(who: string): Promise<DashboardClient> {
  const email = `${who}-${++run}-${stack.config.REDIS_PREFIX}@example.com`;
  const { code } = await holders.invite({ email, days: 1 });
  const client = new DashboardClient(stack.app);
  await client.get(`/dashboard/sign-up?invitation=${code}`);
  const page = await client.post('/dashboard/sign-up', { email, password: 'correct horse battery', invitation: code });
  expect(page.status).toBe(303);
  return client;
}

describe('dashboard: each holder spends a budget of their own', () => {
  it('refuses Explore searches past the search budget with a 429 page, and leaves other holders alone', async () => {
    const busy = await signedIn('busy');
    const explore = (client: DashboardClient) => client.get('/dashboard/explore?q=kite');
    for (let i = 0; i < SEARCHES; i++) expect((await explore(busy)).status).toBe(200);
    const refused = await explore(busy);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.body).toContain(`this account has used its ${SEARCHES} searches per minute`);
    // An account page searches too: the same budget, refused at once.
    expect((await busy.get('/dashboard/accounts/@nobody-here')).status).toBe(429);

    const other = await signedIn('other');
    expect((await explore(other)).status).toBe(200);
  });

  it('refuses suggestions past the read budget with a problem, counted apart from the searches', async () => {
    const typing = await signedIn('typing');
    const suggest = () => typing.get('/dashboard/suggest?q=ki', { 'sec-fetch-site': 'same-origin' });
    for (let i = 0; i < READS; i++) expect((await suggest()).status).toBe(200);
    const refused = await suggest();
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(refused.body)).toMatchObject({
      status: 429,
      detail: expect.stringContaining(`this account has used its ${READS} reads per minute`),
    });
    // The searches' budget is untouched.
    expect((await typing.get('/dashboard/explore?q=kite')).status).toBe(200);
  });

  it('spends nobody’s budget on a visitor who is not signed in', async () => {
    const anonymous = new DashboardClient(stack.app);
    for (let i = 0; i < SEARCHES + 2; i++)
      expect((await anonymous.get('/dashboard/explore?q=kite')).location).toBe('/dashboard/sign-in');
    expect((await anonymous.get('/dashboard/suggest?q=ki')).status).toBe(401);
  });
});
