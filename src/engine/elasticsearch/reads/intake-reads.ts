import type { Client, estypes } from '@elastic/elasticsearch';
import type { PostVector } from '../../../domain/lookalike.ts';
import type { AuthorPostFacts, IntakeStore } from '../../intake-store.ts';
import { COMPLETE_RESULTS, engineCall, translateEngineError } from '../errors.ts';
import { storedPostVectors } from '../queries/post-vectors.ts';
import { firstNumber, firstString } from '../response-values.ts';
import { paced, type WritePacing } from '../../../internal/write-pacing.ts';

const PAGE = 2000;
/**
 * Accounts per search of their linked posts: each account with a snapshot to skip is two leaf
 * clauses, so 250 stay below the engine's limit on a query's leaf clauses (sized from heap and
 * search threads, never under 1,024).
 */
const LINKED_PER_SEARCH = 250;

/** A hit's post ID, from the `id` doc value (the pages read no `_id`: see `pages`). */
function postIdOf(hit: estypes.SearchHit): string {
  const id = firstString(hit, 'id');
  if (id === undefined) throw new Error('a posts page hit without its id doc value');
  return id;
}

/** The posts the intake's follow-up steps read: fan-out targets, baselines, lookalike vectors. */
export type IntakeReads = Pick<IntakeStore, 'postIdsLinkedTo' | 'authorPostFacts' | 'recentPostVectors'>;

/**
 * The intake's reads of the posts index: every post linked to accounts (fan-out), the metric facts
 * of authors' posts (baselines), and authors' newest post vectors (lookalike accounts).
 */
