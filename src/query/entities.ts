/**
 * Exact entities in `post.query` (docs/api-decisions.md, "Entities in the query"):
 * hashtags (`#tag`, or a one-word query, which is also looked up as a tag), handles (`@name`) and
 * quoted phrases (`"…"` or `“…”`). Each is matched on its own field; a post carrying more of them
 * ranks above one that only resembles them. The words stay in the query's free text too, so they
 * still count as ordinary evidence.
 */

/** One exact entity of a query. */
export type QueryEntity =
  { kind: 'hashtag'; value: string } | { kind: 'handle'; value: string } | { kind: 'phrase'; value: string };

/** At most this many entities count per query; more are ordinary words (bounds the engine query). */
export const MAX_QUERY_ENTITIES = 8;

// As in hashtagsFromCaption (src/domain/merge.ts): a tag starts after a non-word character.
const HASHTAG = /(?:^|[^\p{L}\p{M}\p{N}_&])#([\p{L}\p{M}\p{N}_]+)/gu;
// Handles: letters, digits, underscores and inner periods (a trailing period ends the sentence).
const HANDLE = /(?:^|[^\p{L}\p{M}\p{N}_.@])@([\p{L}\p{M}\p{N}_]+(?:\.[\p{L}\p{M}\p{N}_]+)*)/gu;
const PHRASE = /["“”]([^"“”]+)["“”]/gu;
/** A one-word query: letters, marks, digits and underscores only. */
const BARE_TAG = /^[\p{L}\p{M}\p{N}_]+$/u;

/** Whether a query is one bare word (letters, digits, underscores), which is also looked up as a tag. */
export function isBareWord(query: string): boolean {
  return BARE_TAG.test(query.trim());
}

/**
 * The exact entities of a query, in order of appearance per kind (hashtags, handles, phrases),
 * lowercased (tags and handles match case-insensitively), deduplicated, at most
 * {@link MAX_QUERY_ENTITIES}. A query that is one bare word is that hashtag.
 */
export function queryEntities(query: string): QueryEntity[] {
  const out: QueryEntity[] = [];
  const seen = new Set<string>();
  const add = (kind: QueryEntity['kind'], raw: string) => {
    const value = kind === 'phrase' ? raw.trim().replace(/\s+/g, ' ') : raw.toLowerCase();
    const key = `${kind}:${value.toLowerCase()}`;
    if (value.length === 0 || seen.has(key) || out.length >= MAX_QUERY_ENTITIES) return;
    seen.add(key);
    out.push({ kind, value });
  };
  const trimmed = query.trim();
  if (BARE_TAG.test(trimmed)) add('hashtag', trimmed);
  for (const m of trimmed.matchAll(HASHTAG)) add('hashtag', m[1]!);
  for (const m of trimmed.matchAll(HANDLE)) add('handle', m[1]!);
  for (const m of trimmed.matchAll(PHRASE)) if (/[\p{L}\p{N}]/u.test(m[1]!)) add('phrase', m[1]!);
  return out;
}
