import { accountAvailability, isServablePost } from '../../domain/availability.ts';
import { hasVector, type AccountRecord, type PostRecord } from '../../domain/records.ts';
import type { RecordReads } from '../../engine/reads.ts';
import { ServiceUnavailableError, ValidationFailedError } from '../../internal/errors.ts';
import type { SearchReference } from '../../query/search-codec.ts';
import { UNKNOWN_REFERENCE } from '../../query/search-request.ts';
import { postEmbeddingText } from '../../text/embedding-text.ts';
import { decodeVector } from '../../text/vector-codec.ts';

/** The reference of a `similar_to` search: the record and the vector similarity is measured from. */
export interface Reference<R> {
  record: R;
  vector: number[];
}

/** Resolves `similar_to` references, as parsed by the request schema, like the GETs resolve their IDs and aliases. */
export interface References {
  /** `post.similar_to`: a post ID or shortcode, servable, with a vector. */
  post(reference: SearchReference): Promise<Reference<PostRecord>>;
  /** `account.similar_to`: an account ID or handle, servable, public, with a lookalike vector. */
  account(reference: SearchReference): Promise<Reference<AccountRecord>>;
}

/** Where the embedding model stands, as far as references care (src/embedding's states). */
export type ModelState = 'off' | 'loading' | 'ready' | 'failed';

/**
 * A reference that names nothing the search can start from is a 422 naming the member (the
 * search exists; its request is what is wrong), and so is one that can never have a vector: a
 * post with no text to embed, one the model cannot read, an account neither whose text nor whose
 * posts the model can read, any reference without a vector while the service runs without a
 * model. A 503 only for what clears by itself: a vector not written yet (just observed, queued),
 * the model still loading, or failed (the operator's to fix; `/readyz` says so too).
 */
export function createReferences(deps: {
  reads: Pick<RecordReads, 'posts' | 'accounts' | 'postVectors' | 'findPostIdByShortcode' | 'findAccountIdByHandle'>;
  /** The embedding model's state (EMBEDDINGS, MODEL_DIR): whether vectors are being made at all. */
  model: () => ModelState;
}): References {
  /** Why `what` has no vector, when it never will; else the 503 of one on its way. */
  function noVector(member: string, what: string, never: string | null): Error {
    if (deps.model() === 'off')
      return new ValidationFailedError(
        `${member}: this ${what} has no vector, and this service runs without an embedding model (BM25 only), so none will be made`,
      );
    if (never !== null) return new ValidationFailedError(`${member}: ${never}`);
    if (deps.model() === 'failed')
      return new ServiceUnavailableError(
        `The ${what} named by similar_to has no vector yet, and the embedding model failed to load; the operator must fix it.`,
      );
    return new ServiceUnavailableError(
      `The ${what} named by similar_to has no vector to compare with yet (it was just observed, or the model is loading); retry shortly.`,
    );
  }
  return {
    async post(ref) {
      const id = ref.kind === 'alias' ? await deps.reads.findPostIdByShortcode(ref.alias) : ref.id;
      const record = id === null ? null : ((await deps.reads.posts.get([id])).get(id) ?? null);
      if (!isServablePost(record)) throw new ValidationFailedError(`/post/similar_to: ${UNKNOWN_REFERENCE.post}`);
      // The vector from its vector document; the record says why there is none.
      const vector = hasVector(record.embedding)
        ? (await deps.reads.postVectors([record.id])).get(record.id)
        : undefined;
      if (vector) return { record, vector };
      throw noVector(
        '/post/similar_to',
        'post',
        record.embedding
          ? hasVector(record.embedding)
            ? null // written, not visible yet (the next refresh shows it)
            : 'the text of this post is not one the model can read (mostly emoji or a script outside its vocabulary), so nothing is compared with it'
          : postEmbeddingText(record) === ''
            ? 'this post has no text to compare by (no caption, transcript, on-screen text or enrichment), so it never gets a vector'
            : null,
      );
    },

    async account(ref) {
      const id = ref.kind === 'alias' ? await deps.reads.findAccountIdByHandle(ref.alias) : ref.id;
      const record = id === null ? null : ((await deps.reads.accounts.get([id])).get(id) ?? null);
      if (accountAvailability(record) !== 'servable')
        throw new ValidationFailedError(`/account/similar_to: ${UNKNOWN_REFERENCE.account}`);
      if (record!.profile!.v.is_private)
        throw new ValidationFailedError(
          '/account/similar_to: this account is private: its posts are not served, so nothing is compared with it',
        );
      if (record!.lookalike) return { record: record!, vector: decodeVector(record!.lookalike.vector) };
      // Its text embedded and its lookalike computed after it (record-embeddings.ts) yet none:
      // neither its text nor any post of it has a vector.
      throw noVector(
        '/account/similar_to',
        'account',
        record!.embedding && !record!.embedding.vector
          ? 'neither the text of this account nor any of its posts is one the model can read, so nothing is compared with it'
          : null,
      );
    },
  };
}
