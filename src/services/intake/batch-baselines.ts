import { mintId } from '../../contract/ids.ts';
import type { PostObservation } from '../../contract/observations.ts';
import { BASELINE_WINDOW_MS, viewRatiosToBaseline, type BaselineInput } from '../../domain/derived.ts';
import type { GroupedBatch, PostBatchObservation } from '../../domain/merge.ts';
import type { PostRecord } from '../../domain/records.ts';
import type { IntakeStore } from '../../engine/intake-store.ts';

/** One post's facts as the batch's newest observation of it states them. */
interface ObservedFacts extends BaselineInput {
  authorId: string;
}

/**
 * The baseline ratio a batch's post takes in its first write, or `undefined` where the batch
 * cannot tell (the record's stored state is newer than the batch's observation of it).
 */
export type BatchBaseline = (merged: PostRecord) => number | null | undefined;

/**
 * Baseline ratios (`view_ratio_to_account_baseline`) for the posts of one batch, computed before
 * the batch writes them from what search sees of their authors' other posts and from the batch
 * itself.
 *
 * Why: a new post's first write used to leave its ratio to the follow-up run, which then wrote the
 * post a second time. A pipeline sends an account's posts together (a profile's page, newest
 * first), so one batch usually holds every post a ratio reads, and the follow-up finds nothing to
 * write (bench/intake.md, "Baselines in the first write").
 *
 * Best effort: a post written by another batch and not yet refreshed is missing here, so a ratio
 * may be off. The follow-up run stays what makes ratios right. It recomputes them after a refresh,
 * under the authors' locks, and a post's first write always gives it that run: its baseline facts
 * changed. Only posts whose own facts the batch changes take a ratio here, so a post whose facts
 * stay keeps the ratio the follow-up wrote.
 */
export async function batchBaselines(
  store: Pick<IntakeStore, 'authorPostFacts'>,
  groups: GroupedBatch['posts'],
): Promise<BatchBaseline> {
  const observed = new Map<string, ObservedFacts>();
  const byAuthor = new Map<string, ObservedFacts[]>();
  const gone = new Set<string>();
  for (const [id, group] of groups) {
    const latest = newestPostObservation(group.observations);
    if (latest?.status === 'unavailable') gone.add(id);
    if (latest?.status !== 'available') continue;
    const facts = {
      id,
      authorId: mintId('account', latest.author_platform_id),
      postedAt: latest.posted_at,
      views: latest.views,
    };
    observed.set(id, facts);
    const list = byAuthor.get(facts.authorId);
    if (list) list.push(facts);
    else byAuthor.set(facts.authorId, [facts]);
  }
  if (observed.size === 0) return () => undefined;
  // Only the posts a batch post's window can hold: an author with years of posts costs one read of
  // the batch's span plus the window, not of every post.
  const times = [...observed.values()].map((f) => Date.parse(f.postedAt));
  const stored = await store.authorPostFacts([...byAuthor.keys()], {
    from: new Date(Math.min(...times) - BASELINE_WINDOW_MS).toISOString(),
    to: new Date(Math.max(...times)).toISOString(),
  });
  const ratios = new Map<string, number | null>();
  for (const [author, batchPosts] of byAuthor) {
    // The stored posts, less those the batch states anew or makes unavailable, then the batch's own.
    const posts: BaselineInput[] = (stored.get(author) ?? []).filter((p) => !observed.has(p.id) && !gone.has(p.id));
    posts.push(...batchPosts);
    for (const [id, ratio] of viewRatiosToBaseline(posts)) if (observed.has(id)) ratios.set(id, ratio);
  }
  return (merged) => {
    const facts = observed.get(merged.id);
    const raw = merged.raw?.v;
    if (!facts || !raw || merged.status?.v !== 'available') return undefined;
    // The record may hold a newer observation than the batch's: then its ratio is the follow-up's.
    if (raw.posted_at !== facts.postedAt || raw.views !== facts.views) return undefined;
    if (mintId('account', raw.author_platform_id) !== facts.authorId) return undefined;
    return ratios.get(merged.id);
  };
}

/** The `post` observation a merge keeps of a group: the newest by `observed_at`. */
function newestPostObservation(observations: readonly PostBatchObservation[]): PostObservation | null {
  let newest: PostObservation | null = null;
  for (const o of observations) {
    if (o.kind === 'post' && (newest === null || o.observed_at >= newest.observed_at)) newest = o;
  }
  return newest;
}
