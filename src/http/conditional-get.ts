import type { FastifyReply, FastifyRequest, onSendAsyncHookHandler } from 'fastify';
import { createHash } from 'node:crypto';
import { z } from 'zod';

/** `If-None-Match`: the ETag of a copy the client holds. */
export const conditionalHeaders = z.object({
  'if-none-match': z
    .string()
    .max(2048)
    .optional()
    .meta({ description: 'An ETag from an earlier response: 304 Not Modified when it still matches.' }),
});

/** 304: no body; the copy the client holds is current. */
export const notModified = z.null().meta({ description: 'Not modified: the copy with this ETag is current.' });

/** A strong entity tag of `text`. */
function tagOf(text: string): string {
  return `"${createHash('sha256').update(text).digest('base64url').slice(0, 32)}"`;
}

/**
 * The tag of an answer whose body also carries its request id (post counts): the hash of the rest,
 * set by the handler before sending, so that two identical answers share it.
 */
export function answerTag(answer: unknown): string {
  return tagOf(JSON.stringify(answer));
}

/**
 * Conditional GETs for the two resource reads (get post, get account): a strong `ETag` over the
 * exact bytes, `If-None-Match` answered 304 with no body, and `Cache-Control: private, no-cache`
 * (responses depend on the caller's key and embed signed URLs that expire: a shared cache must not
 * keep them, and a private one revalidates, which the ETag makes cheap). A representation changes
 * when the record changes or when its delivery URLs are re-signed (every hour).
 *
 * Post counts are a read sent as a POST (its question does not fit a URL) and revalidate the same
 * way; their tag is the handler's ({@link answerTag}), since their body carries the request id.
 *
 * A strong validator belongs to one representation, and a compressed body is another one (RFC
 * 9110 §8.8.3): {@link tagContentCoding} runs after compression and gives it its own tag
 * (`"<hash>-br"`), as Apache does. Any coding's tag revalidates: they stand for the same content.
 */
export async function conditionalGet(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (reply.statusCode !== 200 || typeof payload !== 'string') return payload;
  const preset = reply.getHeader('etag');
  const etag = typeof preset === 'string' ? preset : tagOf(payload);
  reply.header('etag', etag).header('cache-control', 'private, no-cache');
  const held = matching(request.headers['if-none-match'], etag);
  if (held === null) return payload;
  // The 304 names the representation the client holds.
  reply.code(304).header('etag', held);
  return '';
}

/** An `onSend` hook to run after compression: a compressed body's ETag names its coding. */
export const tagContentCoding: onSendAsyncHookHandler = async (_request, reply, payload) => {
  const coding = reply.getHeader('content-encoding');
  const etag = reply.getHeader('etag');
  if (reply.statusCode === 200 && typeof coding === 'string' && typeof etag === 'string' && etag.endsWith('"')) {
    reply.header('etag', `${etag.slice(0, -1)}-${coding}"`);
  }
  return payload;
};

const CODING_SUFFIX = /-(?:br|gzip|deflate)"$/;

/**
 * RFC 9110 §13.1.2: `*`, or a list of entity tags compared weakly (a `W/` prefix is ignored), a
 * coding suffix ignored too. Returns the tag that matched (`etag` for `*`), or null.
 */
function matching(header: string | undefined, etag: string): string | null {
  if (!header) return null;
  if (header.trim() === '*') return etag;
  for (const raw of header.split(',')) {
    const tag = raw.trim().replace(/^W\//, '');
    if (tag.replace(CODING_SUFFIX, '"') === etag) return tag;
  }
  return null;
}
