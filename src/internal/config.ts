import { z } from 'zod';

/**
 * The service's whole configuration: environment variables parsed once at start.
 * Nothing reads `process.env` at import time; entry points call {@link loadConfig} and pass the
 * result (or a narrowed part of it) to the factories that need it.
 */
/** A comma-separated list of `item`s; empty or absent: none. */
function list<T extends z.ZodType<unknown, string>>(item: T) {
  return z
    .string()
    .default('')
    .transform((raw) =>
      raw
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item));
}

const envSchema = z.object({
  /**
   * The Elasticsearch nodes the client sends requests to, comma-separated (one URL: a single node,
   * or a proxy or load balancer in front of a cluster). With several, a request that cannot reach
   * one node is retried on another; the client never sniffs, so only these addresses are used.
   */
  ELASTICSEARCH_URL: z
    .string()
    .default('http://127.0.0.1:9200')
    .transform((raw) =>
      raw
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.url()).min(1, 'expected at least one URL')),
  REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Unset: the address the API listens on (`HOST`, or 127.0.0.1 for a wildcard, and `PORT`). */
  PUBLIC_BASE_URL: z
    .url()
    .optional()
    .transform((u) => u?.replace(/\/+$/, '')),
  SIGNING_SECRET: z.string().min(32, 'SIGNING_SECRET must be at least 32 characters').optional(),
  /**
   * The signing secrets SIGNING_SECRET replaced, comma-separated, newest first: what was signed or
   * sealed under them still verifies and opens (webhook secrets, delivery URLs, cursors), so that
   * changing SIGNING_SECRET stops nothing (docs/operations.md, "Changing SIGNING_SECRET").
   */
  SIGNING_SECRET_PREVIOUS: list(z.string().min(32, 'each previous signing secret has at least 32 characters')),
  /** Browser origins allowed to call the API (CORS), comma-separated; empty: CORS off (no headers). */
  CORS_ORIGINS: list(z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, ''))),
  /**
   * Proxies (IPs or CIDRs, comma-separated) whose `X-Request-Id` is kept as the request's id when
   * it is well-formed; from anyone else the header is ignored and an id is minted.
   */
  TRUSTED_PROXIES: list(z.string().min(1)),
  /** `/metrics` (Prometheus text format) on the API port: `on` or `off`. */
  METRICS: z.enum(['on', 'off']).default('on'),
  /** When set, `/metrics` requires `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().min(16).optional(),
  /** Searches per API key per minute, shared by all API nodes (0: no limit). */
  RATE_LIMIT_SEARCH_PER_MINUTE: z.coerce.number().int().min(0).default(600),
  /** The account holders' dashboard at {PUBLIC_BASE_URL}/dashboard. */
  DASHBOARD: z.enum(['on', 'off']).default('on'),
  /**
   * Who may sign up: `invite` (an invitation code from `social-search holders invite`), `open`
   * (anyone) or `closed` (holders come from `keys create --owner` plus an invitation only).
   */
  DASHBOARD_SIGNUP: z.enum(['open', 'invite', 'closed']).default('invite'),
  /** Signs dashboard session cookies; unset: derived from SIGNING_SECRET. */
  SESSION_SECRET: z.string().min(32, 'SESSION_SECRET must be at least 32 characters').optional(),
  /** A dashboard session ends after this many hours without a request. */
  SESSION_IDLE_HOURS: z.coerce
    .number()
    .min(0.05)
    .max(24 * 30)
    .default(12),
  /** Failed sign-ins per email per 15 minutes before it is blocked for 15 minutes. */
  SIGNIN_MAX_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).default(5),
  /** Failed sign-ins per client address per hour before it is blocked for an hour. */
  SIGNIN_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(50),
  /** Days of per-key usage kept for the dashboard. */
  USAGE_RETENTION_DAYS: z.coerce.number().int().min(1).max(400).default(90),
  /**
   * Lets webhook endpoints name loopback and private addresses (and plain http there): for tests
   * and receivers inside the operator's own network. Off, every delivery address is checked to be
   * public, on each attempt.
   */
  WEBHOOK_ALLOW_PRIVATE: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /**
   * `paused` stops sending webhooks: deliveries wait in their queue (and events stay pullable)
   * until `on` again, within their 24 h. For incidents, and for runs that must send nothing off
   * the machine (the API fuzzing step).
   */
  WEBHOOK_DELIVERIES: z.enum(['on', 'paused']).default('on'),
  /** Saved searches one account holder may keep. */
  SAVED_SEARCHES_PER_HOLDER: z.coerce.number().int().min(1).max(100_000).default(100),
  /** Webhook endpoints one account holder may keep. */
  WEBHOOK_ENDPOINTS_PER_HOLDER: z.coerce.number().int().min(1).max(1000).default(20),
  /**
   * Events one saved search may record in 30 days (all kept for pulling); past it, its new matches
   * are counted (`events_dropped`) rather than recorded until older events age out. What bounds
   * the alerts' Redis and deliveries per saved search (docs/capacity.md, "Alerts in Redis").
   */
  SAVED_SEARCH_EVENT_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** GETs of posts and accounts per key per minute (cheaper than searches, so a higher budget); 0: unlimited. */
  RATE_LIMIT_READ_PER_MINUTE: z.coerce.number().int().min(0).default(3000),
  /**
   * Searches (and facets, counts) of one API key an API node runs at once; its next ones wait on
   * the node in order (64 at most, then 429 with Retry-After: 1), so one key's burst never queues
   * another key's search behind it in the engine (bench/search.md, "One key's burst and another's
   * search"). 0: no bound.
   */
  SEARCH_IN_FLIGHT_PER_KEY: z.coerce.number().int().min(0).max(1024).default(8),
  /**
   * The pause, in ms, before a 429 the node has already given a key (its budget spent, or its
   * searches' queue full), and before a 401 or 403 it gave the same credential within a minute:
   * a client that ignores Retry-After (or keeps a revoked key) gets a few refusals a second, not
   * thousands that slow every other key (bench/search.md, "A key that ignores its 429s"); at most
   * 256 refusals of a key and 1,024 of a node are held at once, the rest go at once. 0: no pause.
   */
  RATE_LIMIT_REFUSAL_PAUSE_MS: z.coerce.number().int().min(0).max(10_000).default(1000),
  CURSOR_TTL_SECONDS: z.coerce.number().int().positive().default(3600),
  /** Prefix of every index, alias and template name; lets several deployments (or test files) share a cluster. */
  INDEX_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]*$/, 'lowercase letters, digits, "-" and "_"')
    .default('social'),
  /**
   * Primary shards of each index created from now on (`indices apply`, `indices rebuild`); an
   * existing index keeps its count until it is rebuilt. One shard holds tens of millions of posts.
   */
  INDEX_SHARDS: z.coerce.number().int().min(1).max(64).default(1),
  /**
   * Replica copies of each shard; `indices apply` also sets it on the live indices. 0 on a single
   * node (a replica could never be assigned there: health yellow); 1 or more on a cluster, so
   * that losing a node loses no data and searches keep answering.
   */
  INDEX_REPLICAS: z.coerce.number().int().min(0).max(8).default(0),
  /**
   * How often Elasticsearch makes new writes visible to search on its own (`1s`, `30s`, `500ms`;
   * `-1`: only on request); `indices apply` also sets it on the live indices. Writes a caller waits
   * on (`?wait=true`, `ingest --wait`) and the intake's follow-up steps are made visible on request
   * whatever it is. Each refresh writes a small segment that later merges cost the engine CPU:
   * raising it for a backfill (docs/operations.md, "Backfills") buys intake speed with search freshness.
   */
  INDEX_REFRESH_INTERVAL: z
    .string()
    .regex(/^(-1|[1-9][0-9]*(ms|s|m))$/, 'a duration such as 1s, 30s, 500ms or 2m, or -1')
    .default('1s'),
  /**
   * While the intake is behind (its oldest waiting batch has waited this long), workers raise the
   * refresh interval of the indices it writes to this and let the batched follow-ups gather this
   * long, then set both back once it has caught up: fewer, bigger segments for the engine to write
   * and merge while a write's visibility is late anyway (src/internal/backlog-refresh.ts). `off`
   * keeps INDEX_REFRESH_INTERVAL whatever the backlog.
   */
  BACKLOG_REFRESH_INTERVAL: z
    .string()
    .regex(/^(off|[1-9][0-9]*(s|m))$/, 'a duration such as 10s or 1m, or off')
    .default('10s'),
  /**
   * Metric history: every counter an observation carries kept as a point (`on`), from which
   * follower growth is derived and the history endpoints answer; `off` writes no points (growth
   * is then null and histories are empty).
   */
  METRIC_HISTORY: z.enum(['on', 'off']).default('on'),
  /** Days of metric history kept: whole months are dropped once every point in them is older. */
  METRIC_HISTORY_RETENTION_DAYS: z.coerce.number().int().min(35).max(3650).default(400),
  /** Prefix of every Redis key (queues, API keys, locks), for the same reason. */
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('social-search'),
  /** How long a signed delivery URL (media_url, thumbnail_url, avatar_url) stays valid. */
  DELIVERY_URL_TTL_SECONDS: z.coerce.number().int().min(60).default(86_400),
  /**
   * How long an API node may trust a cached active key (0: no cache, one Redis read per request).
   * Revocations reach every node at once over Redis Pub/Sub; this only bounds a missed message.
   */
  KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  /**
   * While Redis is unreachable, how long after its last verification a cached key keeps working
   * (stale-if-error), so reads and searches outlive a Redis outage (0: they answer 503 at once).
   */
  KEY_CACHE_STALE_IF_ERROR_MS: z.coerce.number().int().min(0).default(3_600_000),
  /**
   * Which routes this API node serves: `all`; `reads` (the public API and the dashboard, no intake);
   * `intake` (the intake alone). Health, metrics and the OpenAPI document are on every node. Apart,
   * a burst of intake never holds the searches' event loop (bench/steady-state.md, "Searches first").
   */
  API_ROUTES: z.enum(['all', 'reads', 'intake']).default('all'),
  /** How long `?wait=true` intake waits for indexing before answering 504. */
  INTAKE_WAIT_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  /**
   * Backpressure: observations that may wait in the queue before the intake answers 503 (nothing
   * accepted, retry later). Each holds ~1.5 KB of Redis memory; unbounded, a pipeline sending
   * faster than the workers drain fills Redis until it stalls (2.2 GB at 1.3M observations).
   */
  INTAKE_MAX_QUEUED_OBSERVATIONS: z.coerce.number().int().positive().default(500_000),
  /**
   * Intake request bodies one API node reads at once, in MiB (each counted as its Content-Length,
   * a chunked one as 20 MiB, the largest allowed); a request past it gets 503 with Retry-After: 1
   * before its body is read. Each MiB of bodies held ~3 MiB of the node's memory while it waited
   * for validation (bench/intake.md, "Intake bodies in flight"). At least 20: one body of the
   * largest size always fits.
   */
  INTAKE_MAX_IN_FLIGHT_MB: z.coerce.number().int().min(20).max(4096).default(32),
  /** Upper bound on one Elasticsearch request, so an unreachable engine answers 503 instead of hanging. */
  ELASTICSEARCH_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /**
   * Searches first: `searches` pauses a worker's engine writes (and its follow-ups' large reads)
   * while the engine's searches run over twice their recent best, up to twice each request's own
   * time; `off` writes at full speed (src/internal/write-pacing.ts).
   */
  WRITE_PACING: z.enum(['searches', 'off']).default('searches'),
  /**
   * Searches first on a shared host: the CPU priority (nice, 0–19) a worker process and an
   * intake-only API node (API_ROUTES=intake) lower themselves to at start, so that searches on
   * the same cores are scheduled first; 0 leaves them as started (src/start/background-priority.ts).
   */
  BACKGROUND_NICENESS: z.coerce.number().int().min(0).max(19).default(10),
  /**
   * How long a first page may reuse this node's shared point in time instead of opening its own.
   * Search is near-real-time anyway (1 s refresh); `?wait=true` intake invalidates it at once.
   */
  SEARCH_SNAPSHOT_MAX_AGE_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /** Folder holding a sentence-transformers model in the transformers.js layout (config, tokenizer, onnx/). */
  MODEL_DIR: z.string().min(1).optional(),
  /** Hub model id (e.g. `Xenova/all-MiniLM-L6-v2`), used only when MODEL_DIR is unset; downloads once into the cache. */
  MODEL_ID: z.string().min(1).optional(),
  /** `auto`: on when MODEL_DIR or MODEL_ID is set. `off`: BM25 only. `on`: refuse to start without a model. */
  EMBEDDINGS: z.enum(['auto', 'on', 'off']).default('auto'),
  /** ONNX weights to load: `q8` (model_quantized.onnx) or `fp32` (model.onnx). */
  EMBEDDING_DTYPE: z.enum(['q8', 'fp32']).default('q8'),
  /**
   * How `post.query` ranks: `hybrid` (BM25 and embeddings fused), `lexical` (BM25 only) or
   * `semantic` (embeddings only). Without embeddings every mode ranks by BM25.
   */
  SEARCH_RANKING: z.enum(['hybrid', 'lexical', 'semantic']).default('hybrid'),
  /**
   * The relevance floor (docs/api-decisions.md, "The relevance floor"): a post that only
   * the embedding side found is returned when its cosine similarity to the query reaches this.
   * Unset: the model's calibrated floor (src/embedding/model-floors.ts; all-MiniLM-L6-v2's 0.3,
   * bench/relevance.md, "The similarity floor: calibration"); -1 turns it off.
   */
  SEARCH_SIMILARITY_FLOOR: z.coerce.number().min(-1).max(1).optional(),
  /**
   * The relevance floor for a query none of whose content words any post carries, even corrected
   * (docs/api-decisions.md, "The relevance floor"): neighbours alone are all such a query can find,
   * so they must be nearer. Unset: the model's calibration, else SEARCH_SIMILARITY_FLOOR. For a model whose cosines sit in a
   * narrow band, where no one floor keeps both the relevant neighbours and nonsense's nearest apart
   * (bench/relevance.md, "Other models").
   */
  SEARCH_SIMILARITY_FLOOR_UNMATCHED: z.coerce.number().min(-1).max(1).optional(),
  /**
   * Pseudo-relevance feedback on the query vector of hybrid searches (src/query/relevance-feedback.ts):
   * the vector moves toward the first fused ranking's top 3, each as much as its fused score, before
   * the final kNN; two more engine requests per first page. `on` (default): every hybrid query the
   * model reads; `questions`: only those phrased as questions; `off`: none (bench/relevance.md,
   * "Questions phrased in the asker's own words").
   */
  SEARCH_VECTOR_FEEDBACK: z.enum(['on', 'questions', 'off']).default('on'),
  /**
   * The posts index's statistics of a hybrid query's words (engine/elasticsearch/queries/query-terms.ts):
   * a lexical hit carrying little of the query's information keeps that share of its lexical weight
   * in the fusion, and a word no post carries is corrected from the index's vocabulary; one more
   * small engine request per first page (two for a misspelt word). `off`: neither.
   */
  SEARCH_QUERY_TERMS: z.enum(['on', 'off']).default('on'),
  /**
   * A hybrid search phrased as a question weighs its content words by how much of its meaning the
   * model says each carries (src/text/question-weights.ts: the question without each word in turn,
   * in one run of the model), so that posts sharing only the asking words ("get better", "without
   * expensive stuff") do not outrank posts on its topic. `off`: every word weighs the same, as for
   * any other query.
   */
  SEARCH_QUESTION_WEIGHTS: z.enum(['on', 'off']).default('on'),
  /**
   * Memory for the vectors of recent query texts (an LRU, bounded in bytes: ~1.7 KiB per short
   * query), so repeated queries skip the model; 0: no cache.
   */
  EMBEDDING_QUERY_CACHE_MB: z.coerce.number().min(0).max(4096).default(4),
  /** onnxruntime intra-op threads of the model thread (0: one per core). */
  EMBEDDING_THREADS: z.coerce.number().int().min(0).max(64).default(0),
  /**
   * Test-only, off by default: `<distance>:<seed>` moves every vector the model makes, before it
   * is normalised, to cosine `1 − distance` of itself, in a direction drawn from the seed and the
   * text (the same text always moves the same way). It stands for another CPU's arithmetic: the
   * tests on model output run under it too (docs/testing.md, "What the ranking tolerates").
   */
  EMBEDDING_NOISE: z
    .string()
    // Empty is unset, as a shell's `EMBEDDING_NOISE=` says.
    .transform((raw) => raw || undefined)
    .pipe(
      z
        .string()
        .regex(/^(0(\.\d+)?|\.\d+):\d{1,9}$/, 'expected <distance>:<seed>, a distance in [0, 1) and an integer seed')
        .optional(),
    )
    .optional()
    .transform((raw) => {
      if (raw === undefined) return null;
      const [distance, seed] = raw.split(':');
      return { distance: Number(distance), seed: Number(seed) };
    }),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
});

