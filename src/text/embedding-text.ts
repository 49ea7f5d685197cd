import { createHash } from 'node:crypto';
import type { AccountRecord, PostRecord } from '../domain/records.ts';

/**
 * What gets embedded, per record. The model reads at most 256 word pieces (~180 English words)
 * and truncates the rest, so parts are ordered by how much of the post's meaning they carry per
 * word: what the creator wrote, then the enrichment's summary of the whole post (summary, hook,
 * key messages, offers, calls to action), then the long, noisy media text (transcripts, on-screen
 * text, visual descriptions), which mostly adds meaning to posts with a short caption.
 *
 * Each part is capped so one long caption cannot crowd out the summary: posts get one vector of
 * their head, not chunks (a chunked post would need nested kNN with max-sim). What that costs on
 * SciFact's unenriched abstracts (bench/relevance.md, "Long posts: the head the model reads, and
 * passages"): the cap, dense −0.022 and hybrid −0.002; passages would add hybrid +0.010–0.013.
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

function join(parts: Array<string | null | undefined>): string {
  const text = parts
    .map((p) => (typeof p === 'string' ? p.trim() : ''))
    .filter((p) => p.length > 0)
    .map((p) => clip(p, PART_CHARS))
    .join('\n');
  return clip(text, TOTAL_CHARS);
}

function summaries(items: ReadonlyArray<{ summary: string }> | null | undefined): string[] {
  return (items ?? []).map((item) => item.summary);
}

/** The text embedded for a post (empty when it has nothing to embed). */
export function postEmbeddingText(record: PostRecord): string {
  const raw = record.raw?.v;
  if (!raw) return '';
  const e = record.enrichment;
  const media = raw.media.map((m) => record.media_enrichment[m.platform_id] ?? {});
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
