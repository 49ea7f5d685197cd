import type { FullPost } from '../../contract/api.ts';
import { hasIdPrefix, isServiceId } from '../../contract/ids.ts';
import type { DeliverySigner } from '../../delivery/signer.ts';
import type { RecordReads } from '../../engine/reads.ts';
import { NotTrackedError } from '../../internal/errors.ts';
import { isServablePost } from '../../domain/availability.ts';
import { renderFullPost } from '../../render/post.ts';

const SHORTCODE = /^[A-Za-z0-9_-]{1,100}$/;

/** Reads posts (spec 4.3). */
export interface PostService {
  /** The full post by service ID or platform shortcode. */
  get(idOrShortcode: string): Promise<FullPost>;
}

function notTracked(): NotTrackedError {
  return new NotTrackedError(
    'No tracked post has this ID or shortcode, or it is currently unavailable. This is not a claim that the post is absent from the platform.',
  );
}

/** Creates the post service. */
export function createPostService(deps: {
  reads: Pick<RecordReads, 'posts' | 'findPostIdByShortcode'>;
  signer: DeliverySigner;
}): PostService {
  return {
    async get(idOrShortcode) {
      let id: string | null;
      if (hasIdPrefix('post', idOrShortcode)) {
        id = isServiceId('post', idOrShortcode) ? idOrShortcode : null;
      } else {
        id = SHORTCODE.test(idOrShortcode) ? await deps.reads.findPostIdByShortcode(idOrShortcode) : null;
      }
      if (id === null) throw notTracked();
      const record = (await deps.reads.posts.get([id])).get(id) ?? null;
      if (!isServablePost(record)) throw notTracked();
      return renderFullPost(record, deps.signer);
    },
  };
}
