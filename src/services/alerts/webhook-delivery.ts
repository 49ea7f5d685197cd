import type { Logger } from 'pino';
import { RetryDeliveryError } from '../../queues/registry.ts';
import type { AlertStore, DeliveryAttempt, EndpointRecord } from './alert-store.ts';
import { matchedEventBody } from './events.ts';
import type { SecretBox } from './secret-box.ts';
import { sendWebhook, signingKey, type SendOutcome } from './webhook-sender.ts';

/** How long deliveries of one event are retried, and how long an endpoint may fail before it is disabled. */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** What became of one delivery job. */
export type DeliveryResult = 'delivered' | 'failed' | 'endpoint-disabled' | 'endpoint-gone' | 'expired';

/** A `post.matched` event by reference: its saved search, its post, and the time its summary is stored at. */
export interface MatchedEventRef {
  saved_search_id: string;
  post: string;
  at: string;
}

/**
 * One event of a delivery job, its body whole (`body`: a test event) or by reference (`ref`: the
 * body is put together when sent, from the post's stored summary, as the pull endpoint does);
 * `attempts`: how many were made at it before this run.
 */
export type DeliveryEvent = { event_id: string; attempts?: number | undefined } & (
  { body: string; ref?: undefined } | { ref: MatchedEventRef; body?: undefined }
);

/** One delivery job: events of one pass for one endpoint, sent in order. */
export interface DeliveryJob {
  endpoint_id: string;
  events: DeliveryEvent[];
}

/** The secrets signing now: the current one, and the previous during its overlap. */
export function signingSecrets(endpoint: EndpointRecord, box: SecretBox, now: number): string[] {
  const secrets = [box.open(endpoint.secret)];
  if (endpoint.previous_secret && endpoint.previous_secret_until && Date.parse(endpoint.previous_secret_until) > now)
    secrets.push(box.open(endpoint.previous_secret));
  return secrets;
}

/**
 * How often a job's run keeps its progress (what is left, and the attempts' log) while it goes on:
 * a worker killed mid-job sends again at most about this much of its deliveries. Against a fast
 * receiver a job of 50 never gets there; against one answering in a second, it is one Redis
 * write per event, beside a second of waiting.
 */
export const PROGRESS_MS = 1000;

/** What a delivery run knows of its job: when it was first queued, and how to keep what is left for a retry. */
export interface DeliveryContext {
  /** When the job was first queued (epoch ms): its events are retried until 24 h after. */
  queuedAt: number;
  /** Stores what the job's next attempt delivers (the event to retry and those after it). */
  keep(this: void, rest: DeliveryJob): Promise<void>;
}

/**
 * Creates the delivery of one job: its events sent in order over one endpoint read and one
 * signing, each attempt logged (one log write per run). A 2xx ends a run of failures; a 410
 * disables the endpoint at once; timeouts, connection errors, 429 and 5xx stop the run, which
 * keeps that event and the ones after it for the job's retry (RetryDeliveryError, on the delivery
 * schedule) until 24 h after the job was first queued, and an endpoint that has failed throughout
 * 24 h is disabled. Other statuses are answers, not outages: logged, not retried (the event stays
 * pullable), and the run goes on.
 *
 * Why batches (bench/alerts.md): a job per event cost each event a queue round trip (three
 * scripts), an endpoint read, a secret opened and a log transaction, about as much CPU in the
 * process and in Redis as its HTTP request.
 */
