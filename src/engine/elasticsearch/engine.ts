import type { Client, estypes } from '@elastic/elasticsearch';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import type { AccountRecord, PostRecord } from '../../domain/records.ts';
import type { FacetEngine } from '../facets.ts';
import type { CountEngine } from '../counts.ts';
import type { LikenessEvidence, MatchHighlighter } from '../matches.ts';
import type { EngineHealth } from '../health.ts';
import type { IndexAdmin, IndexLayout } from '../index-admin.ts';
import type { AuthorPostFacts, IntakeStore } from '../intake-store.ts';
import type { RecordLookups } from '../lookups.ts';
import type { NameSuggester } from '../suggest.ts';
import type { SpellingCorrector } from '../spelling.ts';
import type { RecordReads, StoredFollowers } from '../reads.ts';
import type { SearchEngine } from '../search.ts';
import type { VisibilityEpoch } from '../visibility.ts';
import { COMPLETE_RESULTS, engineCall, refreshAll, translateEngineError } from './errors.ts';
import { decodeVector } from '../../text/vector-codec.ts';
import type { PostVector } from '../../domain/lookalike.ts';
import { createIndexAdmin } from './admin/index-admin.ts';
import { indexNames } from './names.ts';
import { createQualifyingAccounts } from './queries/account-query.ts';
import { createFacetEngine } from './reads/facet-search.ts';
import { createCountEngine } from './reads/count-search.ts';
import { createPostHighlighter } from './reads/post-highlights.ts';
import { createSnapshotPool, type SnapshotStats } from './reads/snapshot-pool.ts';
import { projectAccount } from './documents/projection.ts';
import { createRecordLookups } from './reads/record-lookups.ts';
import { createNameSuggester } from './reads/name-suggestions.ts';
import { createSpellingCorrector } from './reads/spelling.ts';
import { createRecordStore } from './writes/record-store.ts';
import { createSearchEngine } from './reads/search-engine.ts';
import { createLikenessEvidence } from './reads/likeness-evidence.ts';
import {
  createMetricHistory,
  metricHistoryNames,
  monthIndex,
  monthTargets,
  pointWrite,
} from './documents/metric-history.ts';
import type { MetricPoint } from '../../domain/history.ts';
import type { HistoryReads } from '../history.ts';
import type { AlertMatching } from '../alerts.ts';
import { createAlertMatching } from './writes/alert-matching.ts';
import { createWrittenProjections } from './documents/written-projections.ts';
import type { VectorFeedback } from './reads/vector-feedback.ts';

const PAGE = 2000;

/** Every engine role, implemented on one Elasticsearch client. */
export interface ElasticsearchEngine {
  readonly reads: RecordReads;
  readonly lookups: RecordLookups;
  readonly suggest: NameSuggester;
  readonly spelling: SpellingCorrector;
  readonly search: SearchEngine;
  readonly facets: FacetEngine;
  readonly counts: CountEngine;
  readonly highlights: MatchHighlighter;
  readonly likeness: LikenessEvidence;
  readonly intake: IntakeStore;
  readonly admin: IndexAdmin;
  readonly history: HistoryReads;
  readonly health: EngineHealth;
  readonly alerts: AlertMatching;
  /** Point-in-time snapshots opened and reused by first pages (metrics). */
  snapshotStats(): SnapshotStats;
}

/**
 * The Elasticsearch adapter: the only code that speaks Elasticsearch. Each service takes the one
 * role it needs; the visibility epoch is the adapter's, so intake publishes writes and search
 * honours them without either passing it through the other.
 */
