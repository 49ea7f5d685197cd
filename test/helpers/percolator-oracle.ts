import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, type estypes } from '@elastic/elasticsearch';
import { expect } from 'vitest';
import { compileQuery } from '../../src/percolator/compile.ts';
import { fieldTable, MemoryDoc, type FieldTable, type MappingProperty } from '../../src/percolator/document.ts';
import { percolate, querySet } from '../../src/percolator/percolate.ts';

/**
 * The engine as the percolator's oracle (as Kibana's kbn-es-query checks its in-memory evaluation):
 * an index of its own with the service's analysis settings (index-templates/shared-settings) and a
 * field of every kind the percolator reads, a corpus of documents with the edge cases of each kind
 * (missing, null, empty and repeated values, case, Unicode, bounds), and for each query the ids
 * the engine's `_search` finds against those the percolator finds, alone (a plain document) and
 * in a set (documents holding only the words the query reads, looked up by its triggers).
 */

const SETTINGS = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../index-templates/shared-settings.component.json'), 'utf8'),
) as { template: { settings: { analysis: estypes.IndicesIndexSettingsAnalysis } } };

/** The oracle index's fields: one of each kind the percolator knows, named by what they hold. */
export const MAPPING: Record<string, MappingProperty> = {
  caption: { type: 'text', analyzer: 'text_standard' },
  stemmed: { type: 'text', analyzer: 'text_client_stemmed' },
  hashtags: { type: 'keyword', normalizer: 'lowercase_keyword' },
  format: { type: 'keyword' },
  servable: { type: 'boolean' },
  views: { type: 'long' },
  rate: { type: 'double' },
  posted_at: { type: 'date' },
  author: {
    properties: {
      handle: { type: 'keyword', normalizer: 'lowercase_keyword' },
      followers_count: { type: 'long' },
      is_verified: { type: 'boolean' },
    },
  },
};

/** The oracle's documents: the edge cases of every kind (the id is the key). */
export const DOCS: Record<string, Record<string, unknown>> = {
  d1: {
    caption: ['Sourdough starter, day 3: bubbles!', 'Baking bread at home'],
    stemmed: 'sourdough starter day 3 bubbl',
    hashtags: ['Baking', 'bread'],
    format: 'reel',
    servable: true,
    views: 1200,
    rate: 0.05,
    posted_at: '2026-11-20T10:00:00.000Z',
    author: { handle: 'Ana.Bakes', followers_count: 25_000, is_verified: false },
  },
  d2: {
    caption: 'Espresso at dawn ☕ #coffee',
    stemmed: 'espresso dawn coffe',
    hashtags: ['coffee'],
    format: 'image',
    servable: true,
    views: 999,
    rate: 0.1,
    posted_at: '2026-11-20T09:59:59.999Z',
    author: { handle: 'barista_bo', followers_count: 10_000, is_verified: true },
  },
  d3: {
    caption: "Don't skip the U.S.A. trip: 3.5 days, 1,000 photos, e.g. Yosemite",
    stemmed: 'skip usa trip 3.5 day 1,000 photo eg yosemit',
    hashtags: [],
    format: 'carousel',
    servable: false,
    views: 0,
    posted_at: '2025-01-01T00:00:00.000Z',
    author: { handle: 'TRAVEL.tom', followers_count: 9_999 },
  },
  d4: {
    caption: '私のスキンケアルーティン 自炊 ΣΟΦΟΣ İstanbul Straße naïve 🔥🔥',
    hashtags: ['スキンケア', 'Skincare', 'SKINCARE'],
    format: 'reel',
    servable: true,
    views: 50_000,
    rate: 0.05,
    posted_at: '2026-12-31T23:59:59.000Z',
    author: { handle: 'mei_skin', followers_count: 1_000_000, is_verified: true },
  },
  d5: { caption: null, hashtags: null, views: null, author: null },
  d6: {
    caption: ['', 'baking'],
    stemmed: ['bake', 'bread'],
    hashtags: ['baking', 'Baking'],
    format: ['reel', 'image'],
    servable: [true, false],
    views: [10, 20_000],
    posted_at: ['2026-11-19T00:00:00.000Z', '2026-11-21T00:00:00.000Z'],
    author: { handle: ['ana.bakes', 'other'], followers_count: [5, 50_000] },
  },
  d7: {
    caption: 'Weeknight pasta with garlic and bread crumbs; bread again!',
    stemmed: 'weeknight pasta garlic bread crumb bread',
    hashtags: ['pasta'],
    format: 'reel',
    servable: true,
    views: 1000,
    rate: 0,
    posted_at: '2026-11-20T10:00:00.000Z',
    author: { handle: 'chef.carla', followers_count: 10_001, is_verified: false },
  },
  d8: {},
};

/** A query the oracle checks, and at least how many documents the engine must find (no vacuous cases). */
export interface OracleCase {
  query: estypes.QueryDslQueryContainer;
  /** The engine must find at least this many documents (default 0); `none`: it must find none. */
  atLeast?: number | 'none';
}

/** An index with {@link MAPPING} and {@link DOCS}; `check` compares the engine's answers with the percolator's. */
export interface Oracle {
  fields: FieldTable;
  check(cases: readonly OracleCase[]): Promise<void>;
  close(): Promise<void>;
}

export async function openOracle(name: string): Promise<Oracle> {
  const es = new Client({ node: (process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200').split(',')[0]! });
  const index = `test-percolator-${name}-${randomUUID().slice(0, 8)}`;
  await es.indices.create({
    index,
    settings: { number_of_shards: 1, number_of_replicas: 0, analysis: SETTINGS.template.settings.analysis },
    mappings: { dynamic: 'strict', properties: MAPPING as Record<string, estypes.MappingProperty> },
  });
  await es.bulk({
    refresh: true,
    operations: Object.entries(DOCS).flatMap(([id, doc]) => [{ index: { _index: index, _id: id } }, doc]),
  });
  // The field table as the service reads it: from the live index's definition.
  const definition = Object.values(await es.indices.get({ index }))[0]!;
  const fields = fieldTable(
    definition.mappings!.properties as Record<string, MappingProperty>,
    definition.settings?.index?.analysis,
  );

  return {
    fields,
    async check(cases) {
      for (const { query, atLeast = 0 } of cases) {
        const label = JSON.stringify(query);
        const answer = await es.search({ index, query, size: 100, _source: false });
        const engine = answer.hits.hits.map((h) => h._id!).sort();
        if (atLeast === 'none') expect(engine, label).toEqual([]);
        else
          expect(engine.length, `${label}: the engine found too few to tell anything`).toBeGreaterThanOrEqual(atLeast);

        const compiled = compileQuery(query, fields);
        const alone = Object.entries(DOCS)
          .filter(([, source]) => compiled.matches(new MemoryDoc(source, fields)))
          .map(([id]) => id)
          .sort();
        expect(alone, `${label}: one document at a time`).toEqual(engine);

        const found = new Map<string, Set<string>>();
        const candidates = Object.entries(DOCS).map(([id, source]) => ({ id, source, vectors: [] }));
        await percolate(
          candidates,
          querySet([{ id: 'q', matched: compiled, filtered: null, vector: null }]),
          fields,
          found,
        );
        expect([...(found.get('q') ?? [])].sort(), `${label}: in a set, by its triggers`).toEqual(engine);
      }
    },
    async close() {
      await es.indices.delete({ index }, { ignore: [404] });
      await es.close();
    },
  };
}
