/**
 * What it costs to serialize and parse one page of post summaries: JSON.stringify (what the API
 * does in production) against a schema-compiled serializer (fast-json-stringify from the response
 * contract's JSON Schema), and the client's JSON.parse.
 *
 *   INDEX_PREFIX=bench REDIS_PREFIX=bench npx tsx bench/search/serialize-page.ts
 */
import fastJson from 'fast-json-stringify';
import { z } from 'zod';
import { postSearchResponseSchema } from '../../src/contract/api.ts';
import { parsePostSearchRequest } from '../../src/query/search-request.ts';
import { cli } from '../lib/args.ts';
import { startInProcessApi } from '../lib/in-process-api.ts';

cli({});
const node = await startInProcessApi({ name: 'serialize bench', listen: false, scopes: [] });
const api = node.api!;
const page = await api.postSearch.search(
  parsePostSearchRequest({
    post: { filters: { format: { in: ['reel'] }, views: { gte: 1000 } } },
    sort: { by: 'views', order: 'desc' },
    limit: 20,
  }),
);
const body = { request_id: 'req_x', ...page };
const schema = z.toJSONSchema(postSearchResponseSchema, { target: 'draft-7', io: 'output', unrepresentable: 'any' });
const compiled = fastJson(schema as never);
const text = JSON.stringify(body);
if (JSON.stringify(JSON.parse(compiled(body))) !== JSON.stringify(JSON.parse(text)))
  console.warn('fast-json-stringify output differs');
const time = (fn: () => unknown, n = 2000) => {
  for (let i = 0; i < 200; i++) fn();
  const t = performance.now();
  for (let i = 0; i < n; i++) fn();
  return ((performance.now() - t) / n).toFixed(3);
};
console.log({
  bytes: text.length,
  stringify_ms: time(() => JSON.stringify(body)),
  fast_json_ms: time(() => compiled(body)),
  parse_ms: time(() => JSON.parse(text)),
});
await node.close();