export function createElasticsearchEngine(deps: {
  client: Client;
  indexPrefix: string;
  templatesDir: string;
  visibility: VisibilityEpoch;
  /** How long first pages may share a point in time (0: one per search). */
  snapshotMaxAgeMs?: number;
  /** The relevance floor of fused searches (config SEARCH_SIMILARITY_FLOOR; null or absent: none). */
  similarityFloor?: number | null;
  /** Vector feedback in hybrid searches (config SEARCH_VECTOR_FEEDBACK; absent: off). */
  vectorFeedback?: VectorFeedback;
  /** The index's statistics of hybrid queries' words (config SEARCH_QUERY_TERMS; query-terms.ts); absent: off. */
  queryTerms?: boolean;
  /** Shard and replica counts of the indices (INDEX_SHARDS, INDEX_REPLICAS); absent: the templates'. */
  layout?: Partial<IndexLayout>;
  /** The client's request timeout (ELASTICSEARCH_TIMEOUT_MS): writes give up waiting inside the engine well before it. */
  requestTimeoutMs?: number;
  /** METRIC_HISTORY: whether merges write metric points (absent: on). */
  metricHistory?: boolean;
  /** METRIC_HISTORY_RETENTION_DAYS. */
  historyRetentionDays?: number;
}): ElasticsearchEngine {
  const { client, visibility } = deps;
  const snapshots = createSnapshotPool({ client, maxAgeMs: deps.snapshotMaxAgeMs ?? 0 });
  const qualifying = createQualifyingAccounts(client);
  const posts = indexNames(deps.indexPrefix, 'posts');
  const accounts = indexNames(deps.indexPrefix, 'accounts');
  const history = createMetricHistory({ client, names: metricHistoryNames(deps.indexPrefix) });
  const historyOn = deps.metricHistory !== false;
  const writes = {
    ...(deps.requestTimeoutMs ? { waitMs: Math.max(1000, Math.floor(deps.requestTimeoutMs / 2)) } : {}),
    ...(historyOn
      ? {
          points: {
            write: (p: MetricPoint) => pointWrite(history.names, p),
            ensureInstalled: () => history.ensureInstalled(),
          },
        }
      : {}),
  };
  // Matching at the write reads the projections the writes made (written-projections.ts).
  const projections = createWrittenProjections();
  const postStore = createRecordStore<PostRecord>({
    client,
    index: posts.write,
    project: projections.project,
    ...writes,
  });
  const accountStore = createRecordStore<AccountRecord>({
    client,
    index: accounts.write,
    project: projectAccount,
    ...writes,
  });
  // The intake's near-real-time lookups search posts (the history refreshes the months it reads
  // itself); accounts are read by real-time get. Refreshing accounts there too would only write
  // small segments for merges to clean up.
  const refreshLookups = () => refreshAll(client, posts.read);

  async function firstId(
    index: string,
    query: estypes.QueryDslQueryContainer,
    sort: estypes.Sort,
  ): Promise<string | null> {
    const response = await engineCall(() =>
      client.search({ ...COMPLETE_RESULTS, index, query, sort, size: 1, _source: false, track_total_hits: false }),
    );
    return response.hits.hits[0]?._id ?? null;
  }

  /** Pages through every hit of a filter query in `id` order, with the given doc-value fields. */
  async function* pages(index: string, filter: estypes.QueryDslQueryContainer[], fields: string[]) {
    let after: estypes.SortResults | undefined;
    for (;;) {
      const response = await engineCall(() =>
        client.search({
          // A fan-out or baseline that missed a shard would leave records stale.
          ...COMPLETE_RESULTS,
          index,
          query: { bool: { filter } },
          _source: false,
          docvalue_fields: fields.map((field) =>
            field === 'posted_at' ? { field, format: 'strict_date_time' } : { field },
          ),
          sort: [{ id: 'asc' }],
          size: PAGE,
          track_total_hits: false,
          ...(after ? { search_after: after } : {}),
        }),
      );
      const hits = response.hits.hits;
      if (hits.length > 0) yield hits;
      if (hits.length < PAGE) return;
      after = hits.at(-1)!.sort;
    }
  }

  async function* postIdsLinkedTo(accountIds: readonly string[]): AsyncIterable<string[]> {
    if (accountIds.length === 0) return;
    for await (const hits of pages(posts.read, [{ terms: { linked_account_ids: [...accountIds] } }], [])) {
      yield hits.map((h) => h._id!);
    }
  }

  async function authorPostFacts(authorIds: readonly string[]): Promise<Map<string, AuthorPostFacts[]>> {
    const out = new Map<string, AuthorPostFacts[]>(authorIds.map((id) => [id, []]));
    if (authorIds.length === 0) return out;
    const filter = [
      { terms: { 'author.id': [...authorIds] } },
      { term: { status: 'available' } },
      { exists: { field: 'posted_at' } },
    ];
    const fields = ['author.id', 'posted_at', 'views', 'likes', 'comments', 'view_ratio_to_account_baseline'];
    for await (const hits of pages(posts.read, filter, fields)) {
      for (const hit of hits) {
        const f = hit.fields as Record<string, unknown[]>;
        const authorId = String(f['author.id']?.[0]);
        out.get(authorId)?.push({
          id: hit._id!,
          authorId,
          postedAt: String(f.posted_at?.[0]),
          views: (f.views?.[0] as number | undefined) ?? null,
          likes: (f.likes?.[0] as number | undefined) ?? 0,
          comments: (f.comments?.[0] as number | undefined) ?? 0,
          viewRatioToAccountBaseline: (f.view_ratio_to_account_baseline?.[0] as number | undefined) ?? null,
        });
      }
    }
    return out;
  }

  async function recentPostVectors(
    authorIds: readonly string[],
    model: string,
    limit: number,
  ): Promise<Map<string, PostVector[]>> {
    const out = new Map<string, PostVector[]>(authorIds.map((id) => [id, []]));
    if (authorIds.length === 0) return out;
    // One small search per author, in one request: the newest posts of each, vectors from the record.
    const searches = authorIds.flatMap((id): estypes.MsearchRequestItem[] => [
      // In a multi-search the header line carries the request parameters.
      { index: posts.read, ...COMPLETE_RESULTS },
      {
        query: {
          bool: {
            filter: [
              { term: { 'author.id': id } },
              { term: { status: 'available' } },
              { exists: { field: 'embedding' } },
            ],
          },
        },
        sort: [{ posted_at: { order: 'desc' } }, { id: 'asc' }],
        size: limit,
        _source: ['record.embedding', 'record.raw.v.posted_at', 'record.enrichment.topics'],
        track_total_hits: false,
      },
    ]);
    const response = await engineCall(() =>
      client.msearch<{
        record: Pick<PostRecord, 'embedding'> & {
          raw: { v: { posted_at: string } };
          enrichment?: { topics?: { v?: string[] | null } };
        };
      }>({ searches }),
    );
    response.responses.forEach((answer, i) => {
      if ('error' in answer) throw translateEngineError(answer.error);
      const vectors = out.get(authorIds[i]!)!;
      for (const hit of answer.hits.hits) {
        const record = hit._source?.record;
        if (record?.embedding?.model !== model) continue;
        vectors.push({
          postedAt: record.raw.v.posted_at,
          vector: decodeVector(record.embedding.vector),
          topics: record.enrichment?.topics?.v ?? [],
        });
      }
    });
    return out;
  }

  const reads: RecordReads = {
    posts: postStore,
    accounts: accountStore,

    findPostIdByShortcode(shortcode) {
      return firstId(posts.read, { bool: { filter: [{ term: { shortcode } }] } }, [
        { observed_at: { order: 'desc', unmapped_type: 'date' } },
        { id: 'asc' },
      ]);
    },

    async currentFollowers(accountIds) {
      const stored = await reads.storedFollowers(accountIds);
      return new Map([...stored].map(([id, s]) => [id, s.followers]));
    },

    async storedFollowers(accountIds) {
      const out = new Map<string, StoredFollowers>();
      const ids = [...new Set(accountIds)];
      if (ids.length === 0) return out;
      // A search reading doc values, not a get: a get parses each account's whole stored record
      // (vectors included) to filter it, which cost a post search page ~6 ms at 1M posts.
      const response = await engineCall(() =>
        client.search({
          index: accounts.read,
          query: { ids: { values: ids } },
          size: ids.length,
          _source: false,
          stored_fields: ['_none_'],
          docvalue_fields: ['id', 'followers_count', { field: 'observed_at', format: 'strict_date_time' }],
          track_total_hits: false,
        }),
      );
      for (const hit of response.hits.hits) {
        const id = (hit.fields?.['id'] as string[] | undefined)?.[0];
        const followers = (hit.fields?.['followers_count'] as number[] | undefined)?.[0];
        const observedAt = (hit.fields?.['observed_at'] as string[] | undefined)?.[0];
        if (id !== undefined && followers !== undefined && observedAt !== undefined)
          out.set(id, { followers, observedAt });
      }
      return out;
    },

    findAccountIdByHandle(handle) {
      // Two records can claim a handle until the rename of the former holder is observed:
      // the most recently observed claim is the current holder.
      return firstId(accounts.read, { bool: { filter: [{ term: { handle: handle.toLowerCase() } }] } }, [
        { handle_observed_at: { order: 'desc', unmapped_type: 'date' } },
        { id: 'asc' },
      ]);
    },

    async examples() {
      const accountId = await firstId(
        accounts.read,
        {
          bool: {
            filter: [
              { term: { servable: true } },
              { term: { is_private: false } },
              { exists: { field: 'publishing_summary' } },
            ],
          },
        },
        [{ followers_count: { order: 'desc', unmapped_type: 'long' } }, { id: 'asc' }],
      );
      const postId = accountId
        ? await firstId(
            posts.read,
            {
              bool: {
                filter: [
                  { term: { servable: true } },
                  { term: { 'author.id': accountId } },
                  { term: { enrichment_pending: false } },
                ],
              },
            },
            [{ posted_at: { order: 'desc', unmapped_type: 'date' } }, { id: 'asc' }],
          )
        : null;
      return { accountId, postId };
    },
  };

  const search = createSearchEngine({
    client,
    snapshots,
    visibility,
    qualifying,
    postsIndex: posts.read,
    accountsIndex: accounts.read,
    similarityFloor: deps.similarityFloor ?? null,
    vectorFeedback: deps.vectorFeedback ?? 'off',
    queryTerms: deps.queryTerms ?? false,
  });

  // Facets and counts count exactly what a search returns, on the snapshots first pages share.
  const counting = {
    client,
    snapshots,
    visibility,
    postsIndex: posts.read,
    accountsIndex: accounts.read,
    similarityFloor: deps.similarityFloor ?? null,
    vectorFeedback: deps.vectorFeedback ?? 'off',
    queryTerms: deps.queryTerms ?? false,
  } as const;

  const intake: IntakeStore = {
    posts: postStore,
    accounts: accountStore,
    postIdsLinkedTo,
    authorPostFacts,
    recentPostVectors,
    followerHistory: (ids, from, to, options) =>
      historyOn ? history.followers(ids, from, to, options) : Promise.resolve(new Map(ids.map((id) => [id, []]))),
    refresh: refreshLookups,
    async publish(written = {}) {
      const months = historyOn ? [...new Set((written.points ?? []).map((p) => monthIndex(history.names, p.at)))] : [];
      await Promise.all([
        refreshAll(client, [posts.read, accounts.read]),
        months.length > 0 ? refreshAll(client, monthTargets(history.names, months), { allowMissing: true }) : undefined,
      ]);
      await visibility.advance();
    },
  };

  return {
    reads,
    lookups: createRecordLookups({ client, postsIndex: posts.read, accountsIndex: accounts.read }),
    suggest: createNameSuggester({ client, postsIndex: posts.read, accountsIndex: accounts.read }),
    spelling: createSpellingCorrector({ client, postsIndex: posts.read }),
    search,
    facets: createFacetEngine({ ...counting, qualifying }),
    counts: createCountEngine(counting),
    highlights: createPostHighlighter({ client, index: posts.read }),
    alerts: createAlertMatching({
      client,
      postsIndex: posts.read,
      accountsIndex: accounts.read,
      similarityFloor: deps.similarityFloor ?? null,
      projections,
    }),
    likeness: createLikenessEvidence({ client, postsIndex: posts.read }),
    intake,
    admin: createIndexAdmin({
      client,
      indexPrefix: deps.indexPrefix,
      templatesDir: deps.templatesDir,
      visibility,
      ...(deps.layout ? { layout: deps.layout } : {}),
      ...(deps.historyRetentionDays ? { historyRetentionDays: deps.historyRetentionDays } : {}),
    }),
    history: {
      points: (entity, id, from, to, limit) =>
        historyOn ? history.points(entity, id, from, to, limit) : Promise.resolve([]),
    },
    snapshotStats: () => snapshots.stats(),
    health: {
      async check() {
        const health = await engineCall(() => client.cluster.health({ timeout: '2s' }));
        if (health.status === 'red') {
          throw new ServiceUnavailableError('The search engine cluster is red; retry shortly.');
        }
        return health.status;
      },
    },
  };
}
