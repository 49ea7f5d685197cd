import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { RouteNotFoundError } from '../../internal/errors.ts';
import { problemEntry, PROBLEM_CATALOG, type ProblemEntry } from '../../internal/problem-catalog.ts';

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Inline code in the catalog's descriptions (`like this`) as <code>. */
const withCode = (text: string) => escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2em}dt{font-weight:600}</style>
</head><body>${body}</body></html>`;
}

function entryHtml(entry: ProblemEntry): string {
  return page(
    `${entry.name} (${entry.status})`,
    `<p><a href="./">All problems</a></p><h1>${escape(entry.title)}</h1>
<dl><dt>Problem name</dt><dd><code>${escape(entry.name)}</code></dd><dt>HTTP status</dt><dd>${entry.status}</dd>
<dt>Retry the same request?</dt><dd>${entry.retryable ? 'It may succeed later.' : 'No: change the request first.'}</dd></dl>
<p>${withCode(entry.description)}</p>
<p>Every problem object carries <code>type</code> (this page's URL), <code>status</code>, <code>request_id</code> (quote it when reporting an issue) and <code>detail</code>.</p>`,
  );
}

/** True when the client prefers JSON to HTML (an API client, not a browser). */
function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf('text/html');
  const json = accept.search(/application\/(problem\+)?json/);
  return json >= 0 && (html < 0 || json < html);
}

/**
 * The pages behind each problem `type` URL (`{base_url}/problems/<name>`): HTML for a person
 * following the link, JSON (`Accept: application/json`) for a program. No key needed.
 */
export const problemRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get('/problems', { schema: { hide: true } }, async (request, reply) => {
    if (wantsJson(request.headers.accept)) return reply.send({ problems: PROBLEM_CATALOG });
    const items = PROBLEM_CATALOG.map(
      (p) => `<li><a href="problems/${p.name}"><code>${p.name}</code></a> (${p.status}): ${escape(p.title)}</li>`,
    );
    return reply
      .type('text/html; charset=utf-8')
      .send(page('Problems', `<h1>Problems this API answers</h1><ul>${items.join('')}</ul>`));
  });

  app.get(
    '/problems/:name',
    { schema: { hide: true, params: z.strictObject({ name: z.string().max(100) }) } },
    async (request, reply) => {
      const { name } = request.params;
      const entry = problemEntry(name);
      if (!entry)
        throw new RouteNotFoundError(`There is no problem named ${JSON.stringify(name)}; /problems lists them.`);
      reply.header('cache-control', 'public, max-age=3600');
      if (wantsJson(request.headers.accept)) return reply.send(entry);
      return reply.type('text/html; charset=utf-8').send(entryHtml(entry));
    },
  );
};
