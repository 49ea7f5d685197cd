import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation, type Observation } from '../../src/contract/observations.ts';
import { createRedisKeyedLocks } from '../../src/services/intake/keyed-locks.ts';
import { applyAccount } from '../../src/domain/merge.ts';
import { createObservationProcessor } from '../../src/services/intake/processor.ts';
import { emptyAccount } from '../../src/domain/records.ts';
import { accountObs, at, postObs } from '../helpers/fixtures.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('retry');
});
afterAll(async () => stack?.close());

const valid = (o: unknown): Observation => {
  const parsed = parseObservation(o);
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.value;
};

describe('a retried job', () => {
  it('redoes the author fan-out even though its account write already landed before the failure', async () => {
    await stack.ingest([
      accountObs({ platform_id: 'r-a', handle: 'before.rename' }),
      postObs('r-a', { platform_id: 'r-p1' }),
      postObs('r-a', { platform_id: 'r-p2' }),
    ]);
    const renamed = valid(accountObs({ platform_id: 'r-a', handle: 'after.rename', observed_at: at(60) }));
    // The first attempt wrote the account, then died before fanning out.
    const id = mintId('account', 'r-a');
    await stack.runtime.engine.intake.accounts.merge([id], (_id, current) =>
      applyAccount(current ?? emptyAccount(id, 'r-a'), renamed as never),
    );
    const process = createObservationProcessor({
      store: stack.runtime.engine.intake,
      locks: createRedisKeyedLocks({ redis: stack.runtime.redis, prefix: stack.config.REDIS_PREFIX }),
    });
    const handles = async () =>
      Promise.all(
        ['r-p1', 'r-p2'].map(
          async (p) => (await stack.get(`/v1/social/posts/${mintId('post', p)}`)).body.author.handle,
        ),
      );

    await process([renamed], { refresh: true }); // a first attempt's view: nothing changed
    expect(await handles()).toEqual(['before.rename', 'before.rename']);
    await process([renamed], { refresh: true, retry: true });
    expect(await handles()).toEqual(['after.rename', 'after.rename']);
  });
});

describe('intake body types', () => {
  it('does not mistake a JSON object with an "ndjson" key for an NDJSON body', async () => {
    for (const payload of ['{"ndjson": 5}', '{"ndjson": "{}"}']) {
      const response = await stack.inject({
        method: 'POST',
        url: '/internal/v1/social/observations',
        headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
        payload,
      });
      expect(response.statusCode, payload).toBe(400);
      expect(response.body.type).toMatch(/\/problems\/malformed-request$/);
    }
  });

  it('accepts an NDJSON body that starts with a byte-order mark', async () => {
    const response = await stack.inject({
      method: 'POST',
      url: '/internal/v1/social/observations?wait=true',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/x-ndjson' },
      payload: '\uFEFF' + JSON.stringify(accountObs({ platform_id: 'r-bom', handle: 'bom.user' })),
    });
    expect(response.body).toMatchObject({ accepted: 1, rejected: [] });
  });
});
