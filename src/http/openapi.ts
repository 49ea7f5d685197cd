import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { OBSERVATION_SCHEMA_IDS } from '../contract/observations.ts';
import { problemsWithStatus } from '../internal/problem-catalog.ts';

/** Where the document and the browsable reference live. */
export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/** The intake route, whose body the zod schema cannot describe (a parsed container). */
const INTAKE_PATH = '/internal/v1/social/observations';

/** Request examples shown in /docs (JSON Schema `examples`), by operation. */
const BODY_EXAMPLES: Record<string, unknown[]> = {
  searchPosts: [
    {
      post: {
        query: 'night-time skincare routine with a discount code',
        filters: { posted_at: { gte: '2026-01-01T00:00:00Z' }, offer_types: { contains_any: ['discount'] } },
        author: { filters: { followers_count: { gte: 10000 } } },
      },
      limit: 10,
    },
    {
      post: { filters: { format: { in: ['reel'] }, views: { gte: 100000 } } },
      sort: { by: 'views', order: 'desc' },
      limit: 20,
    },
    { cursor: '<next_cursor of the previous page>' },
  ],
  searchAccounts: [
    {
      account: {
        filters: { niches: { contains_any: ['skincare'] } },
        posts: { minimum_matching_posts: 2, filters: { offer_types: { contains_any: ['discount'] } } },
      },
      sort: { by: 'followers_count', order: 'desc' },
    },
    { account: { query: 'vegan baking' }, limit: 10 },
  ],
  countPosts: [
    {
      post: {
        query: 'retinol serum',
        filters: { posted_at: { gte: '2026-10-01T00:00:00Z', lt: '2026-11-01T00:00:00Z' } },
      },
      interval: 'day',
      time_zone: 'Europe/Paris',
      breakdown: { by: 'language', size: 3 },
    },
    { post: { author: { filters: { niches: { contains_any: ['skincare'] } } } }, interval: 'week' },
  ],
  lookupAccounts: [
    {
      handles: ['@glowwithmaya', 'zoe_passport', 'no.such.handle'],
      ids: ['social_account_29m2wxyrhpsg5t7hcqwwyfkg58'],
    },
  ],
  createSavedSearch: [
    { name: 'Retinol launches', post: { query: 'retinol serum' }, webhook_endpoint_id: 'whe_<id of your endpoint>' },
    {
      name: 'Retinol volume',
      post: { query: 'retinol', filters: { primary_language: { in: ['en'] } } },
      webhook_endpoint_id: 'whe_<id of your endpoint>',
      events: ['volume'],
      volume: {
        interval: 'hour',
        time_zone: 'Europe/Paris',
        above: 500,
        spike: { factor: 3, baseline_intervals: 24, min_count: 50 },
      },
    },
  ],
  lookupPosts: [{ shortcodes: ['0sjB3DUrdcE', 'r9cmlWofeDH'], ids: ['social_post_e7g2w4tc8d3pt4vn7b38b2p6rg'] }],
};
const ID_EXAMPLES: Record<string, unknown[]> = {
  getPost: ['social_post_e7g2w4tc8d3pt4vn7b38b2p6rg', '0sjB3DUrdcE'],
  getAccount: ['social_account_29m2wxyrhpsg5t7hcqwwyfkg58', 'glowwithmaya', '@glowwithmaya'],
  getPostHistory: ['social_post_e7g2w4tc8d3pt4vn7b38b2p6rg', '0sjB3DUrdcE'],
  getAccountHistory: ['social_account_29m2wxyrhpsg5t7hcqwwyfkg58', '@glowwithmaya'],
};

/** Statuses any operation may answer besides its own, with the condition that adds them. */
const COMMON_STATUSES: Array<{ status: number; when: (route: RouteFacts) => boolean }> = [
  { status: 400, when: (r) => r.hasBody },
  { status: 401, when: (r) => r.authenticated },
  { status: 403, when: (r) => r.authenticated },
  { status: 413, when: (r) => r.hasBody },
  { status: 415, when: (r) => r.hasBody },
  { status: 422, when: (r) => r.validated },
  { status: 431, when: () => true },
  { status: 500, when: () => true },
  { status: 503, when: (r) => r.authenticated },
];

interface RouteFacts {
  authenticated: boolean;
  hasBody: boolean;
  /** Has a params, querystring, headers or body schema: a value outside it answers 422. */
  validated: boolean;
}

/** The response entry of a problem status: the problem schema and the names it may carry. */
function problemResponse(status: number, schema: unknown): Record<string, unknown> {
  const names = problemsWithStatus(status);
  const description =
    names.length > 0 ? names.map((p) => `\`${p.name}\`: ${p.description}`).join('\n\n') : 'A problem object.';
  return { description, content: { 'application/problem+json': { schema } } };
}

