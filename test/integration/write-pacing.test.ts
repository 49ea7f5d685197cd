import { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSearchTimes } from '../../src/engine/elasticsearch/admin/search-times.ts';
import { createRecordStore } from '../../src/engine/elasticsearch/writes/record-store.ts';
import type { WritePacing } from '../../src/internal/write-pacing.ts';

/**
 * Searches first (WRITE_PACING, src/internal/write-pacing.ts) against the real engine: the signal
 * it reads, and a record store's writes waiting out the pause the pacing asks.
 */
const es = new Client({ node: (process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200').split(',')[0]! });
const name = `test-write-pacing-${process.pid}-${Date.now()}`;

beforeAll(async () => {
  await es.indices.create({
    index: `${name}-v1`,
    aliases: { [name]: { is_write_index: true } },
    settings: { number_of_shards: 1, number_of_replicas: 0 },
    mappings: { dynamic: false, properties: { id: { type: 'keyword' } } },
  });
});

afterAll(async () => {
  await es.indices.delete({ index: `${name}-v1` }, { ignore: [404] });
  await es.close();
});

describe('write pacing', () => {
  it("reads the engine's search totals, which grow with each search", async () => {
    const before = await readSearchTimes(es);
    for (let i = 0; i < 3; i++) await es.search({ index: name, query: { match_all: {} } });
    const after = await readSearchTimes(es);
    expect(after.queries - before.queries).toBeGreaterThanOrEqual(3);
    expect(after.millis).toBeGreaterThanOrEqual(before.millis);
  });

  it('a write waits out the pause the pacing asks after its bulk request, and the record is written', async () => {
    const asked: number[] = [];
    const pacing: WritePacing = {
      pauseAfter(ms) {
        asked.push(ms);
        return 400;
      },
    };
    const store = createRecordStore<{ id: string; n: number }>({
      client: es,
      index: name,
      project: (record) => ({ id: record.id, record }),
      pacing,
    });
    const started = performance.now();
    const outcome = await store.merge(['paced-1'], (id, current) => ({ id, n: (current?.n ?? 0) + 1 }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(400);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toBeGreaterThan(0);
    expect(outcome.get('paced-1')?.after).toEqual({ id: 'paced-1', n: 1 });
    expect((await store.get(['paced-1'])).get('paced-1')).toEqual({ id: 'paced-1', n: 1 });
  });

  it('without pacing, the same write does not wait', async () => {
    const store = createRecordStore<{ id: string; n: number }>({
      client: es,
      index: name,
      project: (record) => ({ id: record.id, record }),
    });
    const started = performance.now();
    await store.merge(['unpaced-1'], (id) => ({ id, n: 1 }));
    expect(performance.now() - started).toBeLessThan(400);
  });
});
