import { createHash } from 'node:crypto';
import { mediaEnrichmentOf, type AccountRecord, type PostRecord } from '../domain/records.ts';

/**
 * What gets embedded, per record. The model reads at most 256 word pieces (~180 English words)
 * and truncates the rest, so parts are ordered by how much of the post's meaning they carry per
 * word: what the creator wrote, then the enrichment's summary of the whole post (summary, hook,
 * key messages, offers, calls to action), then the long, noisy media text (transcripts, on-screen
 * text, visual descriptions), which mostly adds meaning to posts with a short caption.
 *
 * When a record has several parts, each is capped so one long caption cannot crowd out the
 * summary; a part alone has nothing to crowd out and fills the head. The text a creator wrote
 * past what the head holds is read as passages (postPassageTexts), and a query is near a post when
 * it is near its head or one of its passages. On SciFact's unenriched abstracts (bench/relevance.md,
 * "Long posts: the head the model reads, and passages"): capping a caption alone cost dense −0.022,
 * and passages took hybrid from 0.7192 to 0.7331.
 */
const PART_CHARS = 700;
/** About 256 word pieces of English; the tokenizer truncates exactly, this only bounds the work. */
const TOTAL_CHARS = 1600;

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return space > max * 0.6 ? cut.slice(0, space) : cut;
}

function present(parts: Array<string | null | undefined>): string[] {
  return parts.map((p) => (typeof p === 'string' ? p.trim() : '')).filter((p) => p.length > 0);
}

function join(parts: Array<string | null | undefined>): string {
  const kept = present(parts);
  const text = kept.length === 1 ? kept[0]! : kept.map((p) => clip(p, PART_CHARS)).join('\n');
  return clip(text, TOTAL_CHARS);
}

function summaries(items: ReadonlyArray<{ summary: string }> | null | undefined): string[] {
  return (items ?? []).map((item) => item.summary);
}

/** The text embedded for a post, its head (empty when it has nothing to embed). */
export function postEmbeddingText(record: PostRecord): string {
  const raw = record.raw?.v;
  if (!raw) return '';
  const e = record.enrichment;
  const media = raw.media.map((m) => mediaEnrichmentOf(record, m.platform_id));
  return join([
    raw.caption,
    e.content_summary?.v,
    e.hook?.v?.construction,
    summaries(e.key_messages?.v).join(' '),
    summaries(e.offers?.v).join(' '),
    summaries(e.calls_to_action?.v).join(' '),
    media
      .map((m) => m.transcript?.v)
      .filter(Boolean)
      .join(' '),
    media
      .flatMap((m) => m.visible_text?.v ?? [])
      .map((v) => v.text)
      .filter(Boolean)
      .join(' '),
    media
      .map((m) => m.visual_description?.v)
      .filter(Boolean)
      .join(' '),
  ]);
}

/**
 * Words per passage: 150 English words are ~200 word pieces, under the model's 256 with room for
 * the lead line. A property of the model, not of a collection (bench/relevance.md, "Long posts").
 */
const PASSAGE_WORDS = 150;
/** Passages overlap by half, so a sentence cut by one window lies whole in the next. */
const PASSAGE_STRIDE = 75;
/**
 * At most this many passages per post (its caption's first ~750 words). Each passage costs the
 * intake one more embedding and the index one more vector; a caption may hold 30,000 characters
 * (~5,000 words), which would otherwise cost ~65 of each.
 */
export const MAX_PASSAGES = 8;
/** A caption's first line heads every passage when it is this short: a title or a hook, not a paragraph. */
const LEAD_CHARS = 200;

/**
 * Passages of a text past its head: windows of PASSAGE_WORDS words every PASSAGE_STRIDE words
 * from the first stride on (the head reads the start), each after the lead line so that a window
 * keeps what the text is about; none for a text of one window or less (MaxP: Dai & Callan, SIGIR
 * 2019).
 */
export function passagesOf(lead: string, text: string): string[] {
  const words = text.split(/\s+/).filter(Boolean);
  const out: string[] = [];
  for (
    let start = PASSAGE_STRIDE;
    start + PASSAGE_WORDS - PASSAGE_STRIDE < words.length && out.length < MAX_PASSAGES;
    start += PASSAGE_STRIDE
  ) {
    const window = words.slice(start, start + PASSAGE_WORDS).join(' ');
    out.push(lead.length > 0 ? `${lead}\n\n${window}` : window);
  }
  return out;
}

/**
 * The texts embedded as a post's passages: its caption, read in windows past the head; the
 * caption's first line leads each when it is short and more follows it. Only the caption: what an
 * enrichment adds of a long video (transcripts, on-screen text, visual descriptions) is summarized
 * in the head, and read as passages it cost the social set's intent queries 0.019 nDCG@10 and drew
 * more neighbours from other niches (bench/relevance.md, "Passages in the service").
 */
export function postPassageTexts(record: PostRecord): string[] {
  const caption = record.raw?.v.caption.trim() ?? '';
  const lineEnd = caption.indexOf('\n');
  const lead = lineEnd > 0 && lineEnd <= LEAD_CHARS ? caption.slice(0, lineEnd).trim() : '';
  return passagesOf(lead, lead.length > 0 ? caption.slice(lineEnd + 1) : caption);
}

/** The text embedded for an account: who it is, then what it publishes. */
export function accountEmbeddingText(record: AccountRecord): string {
  const profile = record.profile?.v;
  if (!profile) return '';
  return join([
    [profile.display_name, profile.handle ? `@${profile.handle}` : null, profile.category_label]
      .filter(Boolean)
      .join(' · '),
    profile.biography,
    (record.niches?.v ?? []).join(', '),
    record.publishing_summary?.v,
  ]);
}

/** Identifies an embedded text: a record whose text hash changed needs a new vector. */
export function embeddingTextHash(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/**
 * Identifies a head and its passages together. Without passages it is the head's own hash, so a
 * post that has none keeps the vector it had before passages existed.
 */
export function embeddingTextsHash(head: string, passages: readonly string[]): string {
  return embeddingTextHash(passages.length === 0 ? head : [head, ...passages].join('\u0000'));
}
