import type { FullPost } from '../../contract/api.ts';
import type { PostMatch, Snippet } from '../../contract/search-extras.ts';
import type { MediaUrlSigner } from '../../media/url-signer.ts';
import {
  HIGHLIGHT_END,
  HIGHLIGHT_START,
  type MatchedTextField,
  type MatchHighlighter,
  type PostHighlights,
} from '../../engine/matches.ts';
import type { Retrieval } from '../../engine/search.ts';
import { renderFullPost } from '../../render/post.ts';
import { entriesOf } from '../../internal/typed-objects.ts';

/** A piece of API text: where it is in the full post (a JSON-path-like name) and the text. */
interface TextPart {
  field: string;
  text: string;
}

/**
 * The API fields each indexed text field is made of, in the projection's order: the engine's
 * fragments are cut from the joined text, and each snippet is reported on the API field it is in.
 */
export function textParts(post: FullPost): Record<MatchedTextField, TextPart[]> {
  const part = (field: string, text: string | null | undefined): TextPart[] => (text ? [{ field, text }] : []);
  const each = <T>(items: T[] | null, f: (item: T, i: number) => TextPart[]) => (items ?? []).flatMap(f);
  return {
    caption: part('caption', post.caption),
    content_text: [
      ...part('content_summary', post.content_summary),
      ...part('hook.construction', post.hook?.construction),
      ...each(post.key_messages, (k, i) => part(`key_messages[${i}].summary`, k.summary)),
      ...each(post.proofs, (p, i) => part(`proofs[${i}].summary`, p.summary)),
      ...each(post.offers, (o, i) => [
        ...part(`offers[${i}].summary`, o.summary),
        ...o.stated_terms.flatMap((t, j) => part(`offers[${i}].stated_terms[${j}]`, t)),
      ]),
      ...each(post.calls_to_action, (c, i) => part(`calls_to_action[${i}].summary`, c.summary)),
      ...part('narrative_structure.description', post.narrative_structure?.description),
    ],
    transcript_text: post.media.flatMap((m, i) =>
      m.type === 'video' ? part(`media[${i}].transcript`, m.transcript) : [],
    ),
    visible_text: post.media.flatMap((m, i) =>
      each(m.visible_text, (v, j) => part(`media[${i}].visible_text[${j}].text`, v.text)),
    ),
    visual_text: post.media.flatMap((m, i) => part(`media[${i}].visual_description`, m.visual_description)),
  };
}

/**
 * A tagged piece of a fragment as a snippet: the text without the tags, and the highlighted spans
 * in Unicode code points (so an emoji counts one, and no span can split one), end exclusive.
 */
export function toSnippet(tagged: string): Snippet {
  let text = '';
  let position = 0;
  let start = -1;
  const highlights: Snippet['highlights'] = [];
  for (const char of tagged) {
    if (char === HIGHLIGHT_START) start = position;
    else if (char === HIGHLIGHT_END) {
      if (start >= 0) highlights.push({ start, end: position });
      start = -1;
    } else {
      text += char;
      position++;
    }
  }
  return { text, highlights };
}

/**
 * The snippets of one indexed field, on the API fields they come from. The joined text separates
 * its parts with line breaks, so a fragment is split at them; a piece is kept only when it has a
 * highlight and is verbatim in one of the field's parts (which also drops the rare fragment
 * spanning two parts joined on one line).
 */
function snippetsOf(fragments: string[], parts: TextPart[]): Map<string, Snippet[]> {
  const out = new Map<string, Snippet[]>();
  for (const fragment of fragments) {
    for (const piece of fragment.split('\n')) {
      if (!piece.includes(HIGHLIGHT_START)) continue;
      const snippet = toSnippet(piece);
      const home = parts.find((p) => p.text.includes(snippet.text));
      if (!home || snippet.highlights.length === 0) continue;
      out.set(home.field, [...(out.get(home.field) ?? []), snippet]);
    }
  }
  return out;
}

/** One post's evidence: its snippets, in the order of the API fields. */
export function postMatch(
  post: FullPost,
  fragments: Partial<Record<MatchedTextField, string[]>>,
  retrievedBy: Retrieval | null,
): PostMatch {
  const parts = textParts(post);
  const fields: PostMatch['fields'] = [];
  for (const [indexed, list] of entriesOf(parts)) {
    const found = snippetsOf(fragments[indexed] ?? [], list);
    for (const part of list) {
      const snippets = found.get(part.field);
      if (snippets) fields.push({ field: part.field, snippets });
    }
  }
  return { id: post.id, retrieved_by: retrievedBy, fields };
}

/**
 * Match evidence of a page (`"include": ["matches"]`): per returned post, in `data` order, which
 * side of the ranking retrieved it and the highlighted snippets of the fields that matched.
 * Snippets are made from the record the highlighter read, rendered as the API renders it.
 */
export function createMatchEvidence(deps: { highlighter: MatchHighlighter; signer: MediaUrlSigner }) {
  return async (
    query: string | null,
    ids: string[],
    retrieval: (id: string) => Retrieval | null,
  ): Promise<PostMatch[]> => {
    const highlights =
      query === null ? new Map<string, PostHighlights>() : await deps.highlighter.highlightPosts(query, ids);
    return ids.map((id) => {
      const found = highlights.get(id);
      if (!found) return { id, retrieved_by: retrieval(id), fields: [] };
      return postMatch(renderFullPost(found.record, deps.signer), found.fragments, retrieval(id));
    });
  };
}

/** Match evidence of a page; see {@link createMatchEvidence}. */
export type MatchEvidence = ReturnType<typeof createMatchEvidence>;
