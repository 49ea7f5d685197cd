import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Html } from './html.ts';
import type { PageContext } from './views.ts';

/** The dashboard's page context for a request. */
export type PageContextOf = (request: FastifyRequest, reply: FastifyReply) => PageContext;

/** Sends a rendered page. Pages can show secrets and are per-user: never stored by any cache. */
export function sendPage(reply: FastifyReply, page: Html, status = 200): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page.value);
}