export function createWebhookDelivery(deps: {
  store: Pick<AlertStore, 'endpoint' | 'updateEndpoint' | 'logDeliveries' | 'summaries'>;
  box: SecretBox;
  allowPrivate: boolean;
  userAgent: string;
  send?: typeof sendWebhook;
  logger?: Pick<Logger, 'info'>;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  const send = deps.send ?? sendWebhook;
  const iso = () => new Date(now()).toISOString();
  const options = { allowPrivate: deps.allowPrivate, userAgent: deps.userAgent };

  async function disable(endpoint: EndpointRecord, reason: string): Promise<void> {
    await deps.store.updateEndpoint(endpoint.id, { status: 'disabled', disabled_reason: reason });
    deps.logger?.info({ endpoint: endpoint.id, reason }, 'webhook endpoint disabled');
  }

  /**
   * After an attempt to retry: disables an endpoint failing for 24 h, drops a job queued 24 h ago,
   * else keeps `rest` (the event, with its attempt counted, and those after it) and throws.
   */
  async function retryLater(
    endpoint: EndpointRecord,
    failingSince: string,
    outcome: SendOutcome,
    rest: DeliveryJob,
    context: DeliveryContext,
  ): Promise<DeliveryResult> {
    if (now() - Date.parse(failingSince) >= RETRY_WINDOW_MS) {
      await disable(endpoint, `every delivery failed for 24 hours (last: ${outcome.error ?? 'no answer'})`);
      return 'endpoint-disabled';
    }
    if (now() - context.queuedAt >= RETRY_WINDOW_MS) return 'expired';
    await context.keep(rest);
    throw new RetryDeliveryError(
      outcome.error ?? 'delivery failed',
      outcome.retryAfterMs,
      rest.events[0]?.attempts ?? null,
    );
  }

  /**
   * The bodies of the job's events, in order: whole, or put together from the stored summaries
   * (null: the summary is gone, and with it the event; summaries outlive the retries by days).
   */
  async function bodiesOf(events: readonly DeliveryEvent[]): Promise<Array<string | null>> {
    const refs = events.flatMap((e) => (e.ref ? [e.ref] : []));
    const found = await deps.store.summaries(refs);
    let next = 0;
    return events.map((event) => {
      if (!event.ref) return event.body;
      const summary = found[next++] ?? null;
      const { saved_search_id, post, at } = event.ref;
      return summary === null ? null : matchedEventBody(saved_search_id, post, at, summary);
    });
  }

  /** Sends the events in order until one is to be retried or the endpoint is gone; logs each attempt. */
  async function run(endpoint: EndpointRecord, job: DeliveryJob, context: DeliveryContext): Promise<DeliveryResult> {
    const url = new URL(endpoint.url);
    const secrets = signingSecrets(endpoint, deps.box, now()).map(signingKey);
    const bodies = await bodiesOf(job.events);
    const log: DeliveryAttempt[] = [];
    const rest = (from: number, events = job.events.slice(from)) => ({ endpoint_id: job.endpoint_id, events });
    let failingSince = endpoint.failing_since;
    let result: DeliveryResult = 'delivered';
    let checkpoint = performance.now();
    try {
      for (const [i, event] of job.events.entries()) {
        const attempt = (event.attempts ?? 0) + 1;
        const body = bodies[i]!;
        if (body === null) {
          log.push({ at: iso(), event_id: event.event_id, attempt, status: null, latency_ms: 0, error: 'event gone' });
          result = 'failed';
          continue;
        }
        const outcome = await send(url, { id: event.event_id, body, secrets }, options);
        const { status, latencyMs: latency_ms, error } = outcome;
        log.push({ at: iso(), event_id: event.event_id, attempt, status, latency_ms, error });
        if (outcome.result === 'gone') {
          await disable(endpoint, `the receiver answered 410 Gone at ${iso()}`);
          return 'endpoint-disabled';
        }
        if (outcome.result === 'retry') {
          if (!failingSince) await deps.store.updateEndpoint(endpoint.id, { failing_since: (failingSince = iso()) });
          const kept = rest(i, [{ ...event, attempts: attempt }, ...job.events.slice(i + 1)]);
          return await retryLater(endpoint, failingSince, outcome, kept, context);
        }
        if (outcome.result === 'failed') result = 'failed';
        else if (failingSince) {
          await deps.store.updateEndpoint(endpoint.id, { failing_since: null });
          failingSince = null;
        }
        if (i + 1 < job.events.length && performance.now() - checkpoint >= PROGRESS_MS) {
          await Promise.all([context.keep(rest(i + 1)), deps.store.logDeliveries(endpoint.id, log.splice(0))]);
          checkpoint = performance.now();
        }
      }
      return result;
    } finally {
      await deps.store.logDeliveries(endpoint.id, log);
    }
  }

  return async function deliver(job: DeliveryJob, context: DeliveryContext): Promise<DeliveryResult> {
    const endpoint = await deps.store.endpoint(job.endpoint_id);
    if (!endpoint) return 'endpoint-gone';
    if (endpoint.status === 'disabled') return 'endpoint-disabled';
    return run(endpoint, job, context);
  };
}

/** The delivery of one job. */
export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>;
