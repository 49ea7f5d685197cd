/**
 * A post index built straight from the seed generator, for benches that read a large index and
 * need it faster than the intake loads one (facets, counts): records built in memory with the
 * intake's own domain merges, each post's author snapshot attached as fan-out would, projected
 * with the service's `projectPost` / `projectAccount` and bulk-indexed behind the prefix's aliases
 * (refresh off), then refreshed and force-merged to 4 segments. `copies` > 1 indexes each post
 * that many times under distinct ids: the generator's records held in memory (~1.5 GB per 100k
 * posts) bound the distinct posts on one machine, so 1M posts are 100k distinct ones × 10 (the
 * same term and value distributions, ten times the postings).
 */
import { Client } from '@elastic/elasticsearch';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation } from '../../src/contract/observations.ts';
import { linksOf } from '../../src/domain/links.ts';
import { applyAccount, applyAccountEnrichment, applyPost, applyPostEnrichment } from '../../src/domain/merge.ts';
import { emptyAccount, emptyPost, snapshotOf, type AccountRecord, type PostRecord } from '../../src/domain/records.ts';
import { projectAccount, projectPost } from '../../src/engine/elasticsearch/documents/projection.ts';
import type { Config } from '../../src/internal/config.ts';
import { generateObservations } from '../../src/seed/generator.ts';
import { openServiceProcess } from '../../src/start/process.ts';
import type { PositionalSpec } from './args.ts';

/**
 * The command line of a bench that builds its index with {@link loadGeneratedPosts} then measures:
 * `load <posts> [copies]` or `run [requests]`.
 */
export const GENERATED_POSTS_POSITIONALS = [
  { name: 'mode', type: 'string', choices: ['run', 'load'], default: 'run' },
  { name: 'count', type: 'int', min: 1, optional: true },
  { name: 'copies', type: 'int', min: 1, default: 1 },
] as const satisfies readonly PositionalSpec[];

/** Builds and indexes `posts` generated posts (seed 1, one account per 10 posts), each `copies` times. */
export async function loadGeneratedPosts(config: Config, posts: number, copies: number): Promise<void> {
  const es = new Client({ node: config.ELASTICSEARCH_URL });
  const postsAlias = `${config.INDEX_PREFIX}-posts`;
  const accountsAlias = `${config.INDEX_PREFIX}-accounts`;
  const bulk = async (lines: object[]) => {
    const response = await es.bulk({ operations: lines, refresh: false });
    if (response.errors)
      throw new Error(`bulk item failed: ${JSON.stringify(response.items.find((i) => Object.values(i)[0]?.error))}`);
  };
  const service = openServiceProcess(config);
  await service.engine.admin.apply();
  const accounts = new Map<string, AccountRecord>();
  const postRecords = new Map<string, PostRecord>();
  const started = performance.now();
  for (const raw of generateObservations({ posts, accounts: Math.max(1, Math.round(posts / 10)), seed: 1 })) {
    const parsed = parseObservation(raw);
    if (!parsed.ok) continue;
    const o = parsed.value;
    if (o.kind === 'account' || o.kind === 'account_enrichment') {
      const platformId = o.kind === 'account' ? o.platform_id : o.account_platform_id;
      const record = accounts.get(platformId) ?? emptyAccount(mintId('account', platformId), platformId);
      accounts.set(platformId, o.kind === 'account' ? applyAccount(record, o) : applyAccountEnrichment(record, o));
    } else {
      const platformId = o.kind === 'post' ? o.platform_id : o.post_platform_id;
      const record = postRecords.get(platformId) ?? emptyPost(mintId('post', platformId), platformId);
      postRecords.set(platformId, o.kind === 'post' ? applyPost(record, o) : applyPostEnrichment(record, o));
    }
  }
  const byId = new Map([...accounts.values()].map((a) => [a.id, a]));
  let lines: object[] = [];
  const flush = async (force = false) => {
    if (lines.length >= 4000 || (force && lines.length > 0)) {
      await bulk(lines);
      lines = [];
    }
  };
  for (const account of accounts.values()) {
    lines.push({ index: { _index: accountsAlias, _id: account.id } }, projectAccount(account));
    await flush();
  }
  for (const post of postRecords.values()) {
    const linked = { ...post };
    const links = linksOf(post);
    for (const id of [links.author, ...links.coauthors]) {
      const account = id ? byId.get(id) : undefined;
      if (account && id) linked.accounts = { ...linked.accounts, [id]: snapshotOf(account) };
    }
    const doc = projectPost(linked);
    for (let copy = 0; copy < copies; copy++) {
      const id = copy === 0 ? linked.id : `${linked.id}x${copy}`;
      lines.push(
        { index: { _index: postsAlias, _id: id } },
        copy === 0 ? doc : { ...doc, id, record: { ...linked, id } },
      );
      await flush();
    }
  }
  await flush(true);
  await es.indices.refresh({ index: [postsAlias, accountsAlias] });
  await es.indices.forcemerge({ index: postsAlias, max_num_segments: 4 });
  const count = (await es.count({ index: postsAlias })).count;
  console.log(
    `loaded ${count} posts (${postRecords.size} distinct × ${copies}), ${accounts.size} accounts in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  await service.close();
  await es.close();
}
