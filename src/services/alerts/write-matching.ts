import type { DeliverySigner } from '../../delivery/signer.ts';
import { isServablePost } from '../../domain/availability.ts';
import type { PostRecord, PostWrite } from '../../domain/records.ts';
import type { AlertMatching } from '../../engine/alerts.ts';
import type { RecordReads } from '../../engine/reads.ts';
import { renderEventSummaries } from './event-summaries.ts';
import type { MatchedChange } from './pending-entries.ts';
import type { SearchSet } from './search-set.ts';

/** Works out, for posts just written, which saved searches each now comes to match. */
export type WriteMatching = (writes: readonly PostWrite[]) => Promise<MatchedChange[]>;

/** A post as summaries render it: without its per-media enrichment. */
function searched(record: PostRecord) {
  const { media_enrichment: _media, ...post } = record;
  return post;
}

/**
 * Creates the matching of posts at their write, in the writer's job (intake, embeddings), with the
 * records in hand: each written post against every saved search (as the pass matches: the search's
 * own engine query, memory-query.ts), and for the pairs it matches, its version before the write;
 * a pair is news when that version did not match (or the post is new), known when it did. Pairs
 * with a search created after the write never count. Posts with news get their summary rendered
 * here, as the event will show them.
 *
 * Why at the write (bench/alerts.md): the pass read every written post back from the engine and
 * projected it again tens of seconds later, when the texts' analyses were no longer remembered:
 * ~3 of the ~19 CPU-s 1,000 saved searches added to a round of 20,000 posts, beside the engine's
 * reads. Here the records are in hand and their analyses still remembered (src/text/languages.ts).
 */
export function createWriteMatching(deps: {
  searches: SearchSet;
  engine: Pick<AlertMatching, 'matchVersions'>;
  reads: Pick<RecordReads, 'currentFollowers'>;
  signer: DeliverySigner;
  now?: () => Date;
}): WriteMatching {
  const now = deps.now ?? (() => new Date());
  return async function matchWrites(writes) {
    const { searches, queries } = await deps.searches.current();
    if (searches.length === 0 || writes.length === 0) return [];
    const at = now().toISOString();
    // The latest write of each post, with the version before its first (one job writes a post once).
    const byPost = new Map<string, PostWrite>();
    for (const write of writes) {
      const first = byPost.get(write.after.id);
      byPost.set(write.after.id, { before: first ? first.before : write.before, after: write.after });
    }
    const afters = [...byPost.values()].map((w) => w.after).filter(isServablePost);
    if (afters.length === 0) return [];
    const current = await deps.engine.matchVersions(afters, queries);

    // Per post, the searches it matches now (only those created before this write).
    const matching = new Map<string, string[]>();
    for (const search of searches) {
      if (search.created_at > at) continue;
      for (const post of current.get(search.id) ?? []) {
        const list = matching.get(post);
        if (list) list.push(search.id);
        else matching.set(post, [search.id]);
      }
    }
    if (matching.size === 0) return [];
    const befores = [...matching.keys()].map((id) => byPost.get(id)!.before).filter(isServablePost);
    const asking = new Set([...matching.values()].flat());
    const before =
      befores.length > 0
        ? await deps.engine.matchVersions(
            befores,
            queries.filter((q) => asking.has(q.id)),
          )
        : new Map<string, Set<string>>();

    const changes: MatchedChange[] = [];
    for (const [post, ids] of matching) {
      const news = ids.filter((id) => !before.get(id)?.has(post));
      const known = ids.filter((id) => before.get(id)?.has(post));
      changes.push({ post, at, news, known, summary: null });
    }
    const summaries = await renderEventSummaries(
      changes.filter((c) => c.news.length > 0).map((c) => searched(byPost.get(c.post)!.after)),
      deps,
    );
    for (const change of changes) change.summary = summaries.get(change.post) ?? null;
    return changes;
  };
}
