import type { PostSummary } from '../contract/api.ts';
import type { DeliverySigner } from '../delivery/signer.ts';
import type { Engine, SearchState } from '../engine/engine.ts';
import { ValidationFailedError } from '../errors.ts';
import type { CursorCodec } from '../query/cursor-codec.ts';
import { parsePostSearchRequest, type PostSearch } from '../query/search-request.ts';
import { isServablePost, renderPostSummary } from '../render/post.ts';

/** A page of search results as the API returns it (without `request_id`, added by the route). */
export interface SearchResult<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

interface PostCursor {
  v: 1;
  kind: 'posts';
  search: PostSearch;
  limit: number;
  state: SearchState;
}

/** Search posts (spec 4.1). */
export interface PostSearchService {
  search(body: unknown): Promise<SearchResult<PostSummary>>;
}

/** Creates the post search service. */
export function createPostSearchService(deps: {
  engine: Pick<Engine, 'searchPosts'>;
  cursors: CursorCodec;
  signer: DeliverySigner;
  cursorTtlSeconds: number;
}): PostSearchService {
  return {
    async search(body) {
      const request = parsePostSearchRequest(body);
      let search: PostSearch;
      let limit: number;
      let originalLimit: number;
      let state: SearchState | null = null;
      if (request.kind === 'initial') {
        ({ search, limit } = request);
        originalLimit = limit;
      } else {
        const cursor = deps.cursors.decode(request.cursor) as unknown as PostCursor;
        if (cursor.v !== 1 || cursor.kind !== 'posts') {
          throw new ValidationFailedError('/cursor: this cursor belongs to another operation');
        }
        if (request.limit !== null && request.limit > cursor.limit) {
          throw new ValidationFailedError(`/limit: a continuation may not raise the limit above the original ${cursor.limit}`);
        }
        ({ search, state } = cursor);
        originalLimit = cursor.limit;
        limit = request.limit ?? cursor.limit;
      }
      const page = await deps.engine.searchPosts(search, { limit, state, keepAliveSeconds: deps.cursorTtlSeconds });
      const payload: PostCursor | null = page.state
        ? { v: 1, kind: 'posts', search, limit: originalLimit, state: page.state }
        : null;
      return {
        // The index only holds servable posts under `servable: true`; the check guards rendering.
        data: page.records.filter(isServablePost).map((r) => renderPostSummary(r, deps.signer)),
        has_more: page.hasMore,
        next_cursor: payload ? deps.cursors.encode(payload) : null,
      };
    },
  };
}
