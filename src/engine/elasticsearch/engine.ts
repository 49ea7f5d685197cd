import type { Client } from '@elastic/elasticsearch';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import { hasVector, type AccountRecord, type PostRecord } from '../../domain/records.ts';
import type { FacetEngine } from '../facets.ts';
import type { CountEngine } from '../counts.ts';
import type { SimilarityEvidence, MatchHighlighter } from '../matches.ts';
import type { EngineHealth } from '../health.ts';
import type { IndexAdmin, IndexLayout } from '../index-admin.ts';
import type { IntakeStore } from '../intake-store.ts';
import type { RecordLookups } from '../lookups.ts';
import type { NameSuggester } from '../suggest.ts';
import type { SpellingCorrector } from '../spelling.ts';
import type { RecordReads } from '../reads.ts';
import type { SearchEngine } from '../search.ts';
import type { VisibilityEpoch } from '../visibility.ts';
import { engineCall, refreshAll } from './errors.ts';
import { createIndexAdmin } from './admin/index-admin.ts';
import { indexNames, postVectorNames } from './names.ts';
import { createQualifyingAccounts } from './queries/account-query.ts';
import { createFacetEngine } from './reads/facet-search.ts';
import { createCountEngine } from './reads/count-search.ts';
import { createPostHighlighter } from './reads/post-highlights.ts';
import { createSnapshotPool, type SnapshotStats } from './reads/snapshot-pool.ts';
import { projectAccount, storedPostRecord } from './documents/projection.ts';
import { createRecordLookups } from './reads/record-lookups.ts';
import { createRecordReads } from './reads/record-reads.ts';
import { adoptStoredEmbedding, restorePostVectors } from './writes/stored-vectors.ts';
import { createIntakeReads } from './reads/intake-reads.ts';
import { createNameSuggester } from './reads/name-suggestions.ts';
import { ACCOUNT_VOCABULARY, createSpellingCorrector, POST_VOCABULARY } from './queries/spelling.ts';
import { createRecordStore } from './writes/record-store.ts';
import type { FusedSettings } from './reads/fused-settings.ts';
import { createSearchEngine } from './reads/search-engine.ts';
import { createSimilarityEvidence } from './reads/similarity-evidence.ts';
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
import { firstString } from './response-values.ts';
import { FACTS_FIELD, MODEL_FIELD, projectPostVectors, TEXT_HASH_FIELD } from './documents/vector-projection.ts';
import type { VectorFeedback } from './reads/vector-feedback.ts';
import type { PostVectorLayout } from './reads/nearest-posts.ts';
import type { WritePacing } from '../../internal/write-pacing.ts';