/** Parsed configuration. */
export type Config = Omit<z.infer<typeof envSchema>, 'PUBLIC_BASE_URL'> & {
  PUBLIC_BASE_URL: string;
  SIGNING_SECRET: string;
};

/** Thrown when the environment does not describe a valid configuration. */
export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the environment into a {@link Config}.
 *
 * `SIGNING_SECRET` is required in production; elsewhere a fixed development secret is used so that
 * a fresh clone runs without setup (cursors and delivery URLs then only verify on this machine's
 * processes that share the same default, which is what local development needs).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`));
  }
  const { PUBLIC_BASE_URL, ...rest } = parsed.data;
  const config = { ...rest, PUBLIC_BASE_URL: PUBLIC_BASE_URL ?? listenUrl(rest.HOST, rest.PORT) };
  if (config.SIGNING_SECRET === undefined) {
    if (config.NODE_ENV === 'production') {
      throw new ConfigError(['SIGNING_SECRET: required when NODE_ENV=production']);
    }
    return { ...config, SIGNING_SECRET: DEVELOPMENT_SIGNING_SECRET };
  }
  return { ...config, SIGNING_SECRET: config.SIGNING_SECRET };
}

/**
 * Where a client on this machine reaches the API when PUBLIC_BASE_URL is unset, so that links
 * (problem types, delivery URLs, the quickstart's examples) follow `PORT`. Port 0 (any free port)
 * is only known after listening: links then keep the default port.
 */
function listenUrl(host: string, port: number): string {
  const local = ['0.0.0.0', '::', '[::]', ''].includes(host) ? '127.0.0.1' : host;
  return `http://${local.includes(':') && !local.startsWith('[') ? `[${local}]` : local}:${port === 0 ? 8080 : port}`;
}

/** Used only outside production when SIGNING_SECRET is unset. */
const DEVELOPMENT_SIGNING_SECRET = 'development-only-signing-secret-change-me-0000';
