import type { DeliverySigner } from '../../delivery/signer.ts';
import { isServablePost } from '../../domain/availability.ts';
import type { SearchedPost } from '../../domain/records.ts';
import { snapshotAccountsOf, withCurrentFollowers } from '../../domain/snapshots.ts';
import type { RecordReads } from '../../engine/reads.ts';
import { renderPostSummary } from '../../render/post.ts';

/**
 * The post summaries (spec 2.4, JSON) events show, by post id: servable posts only, their authors'
 * follower counts current (posts keep them coarsened), one read of the followers for all. Shared
 * by the matching at the write and the pass.
 */
export async function renderEventSummaries(
  posts: Iterable<SearchedPost>,
  deps: { reads: Pick<RecordReads, 'currentFollowers'>; signer: DeliverySigner },
): Promise<Map<string, string>> {
  const servable = [...posts].filter((post) => isServablePost(post));
  const followers = await deps.reads.currentFollowers(snapshotAccountsOf(servable));
  return new Map(
    servable.map((post) => [
      post.id,
      JSON.stringify(renderPostSummary(withCurrentFollowers(post, followers), deps.signer)),
    ]),
  );
}
