import type { FullPost, PostHistory } from '../../contract/api.ts';
import { postRef } from '../../contract/ids.ts';
import type { DeliverySigner } from '../../delivery/signer.ts';
import type { HistoryReads } from '../../engine/history.ts';
import type { RecordReads } from '../../engine/reads.ts';
import { NotTrackedError } from '../../internal/errors.ts';
import { isServablePost } from '../../domain/availability.ts';
import { bucketHistory } from '../../domain/history.ts';
import type { PostRecord } from '../../domain/records.ts';
import { snapshotAccountsOf, withCurrentFollowers } from '../../domain/snapshots.ts';
import {
  MAX_HISTORY_POINTS,
  resolveHistoryQuery,
  tooManyPoints,
  type HistoryQueryInput,
} from '../../query/history-request.ts';
import { renderHistory } from '../../render/history.ts';
import { renderFullPost } from '../../render/post.ts';

/** Reads posts (spec 4.3) and their metric history. */
export interface PostService {
  /** The full post by service ID or platform shortcode. */
  get(idOrShortcode: string): Promise<FullPost>;
  /** The post's metric history. */
  history(idOrShortcode: string, query: HistoryQueryInput): Promise<PostHistory>;
}

function notTracked(): NotTrackedError {
  return new NotTrackedError(
    'No tracked post has this ID or shortcode, or it is currently unavailable. This is not a claim that the post is absent from the platform.',
  );
}

/** Creates the post service. */
export function createPostService(deps: {
  reads: Pick<RecordReads, 'posts' | 'findPostIdByShortcode' | 'currentFollowers'>;
  history: HistoryReads;
  signer: DeliverySigner;
  now?: () => Date;
}): PostService {
  const now = deps.now ?? (() => new Date());

  /** The servable post `idOrShortcode` names; 404 `not-tracked` otherwise. */
  async function resolve(idOrShortcode: string): Promise<PostRecord> {
    const ref = postRef(idOrShortcode);
    const id = ref?.kind === 'alias' ? await deps.reads.findPostIdByShortcode(ref.alias) : (ref?.id ?? null);
    if (id === null) throw notTracked();
    const record = (await deps.reads.posts.get([id])).get(id) ?? null;
    if (!isServablePost(record)) throw notTracked();
    return record;
  }

  return {
    async get(idOrShortcode) {
      const record = await resolve(idOrShortcode);
      // The post keeps its authors' counters coarsened (src/domain/volatile-facts.ts).
      const followers = await deps.reads.currentFollowers(snapshotAccountsOf([record]));
      return renderFullPost(withCurrentFollowers(record, followers), deps.signer);
    },

    async history(idOrShortcode, input) {
      const query = resolveHistoryQuery(input, now());
      const { id } = await resolve(idOrShortcode);
      const points = await deps.history.points('post', id, query.from, query.to, MAX_HISTORY_POINTS);
      if (points === null) throw tooManyPoints();
      return renderHistory(id, query, bucketHistory(points, query.interval));
    },
  };
}