/** The intake body per content type: NDJSON lines or a JSON array, each entry one observation. */
function intakeBody(): Record<string, unknown> {
  // The observation schemas are registered components (contract/observations.ts); inputs carry the suffix.
  const observation = {
    oneOf: Object.values(OBSERVATION_SCHEMA_IDS).map((id) => ({ $ref: `#/components/schemas/${id}Input` })),
  };
  return {
    content: {
      'application/x-ndjson': {
        schema: {
          type: 'string',
          minLength: 1,
          description:
            'One observation (JSON object) per line; a bad line is rejected alone. At most 5,000 lines and 20 MiB.',
        },
      },
      'application/json': { schema: { type: 'array', items: observation, minItems: 1, maxItems: 5000 } },
    },
  };
}

/**
 * The OpenAPI 3.1 document generated from the routes' zod schemas (`@fastify/swagger` with the zod
 * type provider's transform): nothing is kept by hand, so a route added with a schema appears in
 * it. Every problem status an operation can answer is documented with its problem names (from the
 * catalog); `/docs` serves the Swagger UI from its own bundled assets (no CDN). Register before
 * the routes: the document is built from the routes registered after it.
 */
export function registerOpenApi(app: FastifyInstance, options: { baseUrl: string; version: string }): void {
  const zodTransform = createJsonSchemaTransform({});
  const problemSchema = { $ref: '#/components/schemas/Problem' };
  // Registered on the root instance (not awaited, so buildApp stays synchronous): its onRoute
  // hook must see every route registered after it.
  app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Social Content Search API',
        version: options.version,
        description:
          'Search and read the social-platform posts and accounts this service tracks. Errors are problem objects whose `type` URL is a page describing the problem. Filter grammar: docs/filters.md.',
      },
      servers: [{ url: options.baseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer ssk_…`.' },
        },
        schemas: {
          Problem: {
            type: 'object',
            required: ['type', 'status', 'request_id', 'detail'],
            additionalProperties: false,
            properties: {
              type: {
                type: 'string',
                format: 'uri',
                description: '`{base_url}/problems/<problem-name>`: a page describing it.',
              },
              status: { type: 'integer' },
              request_id: { type: 'string', description: 'Quote it when reporting an issue.' },
              detail: { type: 'string' },
            },
          },
        },
      },
    },
    // Schemas registered with an id (recursive ones: filters, JSON values) become components.
    transformObject: createJsonSchemaTransformObject({}),
    transform(args) {
      const { url } = args;
      // Every route's schema here is the zod route schema object this module registers.
      const route = args.schema as Record<string, unknown> & { response?: Record<string, unknown> };
      const authenticated =
        (url.startsWith('/v1/social/') && !url.startsWith('/v1/social/delivery')) || url === INTAKE_PATH;
      const isIntake = url === INTAKE_PATH;
      // The intake body is a parsed container: described by hand below, per content type.
      const input = isIntake ? { ...route, body: undefined } : route;
      const out = zodTransform({ ...args, schema: input });
      // zodTransform answers the JSON-schema route object (its type is the plugin's loose one).
      const schema = { ...(out.schema as Record<string, unknown>) } as Record<string, unknown> & {
        response?: Record<string, unknown>;
      };
      const validated = ['params', 'querystring', 'headers', 'body'].some((part) => route[part] !== undefined);
      const facts: RouteFacts = { authenticated, hasBody: route.body !== undefined, validated };
      const responses: Record<string, unknown> = { ...(schema.response ?? {}) };
      for (const code of Object.keys(responses)) {
        if (Number(code) >= 400) responses[code] = problemResponse(Number(code), problemSchema);
        else if (Number(code) >= 300)
          // A response entry of the transformed route: an OpenAPI response object.
          responses[code] = { description: (responses[code] as { description?: string }).description ?? 'Redirect.' };
      }
      for (const { status, when } of COMMON_STATUSES) {
        if (when(facts) && !(String(status) in responses))
          responses[String(status)] = problemResponse(status, problemSchema);
      }
      schema.response = responses;
      if (isIntake) schema.body = intakeBody();
      const operationId = typeof route.operationId === 'string' ? route.operationId : '';
      if (BODY_EXAMPLES[operationId] && schema.body)
        schema.body = { ...schema.body, examples: BODY_EXAMPLES[operationId] };
      // The params' JSON schema is an object schema (zod strictObject), with properties.
      const params = schema.params as { properties?: Record<string, Record<string, unknown>> } | undefined;
      if (ID_EXAMPLES[operationId] && params?.properties?.id) {
        schema.params = {
          ...params,
          properties: { ...params.properties, id: { ...params.properties.id, examples: ID_EXAMPLES[operationId] } },
        };
      }
      schema.security = authenticated ? [{ bearer: [] }] : [];
      return { schema: schema, url: out.url };
    },
  });
  app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    // The UI's own assets, served from node_modules: nothing is fetched from a CDN.
    uiConfig: { deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 0 },
    staticCSP: true,
  });

  app.get(OPENAPI_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json').send(app.swagger()),
  );
}
