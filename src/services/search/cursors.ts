import { z } from 'zod';
import {
  accountSearchStateSchema,
  searchStateSchema,
  type AccountSearchState,
  type SearchState,
} from '../../engine/search.ts';
import { ExpiredCursorError, InternalError, ValidationFailedError } from '../../internal/errors.ts';
import type { CursorCodec } from '../../query/cursor-codec.ts';
import {
  accountSearchSchema,
  MAX_CURSOR_LENGTH,
  postSearchSchema,
  SEARCH_VERSION,
  type AccountSearch,
  type PostSearch,
} from '../../query/search-codec.ts';

const limit = z.int().min(1);
const exp = z.number();

/**
 * What a cursor carries: the version of the search codec (search-codec.ts), the operation, its
 * normalized search, the original limit and where the engine stands.
 */
const cursorSchema = z.discriminatedUnion('op', [
  z.strictObject({
    v: z.literal(SEARCH_VERSION),
    op: z.literal('post'),
    search: postSearchSchema,
    limit,
    state: searchStateSchema,
    exp,
  }),
  z.strictObject({
    v: z.literal(SEARCH_VERSION),
    op: z.literal('account'),
    search: accountSearchSchema,
    limit,
    state: accountSearchStateSchema,
    exp,
  }),
]);

/** A decoded cursor: the normalized request, the original limit, and where the engine stands. */
export interface Cursor<S, St> {
  search: S;
  limit: number;
  state: St;
}

const OUTDATED =
  'This cursor was issued by an earlier version of the service; start the search again from the first page.';

/** Typed cursors of one operation, over the signing codec. */
export interface OperationCursors<S, St> {
  encode(cursor: Cursor<S, St>): string;
  /** 422 when tampered or of another operation, 410 when expired or of another version. */
  decode(cursor: string): Cursor<S, St>;
}

/** Post search cursors. */
export type PostCursors = OperationCursors<PostSearch, SearchState>;
/** Account search cursors. */
export type AccountCursors = OperationCursors<AccountSearch, AccountSearchState>;

/**
 * Signs a payload. The request schemas bound a search so that its cursors always fit what a
 * continuation accepts (MAX_SEARCH_JSON_LENGTH); this guards that promise.
 */
function encodeBounded(codec: CursorCodec, payload: object): string {
  const cursor = codec.encode(payload);
  if (cursor.length > MAX_CURSOR_LENGTH)
    throw new InternalError(
      `a cursor of ${cursor.length} characters exceeds the ${MAX_CURSOR_LENGTH} a continuation accepts`,
    );
  return cursor;
}

function decodeAny(codec: CursorCodec, cursor: string): z.infer<typeof cursorSchema> {
  const payload = codec.decode(cursor);
  if (payload.v !== SEARCH_VERSION) throw new ExpiredCursorError(OUTDATED);
  const parsed = cursorSchema.safeParse(payload);
  // Signed by this deployment but of a shape this version does not know: an older release.
  if (!parsed.success) throw new ExpiredCursorError(OUTDATED);
  return parsed.data;
}

const OTHER_OPERATION = '/cursor: this cursor belongs to another operation';

/**
 * Cursors of one operation: `pick` returns the decoded cursor when the payload is of this
 * operation, else null (then 422: the cursor was issued by the other search).
 */
function operationCursors<S, St>(
  codec: CursorCodec,
  op: z.infer<typeof cursorSchema>['op'],
  pick: (payload: z.infer<typeof cursorSchema>) => Cursor<S, St> | null,
): OperationCursors<S, St> {
  return {
    encode: ({ search, limit, state }) => encodeBounded(codec, { v: SEARCH_VERSION, op, search, limit, state }),
    decode(cursor) {
      const picked = pick(decodeAny(codec, cursor));
      if (!picked) throw new ValidationFailedError(OTHER_OPERATION);
      return picked;
    },
  };
}

/** The cursors of post search. */
export function postCursors(codec: CursorCodec): PostCursors {
  return operationCursors(codec, 'post', (p) =>
    p.op === 'post' ? { search: p.search, limit: p.limit, state: p.state } : null,
  );
}

/** The cursors of account search. */
export function accountCursors(codec: CursorCodec): AccountCursors {
  return operationCursors(codec, 'account', (p) =>
    p.op === 'account' ? { search: p.search, limit: p.limit, state: p.state } : null,
  );
}
