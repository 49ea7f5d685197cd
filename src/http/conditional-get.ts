import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';

/**
 * Conditional GETs for the two resource reads (get post, get account): a strong `ETag` over the
 * exact bytes sent, `If-None-Match` answered 304 with no body, and `Cache-Control: private,
 * no-cache` (responses depend on the caller's key and embed signed URLs that expire: a shared cache
 * must not keep them, and a private one revalidates, which the ETag makes cheap). A representation
 * changes when the record changes or when its delivery URLs are re-signed (every hour).
 */
export async function conditionalGet(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (reply.statusCode !== 200 || typeof payload !== 'string') return payload;
  const etag = `"${createHash('sha256').update(payload).digest('base64url').slice(0, 32)}"`;
  reply.header('etag', etag).header('cache-control', 'private, no-cache');
  if (!matches(request.headers['if-none-match'], etag)) return payload;
  reply.code(304);
  return '';
}

/** RFC 9110 §13.1.2: `*`, or a list of entity tags compared weakly (a `W/` prefix is ignored). */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
