/**
 * Builds the indices of the scaling table (bench/scaling.md) from a loaded prefix, fast: the
 * records of `--from` are read, copied under new identities, projected by the service's own
 * projection (the current posts and accounts templates) and bulk-written into `--to`.
 *
 *   npx tsx bench/steady-state/scale-build.ts --from bench --to scale3m --copies 3
 *   npx tsx bench/steady-state/scale-build.ts --from bench --to scale100k --fraction 0.1 [--residue 2]
 *   npx tsx bench/steady-state/scale-build.ts --from bench --to scale1m --copies 3 --first-copy 1   (extend)
 *   ELASTICSEARCH_URL=http://127.0.0.1:9250 npx tsx bench/steady-state/scale-build.ts --from bench \
 *     --to cluster100k --fraction 0.1 --source-url http://127.0.0.1:9200   (onto another cluster)
 *
 * Why copies: loading 3M posts through the intake takes ~45 min and embedding their texts hours
 * on two cores; a copy keeps the seed's distributions (texts, counters, posts per account, vectors
 * with the model's distribution) while the index grows. Copy 0 is the source itself; copy c > 0
 * moves every platform ID by c (posts by c·10¹⁶, accounts by c·10¹²), mints the service IDs again,
 * gives shortcodes and handles a copy suffix, and perturbs every vector with Gaussian noise
 * (σ = 0.01 per dimension, renormalized: cosine ≈ 0.98 to the original, as
 * bench/search/backfill-vectors.ts does), so HNSW holds distinct vectors. `--fraction f` keeps the
 * accounts whose platform ID is ≡ 0 (`--residue r`: r) mod 1/f, and their posts: a smaller index of
 * the same shape.
 *
 * Every post with vectors also gets its vector document (`<to>-post-vectors`), projected by the
 * service's `projectPostVectors` from the copy, as the intake writes it. The metric history is not
 * copied (the table measures search and intake, not history reads). Writes with refresh off, then
 * restores the template's refresh interval and refreshes.
 */
import { Client } from '@elastic/elasticsearch';
import { randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import { mintId } from '../../src/contract/ids.ts';
import type { AccountRecord, PostRecord } from '../../src/domain/records.ts';
import { projectAccount, projectPost, storedPostRecord } from '../../src/engine/elasticsearch/documents/projection.ts';
import { projectPostVectors } from '../../src/engine/elasticsearch/documents/vector-projection.ts';
import { withStoredVectors } from '../../src/engine/elasticsearch/queries/post-vectors.ts';
import { loadConfig } from '../../src/internal/config.ts';
import { openServiceProcess } from '../../src/start/process.ts';
import { decodeVector, encodeVector } from '../../src/text/vector-codec.ts';
import { elasticsearchUrls } from '../lib/service-stack.ts';
import { cli } from '../lib/args.ts';
import { scanPages } from '../lib/scan.ts';

const args = cli({
  options: {
    from: { type: 'string', default: 'bench' },
    to: { type: 'string' },
    copies: { type: 'int', default: 1, min: 1 },
    'first-copy': { type: 'int', default: 0, min: 0 },
    fraction: { type: 'number', default: 1, min: 0 },
    // Which accounts a fraction keeps: those whose platform ID is ≡ residue mod 1/f. A day sample
    // (day.ts --sample-offset) applied to the source makes its accounts no-ops there; another
    // residue gives a smaller index whose accounts no sample has touched yet.
    residue: { type: 'int', default: 0, min: 0 },
    'in-flight': { type: 'int', default: 2, min: 1 },
    'source-url': { type: 'string' },
  },
});
if (!args.to) throw new Error('--to PREFIX');
const COPIES = args.copies;
const FIRST = args['first-copy'];
const KEEP_EVERY = BigInt(Math.round(1 / args.fraction));
const IN_FLIGHT = args['in-flight'];
const BATCH_BYTES = 5 * 1024 * 1024;

const config = loadConfig({
  SIGNING_SECRET: randomBytes(32).toString('hex'),
  ...process.env,
  INDEX_PREFIX: args.to,
  REDIS_PREFIX: args.to,
});
const service = openServiceProcess(config);
await service.engine.admin.apply();
const es = new Client({ node: elasticsearchUrls()[0]! });
/** Where `--from` is read: another cluster when given (a cluster built from the single node's seed). */
const source = args['source-url'] ? new Client({ node: args['source-url'] }) : es;
const pool = new Pool(elasticsearchUrls()[0]!, {
  connections: IN_FLIGHT,
  headersTimeout: 600_000,
  bodyTimeout: 600_000,
});

let state = 12345 + FIRST;
function gaussian(): number {
  const u = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) + 1) / (2 ** 31 + 1);
  return Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
}
function perturb(encoded: string): string {
  const v = decodeVector(encoded);
  let norm = 0;
  for (let i = 0; i < v.length; i++) {
    v[i] = v[i]! + 0.01 * gaussian();
    norm += v[i]! * v[i]!;
  }
  norm = Math.sqrt(norm);
  return encodeVector(v.map((x) => x / norm));
}

