import type { Client } from '@elastic/elasticsearch';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Embedder } from '../embedding/embedder.ts';
import type { HttpMetrics } from '../http/metrics.ts';
import { INDEX_WRITING_QUEUES, type Producer, type QueueName } from '../queues/registry.ts';
import type { DeliveryStore } from '../services/alerts/delivery-store.ts';
import type { RefusalPause } from '../http/plugins/refusal-pause.ts';

/** Latency buckets (seconds) for requests and engine calls: 2.5 ms to 10 s. */
const BUCKETS = [0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** How long a scrape waits for Redis before leaving the queue gauges out. */
const QUEUE_READ_MS = 1000;

/**
 * The Prometheus registry of one API process (prom-client): process metrics, request durations by
 * route and status, Elasticsearch call latency (the client's diagnostic events), queue depth and
 * failed jobs, embedding model time and query-cache hits, and point-in-time snapshot reuse. One
 * registry per API, so several in one process (tests) do not collide.
 */
export function createPrometheusMetrics(parts: {
  elasticsearch: Client;
  snapshotStats: () => { opened: number; reused: number; lost: number };
  embedder: Pick<Embedder, 'stats'>;
  queues: Record<QueueName, Pick<Producer<QueueName>, 'getJobCounts'>>;
  deliveries: Pick<DeliveryStore, 'failureCounts' | 'dueCount'>;
  refusals: Pick<RefusalPause, 'stats'>;
}): HttpMetrics {
  const register = new Registry();
  collectDefaultMetrics({ register });

  const requests = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: BUCKETS,
    registers: [register],
  });

  const engineCalls = new Histogram({
    name: 'elasticsearch_request_duration_seconds',
    help: 'Elasticsearch requests of this process, by outcome (HTTP status, or "error" when none came back).',
    labelNames: ['outcome'] as const,
    buckets: BUCKETS,
    registers: [register],
  });
  const started = new Map<unknown, number>();
  parts.elasticsearch.diagnostic.on('request', (_error, event) => {
    if (event) started.set(event.meta.request.id, performance.now());
  });
  parts.elasticsearch.diagnostic.on('response', (error, event) => {
    const id: unknown = event?.meta.request.id;
    const at = started.get(id);
    if (at === undefined) return;
    started.delete(id);
    const outcome = event?.statusCode ? String(event.statusCode) : error ? 'error' : 'unknown';
    engineCalls.observe({ outcome }, (performance.now() - at) / 1000);
  });

  const jobs = new Gauge({
    name: 'queue_jobs',
    help: 'Jobs per queue and state (waiting, active, delayed, failed).',
    labelNames: ['queue', 'state'] as const,
    registers: [register],
    async collect() {
      this.reset();
      const reads = INDEX_WRITING_QUEUES.map(async (name) => {
        const counts = await parts.queues[name].getJobCounts('waiting', 'active', 'delayed', 'failed');
        for (const [state, n] of Object.entries(counts)) this.set({ queue: name, state }, n);
      });
      // Redis down: the scrape still answers, without the queue series (their absence is the signal).
      await Promise.race([
        Promise.allSettled(reads),
        new Promise((resolve) => setTimeout(resolve, QUEUE_READ_MS).unref()),
      ]);
    },
  });
  void jobs;

  /** Waits for a Redis read at most {@link QUEUE_READ_MS}: Redis down, the scrape answers without it. */
  const bounded = <T>(read: Promise<T>): Promise<T | undefined> =>
    Promise.race([
      read.catch(() => undefined),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), QUEUE_READ_MS).unref()),
    ]);
  // Counted by every worker process in Redis (services/alerts/webhook-delivery.ts), read here.
  new Counter({
    name: 'webhook_delivery_failures_total',
    help: 'Webhook delivery failures by cause: receiver (timeouts, connection errors, 429, 5xx), secret (a signing secret no key of the keyring opens), store (Redis), bug, expired (not delivered within 24 h).',
    labelNames: ['cause'] as const,
    registers: [register],
    async collect() {
      this.reset();
      const counts = await bounded(parts.deliveries.failureCounts());
      for (const [cause, n] of Object.entries(counts ?? {})) this.inc({ cause }, Number(n));
    },
  });
  new Gauge({
    name: 'webhook_endpoints_waiting',
    help: 'Webhook endpoints with deliveries waiting (or being sent).',
    registers: [register],
    async collect() {
      const count = await bounded(parts.deliveries.dueCount());
      if (count !== undefined) this.set(count);
    },
  });

  const counter = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers: [register],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  counter(
    'embedding_model_calls_total',
    'Calls to the embedding model thread (each one batch).',
    () => parts.embedder.stats().modelCalls,
  );
  counter(
    'embedding_model_seconds_total',
    'Seconds the embedding model spent (÷ calls: mean latency).',
    () => parts.embedder.stats().modelSeconds,
  );
  counter('embedding_texts_total', 'Texts embedded by the model.', () => parts.embedder.stats().textsEmbedded);
  counter('embedding_queries_total', 'Query embeddings asked for.', () => parts.embedder.stats().queries);
  counter(
    'embedding_query_cache_hits_total',
    'Query embeddings answered from the cache.',
    () => parts.embedder.stats().cacheHits,
  );
  counter(
    'search_snapshots_opened_total',
    'Point-in-time snapshots opened for first pages.',
    () => parts.snapshotStats().opened,
  );
  counter(
    'search_snapshots_reused_total',
    'First pages served from a snapshot already open.',
    () => parts.snapshotStats().reused,
  );
  counter(
    'search_snapshots_lost_total',
    'Snapshots given up because part of them was lost (an Elasticsearch node left or restarted, a shard moved); their searches ran again on a new one.',
    () => parts.snapshotStats().lost,
  );
  new Gauge({
    name: 'refusals_held',
    help: 'Refusals (429, repeated 401 and 403) this process holds for their pause now (RATE_LIMIT_REFUSAL_PAUSE_MS).',
    registers: [register],
    collect() {
      this.set(parts.refusals.stats().held);
    },
  });
  counter(
    'refusals_paused_total',
    'Refusals answered after a pause: a client asking again after being refused.',
    () => parts.refusals.stats().paused,
  );
  counter(
    'refusals_over_bound_total',
    'Refusals answered at once because the pause already held its bound (256 of a key, 1,024 of the process): clients refused faster than the pause can slow them.',
    () => parts.refusals.stats().overBound,
  );

  return {
    observeRequest(route, method, status, seconds) {
      requests.observe({ route, method, status: String(status) }, seconds);
    },
    async exposition() {
      return { contentType: register.contentType, body: await register.metrics() };
    },
  };
}