/** Every engine role, implemented on one Elasticsearch client. */
export interface ElasticsearchEngine {
  readonly reads: RecordReads;
  readonly lookups: RecordLookups;
  readonly suggest: NameSuggester;
  /** Corrections from the words of posts' texts. */
  readonly spelling: SpellingCorrector;
  /** Corrections from the words of accounts' names and descriptions. */
  readonly accountSpelling: SpellingCorrector;
  readonly search: SearchEngine;
  readonly facets: FacetEngine;
  readonly counts: CountEngine;
  readonly highlights: MatchHighlighter;
  readonly similarity: SimilarityEvidence;
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
  /** The relevance floor for a query none of whose words any post carries (config SEARCH_SIMILARITY_FLOOR_UNMATCHED); absent: similarityFloor. */
  unmatchedFloor?: number | null;
  /** The similarity floor instead for a question's vector read as a sentence (model-floors.ts); absent: similarityFloor. */
  sentenceFloor?: number | null;
  /** The least cosine of a post related to a query's strong word matches by its vector (model-floors.ts); absent or null: none is. */
  relatedFloor?: number | null;
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
  /** Searches first (WRITE_PACING): the writes' and the intake reads' pauses; absent: none. */
  writePacing?: WritePacing;
}): ElasticsearchEngine {
  const { client, visibility } = deps;
  const snapshots = createSnapshotPool({ client, maxAgeMs: deps.snapshotMaxAgeMs ?? 0 });
  const qualifying = createQualifyingAccounts(client);
  const posts = indexNames(deps.indexPrefix, 'posts');
  const postVectors = postVectorNames(deps.indexPrefix);
  // Searches that read vectors run on a snapshot of both indices (reads/nearest-posts.ts).
  const layout: PostVectorLayout = {
    posts: posts.read,
    vectors: postVectors.read,
    postsOnly: { prefix: { _index: posts.concretePrefix } },
  };
  const accounts = indexNames(deps.indexPrefix, 'accounts');
  const history = createMetricHistory({ client, names: metricHistoryNames(deps.indexPrefix) });
  const historyOn = deps.metricHistory !== false;
  // Searches first (src/internal/write-pacing.ts): the stores' bulk writes and the intake's paged reads.
  const pacing = deps.writePacing ? { pacing: deps.writePacing } : {};
  const writes = {
    ...pacing,
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
    // Each post's vectors and filter facts, written when they change (vector-projection.ts).
    companion: {
      index: postVectors.write,
      keyField: FACTS_FIELD,
      // Any post: its vectors may have been written before its record learnt of them (`apart`).
      applies: () => true,
      of: projectPostVectors,
      // New vectors go to the vector document alone; the record learns their model and text hash
      // from it at its next write, and a read of a record that has not yet takes them from there.
      storedFields: [MODEL_FIELD, TEXT_HASH_FIELD],
      apart: (record) => hasVector(record.embedding),
      behind: (record) => record.embedding === undefined,
      adopt: adoptStoredEmbedding,
      // Once its vector document holds its vectors, a post's record is stored without them.
      settle: (doc, record) => {
        doc.record = storedPostRecord(record);
      },
      // A post read back keeps its vectors here only: a document whose facts moved is written with them.
      restore: restorePostVectors(client, postVectors.write),
    },
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

  const reads = createRecordReads({
    client,
    postsIndex: posts.read,
    accountsIndex: accounts.read,
    postVectorsIndex: postVectors.read,
    posts: postStore,
    accounts: accountStore,
  });

  // How fused searches rank, and so what facets and counts count.
  const fusion: FusedSettings = {
    similarityFloor: deps.similarityFloor ?? null,
    unmatchedFloor: deps.unmatchedFloor,
    sentenceFloor: deps.sentenceFloor,
    relatedFloor: deps.relatedFloor,
    vectorFeedback: deps.vectorFeedback ?? 'off',
    queryTerms: deps.queryTerms ?? false,
  };
  const search = createSearchEngine({
    client,
    snapshots,
    visibility,
    qualifying,
    layout,
    accountsIndex: accounts.read,
    ...fusion,
  });

  // Facets and counts count exactly what a search returns, on the snapshots first pages share.
  const counting = { client, snapshots, visibility, layout, accountsIndex: accounts.read, ...fusion } as const;

  const intake: IntakeStore = {
    posts: postStore,
    accounts: accountStore,
    ...createIntakeReads({ client, postsIndex: posts.read, postVectorsIndex: postVectors.read, ...pacing }),
    followerHistory: (ids, from, to, options) =>
      historyOn ? history.followers(ids, from, to, options) : Promise.resolve(new Map(ids.map((id) => [id, []]))),
    refresh: refreshLookups,
    async publish(written = {}) {
      const months = [...new Set((written.points ?? []).map((p) => monthIndex(history.names, p.at)))];
      let monthsToRefresh: string | string[] | undefined;
      if (historyOn && written.allMonths) monthsToRefresh = history.names.read;
      else if (historyOn && months.length > 0) monthsToRefresh = monthTargets(history.names, months);
      await Promise.all([
        refreshAll(client, [posts.read, postVectors.read, accounts.read]),
        monthsToRefresh ? refreshAll(client, monthsToRefresh, { allowMissing: true }) : undefined,
      ]);
      await visibility.advance();
    },
  };

  return {
    reads,
    lookups: createRecordLookups({ client, postsIndex: posts.read, accountsIndex: accounts.read }),
    suggest: createNameSuggester({ client, postsIndex: posts.read, accountsIndex: accounts.read }),
    spelling: createSpellingCorrector({ client, index: posts.read, vocabulary: POST_VOCABULARY }),
    accountSpelling: createSpellingCorrector({ client, index: accounts.read, vocabulary: ACCOUNT_VOCABULARY }),
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
      postVectorsIndex: postVectors.read,
    }),
    similarity: createSimilarityEvidence({ client, postsIndex: posts.read, vectorsIndex: postVectors.read }),
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
      async vectorModels(sample) {
        const response = await engineCall(() =>
          client.search({
            index: postVectors.read,
            size: sample,
            _source: false,
            stored_fields: [MODEL_FIELD],
            track_total_hits: false,
          }),
        );
        const counts = new Map<string, number>();
        for (const hit of response.hits.hits) {
          const name = firstString(hit, MODEL_FIELD);
          if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
        }
        return [...counts].map(([model, posts]) => ({ model, posts })).sort((a, b) => b.posts - a.posts);
      },
    },
  };
}