const RESIDUE = BigInt(args.residue);
if (RESIDUE >= KEEP_EVERY) throw new Error(`--residue ${args.residue}: less than 1/fraction (${KEEP_EVERY})`);
const kept = (accountPlatformId: string) => BigInt(accountPlatformId) % KEEP_EVERY === RESIDUE;
const shift = (platformId: string, by: bigint) => (BigInt(platformId) + by).toString();

/** The string replacements that move one record to copy `c`. */
function copyMap(record: PostRecord | AccountRecord, family: 'post' | 'account', c: number): Map<string, string> {
  const map = new Map<string, string>();
  const account = (platformId: string) => {
    const moved = shift(platformId, BigInt(c) * 10n ** 12n);
    map.set(platformId, moved);
    map.set(mintId('account', platformId), mintId('account', moved));
  };
  if (family === 'post') {
    const post = record as PostRecord;
    const moved = shift(post.platform_id, BigInt(c) * 10n ** 16n);
    map.set(post.platform_id, moved);
    map.set(post.id, mintId('post', moved));
    const raw = post.raw?.v;
    if (raw) {
      map.set(raw.shortcode, `${raw.shortcode}c${c}`);
      account(raw.author_platform_id);
      for (const id of raw.coauthor_platform_ids) account(id);
    }
    for (const snapshot of Object.values(post.accounts)) {
      if (snapshot.profile) map.set(`/${snapshot.profile.handle}"`, `/${snapshot.profile.handle}.c${c}"`);
      if (snapshot.profile) map.set(`"${snapshot.profile.handle}"`, `"${snapshot.profile.handle}.c${c}"`);
    }
  } else {
    const acc = record as AccountRecord;
    account(acc.platform_id);
    const handle = acc.profile?.v.handle;
    if (handle) {
      map.set(`/${handle}"`, `/${handle}.c${c}"`);
      map.set(`"${handle}"`, `"${handle}.c${c}"`);
    }
  }
  return map;
}

function copyRecord<R extends PostRecord | AccountRecord>(record: R, family: 'post' | 'account', c: number): R {
  if (c === 0) return record;
  const map = copyMap(record, family, c);
  const pattern = new RegExp([...map.keys()].map(escape).join('|'), 'g');
  const { embedding, ...rest } = record as R & { lookalike?: { vector: string } };
  const text = JSON.stringify(rest).replace(pattern, (m) => map.get(m)!);
  const out = JSON.parse(text) as R & { lookalike?: { vector: string } };
  if (embedding) out.embedding = { ...embedding, ...(embedding.vector && { vector: perturb(embedding.vector) }) };
  if (out.lookalike) out.lookalike = { ...out.lookalike, vector: perturb(out.lookalike.vector) };
  return out;
}

const escape = (k: string) => k.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** One document to write: the index family (`<to>-<family>-write`), its ID and its JSON. */
type Line = [family: 'posts' | 'post-vectors' | 'accounts', id: string, json: string];

function accountCopies(record: AccountRecord): Line[] {
  const out: Line[] = [];
  for (let c = FIRST; c < COPIES; c++) {
    const copy = copyRecord(record, 'account', c);
    out.push(['accounts', copy.id, JSON.stringify(projectAccount(copy))]);
  }
  return out;
}

/**
 * A post's copies from one projection: the projected document's text with the copy's
 * replacements, its record's vectors (head and passages) perturbed in place (the projection of a
 * copy differs from the original's only in IDs, handles, shortcodes and the vectors; projecting 3M
 * posts one by one would take most of an hour), and the copy's vector document projected from it.
 */
