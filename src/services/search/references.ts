import { accountRef, postRef } from '../../contract/ids.ts';
import { accountAvailability, isServablePost } from '../../domain/availability.ts';
import type { AccountRecord, PostRecord } from '../../domain/records.ts';
import type { RecordReads } from '../../engine/reads.ts';
import { ServiceUnavailableError, ValidationFailedError } from '../../internal/errors.ts';
import { decodeVector } from '../../text/vector-codec.ts';

/** The reference of a `similar_to` search: the record and the vector likeness is measured from. */
export interface Reference<R> {
  record: R;
  vector: number[];
}

/** Resolves `similar_to` references like the GETs resolve their IDs and aliases. */
export interface References {
  /** `post.similar_to`: a post ID or shortcode, servable, with a vector. */
  post(value: string): Promise<Reference<PostRecord>>;
  /** `account.similar_to`: an account ID, handle or `@handle`, servable, public, with a lookalike vector. */
  account(value: string): Promise<Reference<AccountRecord>>;
}

/**
 * A reference that names nothing the search can start from is a 422 naming the member (the
 * search exists; its request is what is wrong). One without a vector yet (just observed, or the
 * embedding model off) is a 503: the same request may succeed once the vector exists.
 */
export function createReferences(deps: {
  reads: Pick<RecordReads, 'posts' | 'accounts' | 'findPostIdByShortcode' | 'findAccountIdByHandle'>;
}): References {
  const pending = (what: string) =>
    new ServiceUnavailableError(
      `The ${what} named by similar_to has no vector to compare with yet (it was just observed, or the embedding model is off); retry shortly.`,
    );
  return {
    async post(value) {
      const ref = postRef(value);
      const id = ref?.kind === 'alias' ? await deps.reads.findPostIdByShortcode(ref.alias) : (ref?.id ?? null);
      const record = id === null ? null : ((await deps.reads.posts.get([id])).get(id) ?? null);
      if (!isServablePost(record))
        throw new ValidationFailedError(
          '/post/similar_to: no tracked post has this ID or shortcode, or it is currently unavailable',
        );
      if (!record.embedding) throw pending('post');
      if (!record.embedding.vector)
        throw new ValidationFailedError(
          '/post/similar_to: the text of this post is not one the model can read (mostly emoji or a script outside its vocabulary), so nothing is compared with it',
        );
      return { record, vector: decodeVector(record.embedding.vector) };
    },

    async account(value) {
      const ref = accountRef(value);
      const id = ref?.kind === 'alias' ? await deps.reads.findAccountIdByHandle(ref.alias) : (ref?.id ?? null);
      const record = id === null ? null : ((await deps.reads.accounts.get([id])).get(id) ?? null);
      if (accountAvailability(record) !== 'servable')
        throw new ValidationFailedError('/account/similar_to: no tracked, available account has this ID or handle');
      if (record!.profile!.v.is_private)
        throw new ValidationFailedError(
          '/account/similar_to: this account is private: its posts are not served, so nothing is compared with it',
        );
      if (!record!.lookalike) throw pending('account');
      return { record: record!, vector: decodeVector(record!.lookalike.vector) };
    },
  };
}