export function createIntakeReads(deps: {
  client: Client;
  postsIndex: string;
  /** The posts' vector documents (documents/vector-projection.ts): lookalikes read their vectors. */
  postVectorsIndex: string;
  /** Searches first: these pages of up to 2,000 hits pause as the writes do (absent: never). */
  pacing?: WritePacing;
}): IntakeReads {
  const { client, postsIndex } = deps;

  /**
   * Pages through every hit of a filter query in `id` order, with the given doc-value fields and
   * `id` (each hit's post ID: {@link postIdOf}).
   */
  async function* pages(filter: estypes.QueryDslQueryContainer[], fields: string[]) {
    let after: estypes.SortResults | undefined;
    for (;;) {
      const response = await paced(deps.pacing, () =>
        engineCall(() =>
          client.search({
            // A fan-out or baseline that missed a shard would leave records stale.
            ...COMPLETE_RESULTS,
            index: postsIndex,
            query: { bool: { filter } },
            // No stored field at all, `_id` included: each hit's `_id` would cost a stored-fields
            // block decompressed (the records make them large), where the `id` doc value is a
            // column read. A page of 2,000 hits at 1M posts: ~66 → ~30 ms (bench/scaling.md,
            // "Where the posts' writes went").
            stored_fields: ['_none_'],
            docvalue_fields: ['id', ...fields].map((field) =>
              field === 'posted_at' ? { field, format: 'strict_date_time' } : { field },
            ),
            sort: [{ id: 'asc' }],
            size: PAGE,
            track_total_hits: false,
            ...(after ? { search_after: after } : {}),
          }),
        ),
      );
      const hits = response.hits.hits;
      if (hits.length > 0) yield hits;
      if (hits.length < PAGE) return;
      after = hits.at(-1)!.sort;
    }
  }

  async function* postIdsLinkedTo(
    accountIds: readonly string[],
    unlessHolding?: ReadonlyMap<string, string>,
  ): AsyncIterable<string[]> {
    for (let i = 0; i < accountIds.length; i += LINKED_PER_SEARCH) {
      const ids = accountIds.slice(i, i + LINKED_PER_SEARCH);
      for await (const hits of pages([linkedToQuery(ids, unlessHolding)], [])) yield hits.map(postIdOf);
    }
  }

  /**
   * Posts linked to any of `ids`, less, per account, those already holding the snapshot given for
   * it. Per account, not one `must_not` for all: a post linking to two of them may hold one's
   * current snapshot and not the other's.
   */
  function linkedToQuery(
    ids: readonly string[],
    unlessHolding: ReadonlyMap<string, string> = new Map(),
  ): estypes.QueryDslQueryContainer {
    const should: estypes.QueryDslQueryContainer[] = [];
    const rest: string[] = [];
    for (const id of ids) {
      const key = unlessHolding.get(id);
      if (key === undefined) rest.push(id);
      else
        should.push({
          bool: { filter: [{ term: { linked_account_ids: id } }], must_not: [{ term: { held_snapshots: key } }] },
        });
    }
    if (should.length === 0) return { terms: { linked_account_ids: rest } };
    if (rest.length > 0) should.push({ terms: { linked_account_ids: rest } });
    return { bool: { should, minimum_should_match: 1 } };
  }

  async function authorPostFacts(
    authorIds: readonly string[],
    postedWithin?: { from: string; to: string },
  ): Promise<Map<string, AuthorPostFacts[]>> {
    const out = new Map<string, AuthorPostFacts[]>(authorIds.map((id) => [id, []]));
    if (authorIds.length === 0) return out;
    const filter = [
      { terms: { 'author.id': [...authorIds] } },
      { term: { status: 'available' } },
      postedWithin
        ? { range: { posted_at: { gte: postedWithin.from, lte: postedWithin.to } } }
        : { exists: { field: 'posted_at' } },
    ];
    const fields = ['author.id', 'posted_at', 'views', 'likes', 'comments', 'view_ratio_to_account_baseline'];
    for await (const hits of pages(filter, fields)) {
      for (const hit of hits) {
        const authorId = String(firstString(hit, 'author.id'));
        out.get(authorId)?.push({
          id: postIdOf(hit),
          authorId,
          postedAt: String(firstString(hit, 'posted_at')),
          views: firstNumber(hit, 'views') ?? null,
          likes: firstNumber(hit, 'likes') ?? 0,
          comments: firstNumber(hit, 'comments') ?? 0,
          viewRatioToAccountBaseline: firstNumber(hit, 'view_ratio_to_account_baseline') ?? null,
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
    // One small search per author, in one request: the newest posts of each. Which have a vector of
    // `model` is for their vector documents to say (a post's record learns of its vectors only at
    // its next write), so twice as many are read as kept: a post not embedded yet, or with no text.
    const searches = authorIds.flatMap((id): estypes.MsearchRequestItem[] => [
      // In a multi-search the header line carries the request parameters.
      { index: postsIndex, ...COMPLETE_RESULTS },
      {
        query: { bool: { filter: [{ term: { 'author.id': id } }, { term: { status: 'available' } }] } },
        sort: [{ posted_at: { order: 'desc' } }, { id: 'asc' }],
        size: limit * 2,
        _source: ['record.raw.v.posted_at', 'record.enrichment.topics', 'record.embedding.model'],
        track_total_hits: false,
      },
    ]);
    const response = await engineCall(() =>
      client.msearch<{
        record: {
          raw: { v: { posted_at: string } };
          enrichment?: { topics?: { v?: string[] | null } };
          embedding?: { model?: string };
        };
      }>({ searches }),
    );
    const recent = response.responses.map((answer) => {
      if ('error' in answer) throw translateEngineError(answer.error);
      return answer.hits.hits;
    });
    // The vectors themselves from the vector documents.
    const vectors = await storedPostVectors(
      client,
      deps.postVectorsIndex,
      recent.flatMap((hits) => hits.map((hit) => hit._id!)),
    );
    recent.forEach((hits, i) => {
      const list = out.get(authorIds[i]!)!;
      for (const hit of hits) {
        const record = hit._source?.record;
        const stored = vectors.get(hit._id!);
        if (!record || !stored || list.length >= limit) continue;
        // A document written before it named its model was written with its record, which does.
        if ((stored.model ?? record.embedding?.model) !== model) continue;
        list.push({
          postedAt: record.raw.v.posted_at,
          vector: stored.vector,
          topics: record.enrichment?.topics?.v ?? [],
        });
      }
    });
    return out;
  }

  return { postIdsLinkedTo, authorPostFacts, recentPostVectors };
}
