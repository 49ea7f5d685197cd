/**
 * The entries of the alert store's `pending` hash (alert-store.ts): what writers leave for the
 * matching pass (match-pass.ts), as plain changes or as the matches worked out at the write.
 */

/** The first change of a post since the last pass: when, and the version it replaced (null: new). */
export interface PendingChange {
  at: string;
  /** The post record before the change, JSON (null: the post was new). */
  before: string | null;
}

/**
 * A post's saved-search matches worked out at its write (write-matching.ts), the version it
 * replaced compared there too: the pass only checks the pairs against what was seen and records
 * the events, without reading or matching the post again.
 */
export interface MatchedChange {
  post: string;
  at: string;
  /** Saved searches the post matches after the write and did not before it: events, unless seen. */
  news: string[];
  /** Saved searches it matched before the write as well: marked seen, never events. */
  known: string[];
  /**
   * The post's summary (JSON) as of the write, when `news` is not empty: stored with the change,
   * under `summary:{post}:{at}`, which its events refer to.
   */
  summary: string | null;
}

/** A matched change as a pass claims it: its summary, when it has news, is stored at `at`. */
export type ClaimedMatch = Omit<MatchedChange, 'summary'>;

/** What a pass claims: plain changes by post id (matched by the pass), and changes matched at their write. */
export interface ClaimedChanges {
  plain: Map<string, PendingChange>;
  matched: ClaimedMatch[];
}

/** An event to record: its post and its time (its summary is stored at that time). */
export interface EventRef {
  post: string;
  at: string;
}

/** A matched change as a `pending` value (its summary is stored under its own key, at the change's time). */
export function encodeMatched(change: MatchedChange): string {
  return JSON.stringify({ at: change.at, news: change.news, known: change.known });
}

export function decodeMatched(field: string, value: string): ClaimedMatch {
  const change = JSON.parse(value) as Omit<ClaimedMatch, 'post'>;
  return { post: field.slice(0, field.indexOf('\u0000')), ...change };
}