function postCopies(record: PostRecord): Line[] {
  // As a settled post is stored: its record without the vectors its vector document holds.
  const doc = { ...projectPost(record), record: storedPostRecord(record) };
  const out: Line[] = [];
  let text: string | null = null;
  for (let c = FIRST; c < COPIES; c++) {
    let copy = doc;
    let json: string;
    if (c === 0) json = JSON.stringify(doc);
    else {
      text ??= JSON.stringify(doc);
      const map = copyMap(record, 'post', c);
      const pattern = new RegExp([...map.keys()].map(escape).join('|'), 'g');
      json = text.replace(pattern, (m) => map.get(m)!);
      copy = JSON.parse(json) as typeof doc;
    }
    const id = copy.record.id;
    out.push(['posts', id, json]);
    // The vectors are not in the projected document (the post's stored record keeps none): perturbed apart.
    const embedding = record.embedding;
    const copied = copy.record;
    const vectors = projectPostVectors(
      copy,
      embedding?.vector && c > 0
        ? {
            ...copied,
            embedding: {
              ...embedding,
              vector: perturb(embedding.vector),
              ...(embedding.passages && { passages: embedding.passages.map(perturb) }),
            },
          }
        : { ...copied, ...(embedding && { embedding }) },
    );
    if (vectors?.complete) out.push(['post-vectors', id, JSON.stringify(vectors.doc)]);
  }
  return out;
}

async function send(body: string): Promise<number> {
  const response = await pool.request({
    method: 'POST',
    path: '/_bulk',
    headers: { 'content-type': 'application/x-ndjson' },
    body,
  });
  const answer = (await response.body.json()) as { errors: boolean; items: Array<Record<string, { error?: unknown }>> };
  if (response.statusCode !== 200 || answer.errors) {
    const first = answer.items?.map((i) => Object.values(i)[0]!).find((r) => r.error);
    throw new Error(`_bulk: ${response.statusCode} ${JSON.stringify(first?.error)}`);
  }
  return answer.items.length;
}

async function copyIndex(name: 'posts' | 'accounts'): Promise<number> {
  const family = name === 'posts' ? 'post' : 'account';
  // A post's vector document goes with it.
  const targets = name === 'posts' ? (['posts', 'post-vectors'] as const) : (['accounts'] as const);
  const concretes = await Promise.all(
    targets.map(async (t) => Object.keys(await es.indices.getAlias({ name: `${args.to}-${t}-write` }))[0]!),
  );
  const concrete = concretes.join(',');
  await es.indices.putSettings({ index: concrete, settings: { refresh_interval: '-1' } });
  const inFlight = new Set<Promise<number>>();
  let written = 0;
  let parts: string[] = [];
  let bytes = 0;
  const flush = async () => {
    if (parts.length === 0) return;
    const body = parts.join('');
    parts = [];
    bytes = 0;
    const p = send(body).then((n) => ((written += n), n));
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
  };
  const started = Date.now();
  let reported = started;
  try {
    const pages = scanPages<{ record: PostRecord | AccountRecord }>(
      source,
      `${args.from}-${name}`,
      { _source: ['record'] },
      { size: 1000, keepAlive: '10m' },
    );
    for await (const page of pages) {
      // A post's vectors are in its vector document (the record read back keeps none).
      const records =
        family === 'post'
          ? await withStoredVectors(
              source,
              `${args.from}-post-vectors`,
              page.map((hit) => hit._source!.record as PostRecord),
            )
          : page.map((hit) => hit._source!.record);
      for (const record of records) {
        const owner =
          family === 'post' ? (record as PostRecord).raw?.v.author_platform_id : (record as AccountRecord).platform_id;
        if (owner === undefined || !kept(owner)) continue;
        const lines = family === 'post' ? postCopies(record as PostRecord) : accountCopies(record as AccountRecord);
        for (const [into, id, json] of lines) {
          const line = `${JSON.stringify({ index: { _index: `${args.to}-${into}-write`, _id: id } })}\n${json}\n`;
          parts.push(line);
          bytes += line.length;
          if (bytes >= BATCH_BYTES) await flush();
        }
      }
      if (Date.now() - reported > 30_000) {
        reported = Date.now();
        process.stderr.write(`${name}: ${written} written (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
      }
    }
    await flush();
    await Promise.all(inFlight);
  } finally {
    await es.indices.putSettings({ index: concrete, settings: { refresh_interval: config.INDEX_REFRESH_INTERVAL } });
  }
  await es.indices.refresh({ index: concrete });
  process.stderr.write(
    `${name}: ${written} documents into ${concrete} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );
  return written;
}

await copyIndex('accounts');
await copyIndex('posts');
const counts = await Promise.all(
  ['posts', 'post-vectors', 'accounts'].map(async (n) => (await es.count({ index: `${args.to}-${n}` })).count),
);
process.stderr.write(`${args.to}: ${counts[0]} posts (${counts[1]} with vectors), ${counts[2]} accounts\n`);
await pool.close();
await es.close();
await service.close();
