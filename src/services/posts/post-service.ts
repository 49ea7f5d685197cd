import type { FullPost, PostHistory } from '../../contract/api.ts';
import { isServiceId, postRef } from '../../contract/ids.ts';
import type { MediaUrlSigner } from '../../media/url-signer.ts';
import type { HistoryReads } from '../../engine/history.ts';
import type { RecordLookups } from '../../engine/lookups.ts';
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
import type { PostLookupRequest } from '../../query/lookup-request.ts';
import { renderLookup, type LookupResult } from '../../render/lookup.ts';
import { renderFullPost } from '../../render/post.ts';

/** Reads posts (spec 4.3) and their metric history. */
export interface PostService {
  /** The full post by service ID or platform shortcode. */
  get(idOrShortcode: string): Promise<FullPost>;
  /** The post's metric history. */
  history(idOrShortcode: string, query: HistoryQueryInput): Promise<PostHistory>;
  /**
   * Posts by shortcode and by ID in one engine request: the ones get post would answer with a
   * record, in the order asked (shortcodes first), each once; the other entries as sent.
   */
  lookup(request: PostLookupRequest): Promise<LookupResult<FullPost>>;
}

function notTracked(): NotTrackedError {
  return new NotTrackedError(
    'No tracked post has this ID or shortcode, or it is currently unavailable. This is not a claim that the post is absent from the platform.',
  );
}

/** Creates the post service. */
export function createPostService(deps: {
  reads: Pick<RecordReads, 'posts' | 'findPostIdByShortcode' | 'currentFollowers'>;
  lookups: Pick<RecordLookups, 'posts'>;
  history: HistoryReads;
  signer: MediaUrlSigner;
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

    async lookup(request) {
      const shortcodes = request.shortcodes ?? [];
      const ids = request.ids ?? [];
      // A shortcode entry is read as get post reads a shortcode; an ID entry must be an ID.
      const isShortcode = (entry: string) => postRef(entry)?.kind === 'alias';
      const found = await deps.lookups.posts(
        ids.filter((id) => isServiceId('post', id)),
        shortcodes.filter(isShortcode),
      );
      const asked = [
        ...shortcodes.map((entry) => ({ entry, record: isShortcode(entry) ? found.byAlias.get(entry) : undefined })),
        ...ids.map((entry) => ({ entry, record: found.byId.get(entry) })),
      ];
      const servable = asked.flatMap(({ record }) => (record && isServablePost(record) ? [record] : []));
      // As get post renders: the authors' current followers (one read for the whole list).
      const followers = await deps.reads.currentFollowers(snapshotAccountsOf(servable));
      return renderLookup(asked, isServablePost, (record) =>
        renderFullPost(withCurrentFollowers(record, followers), deps.signer),
      );
    },
  };
}
