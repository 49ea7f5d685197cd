import type { KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import { messageOf, ServiceUnavailableError } from '../../internal/errors.ts';
import type { DeliveryStore, FailureCause, OutboxEntry } from './delivery-store.ts';
import { HEALTHY, type DeliveryAttempt, type EndpointRecord, type EndpointStore } from './endpoint-store.ts';
import { DELIVERY_WINDOW_MS, type EventStore } from './event-store.ts';
import { matchedEventBody } from './events.ts';
import { SealedSecretUnreadable, type SecretBox } from './secret-box.ts';
import { signingKey, type SendOutcome, type WebhookSender } from './webhook-sender.ts';

/** How long an endpoint may fail before it is disabled: the same 24 h its deliveries wait at most. */
export const RETRY_WINDOW_MS = DELIVERY_WINDOW_MS;
/** A turn starts no new request after this long, so that every endpoint gets its turn soon. */
export const TURN_BUDGET_MS = 5000;
/** Requests in flight to one endpoint at once (within its one turn at a time). */
export const REQUESTS_PER_ENDPOINT = 4;
/** What the delivery log and the endpoint say of a failure the service caused. */
const SERVICE_FAILURES: Record<'secret' | 'store' | 'bug', string> = {
  secret: 'the signing secret cannot be opened (SIGNING_SECRET changed without SIGNING_SECRET_PREVIOUS)',
  store: 'the alert store is unreachable',
  bug: 'an unexpected failure (logged for the operator)',
};
/** Deliveries read per turn. */
const DELIVERIES_PER_TURN = 50;

/** Delay before an endpoint's next turn after `failed` turns in a row: 5 s doubling to an hour, jittered over the upper half, never sooner than the receiver's Retry-After. */
export function backoffMs(failed: number, retryAfterMs: number | null, random = Math.random): number {
  const ceiling = Math.min(3_600_000, 5_000 * 2 ** Math.max(0, failed - 1));
  const jittered = Math.round(ceiling / 2 + random() * (ceiling / 2));
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, 3_600_000));
}

/** The signing secrets in force: the current one and those retired less than 24 h ago, and whether any was sealed under an earlier SIGNING_SECRET. */
export function signingSecrets(endpoint: EndpointRecord, box: SecretBox, now: number) {
  const current = box.open(endpoint.secret);
  const previous = endpoint.previous_secrets.filter((p) => Date.parse(p.until) > now);
  const opened = previous.map((p) => ({ until: p.until, ...box.open(p.secret) }));
  return {
    secrets: [current.secret, ...opened.map((p) => p.secret)],
    resealed:
      current.stale || opened.some((p) => p.stale)
        ? {
            secret: box.seal(current.secret),
            previous_secrets: opened.map((p) => ({ secret: box.seal(p.secret), until: p.until })),
          }
        : null,
  };
}

/**
 * Creates one endpoint's turn at its outbox (deliveries.ts runs the turns): its deliveries oldest
 * first, {@link REQUESTS_PER_ENDPOINT} at a time, until none is left, {@link TURN_BUDGET_MS} have
 * passed or one is to be retried. Returns when the endpoint is due again.
 *
 * - Deliveries queued 24 h ago or more go first, logged `expired`, whatever else fails.
 * - A 2xx ends a run of failures; a 410 disables the endpoint at once; other 4xx (and 3xx: no
 *   redirect is followed) are answers, not outages: logged, not retried (the event stays
 *   pullable). Timeouts, connection errors, 429 and 5xx keep the delivery for the endpoint's next
 *   turn, backed off (5 s doubling to an hour, never sooner than `Retry-After`); an endpoint whose
 *   deliveries have all failed for 24 h is disabled.
 * - A failure of the service's own (a secret no key opens, Redis, a bug) is logged once per
 *   endpoint and cause (and once when it clears), counted by cause for `/metrics`, written to the
 *   endpoint's delivery log (the dashboard shows it) and backed off like the receiver's: its
 *   deliveries wait, and expire after their 24 h like any.
 */
export function createWebhookDelivery(deps: {
  endpoints: Pick<EndpointStore, 'get' | 'update' | 'logDeliveries'>;
  deliveries: Pick<DeliveryStore, 'read' | 'settle' | 'drop' | 'countFailures'>;
  events: Pick<EventStore, 'summaries'>;
  box: SecretBox;
  send: WebhookSender['send'];
  logger?: Pick<Logger, 'info' | 'warn' | 'error'> | undefined;
  now?: () => number;
  random?: () => number;
}) {
  const now = deps.now ?? Date.now;
  const iso = () => new Date(now()).toISOString();
  /** The service's failures logged, by endpoint and cause, until the endpoint's next good turn. */
  const logged = new Map<string, Set<FailureCause>>();

  async function disable(endpoint: EndpointRecord, reason: string): Promise<void> {
    await deps.endpoints.update(endpoint.id, { status: 'disabled', disabled_reason: reason });
    await deps.deliveries.drop(endpoint.id);
    deps.logger?.info({ endpoint: endpoint.id, reason }, 'webhook endpoint disabled');
  }

  /** A delivery log entry of no answer: an event gone, expired, or the service's failure. */
  const unanswered = (event: string, attempt: number, error: string): DeliveryAttempt => ({
    at: iso(),
    event_id: event,
    attempt,
    status: null,
    latency_ms: 0,
    error,
  });

  /** The bodies of `entries`, in order (null: the summary is gone, and with it the event). */
  async function bodiesOf(entries: readonly OutboxEntry[]): Promise<Array<string | null>> {
    const refs = entries.flatMap((e) => (e.ref ? [e.ref] : []));
    const found = await deps.events.summaries(refs);
    let next = 0;
    return entries.map((entry) => {
      if (!entry.ref) return entry.body ?? null;
      const summary = found[next++] ?? null;
      return summary === null ? null : matchedEventBody(entry.ref.search, entry.ref.post, entry.ref.at, summary);
    });
  }

  /** Sends `live` in order, a few at a time, until the budget is spent or one is to be retried. */
  async function sendAll(
    endpoint: EndpointRecord,
    live: ReadonlyArray<{ entry: OutboxEntry; attempts: number }>,
    secrets: KeyObject[],
    started: number,
  ) {
    const url = new URL(endpoint.url);
    const bodies = await bodiesOf(live.map((l) => l.entry));
    const log: DeliveryAttempt[] = [];
    const done: string[] = [];
    const retried: string[] = [];
    // In a holder: the workers set it from callbacks that flow analysis does not follow.
    const first: { retry: SendOutcome | null } = { retry: null };
    let gone = false;
    let delivered = false;
    let next = 0;
    const worker = async () => {
      while (next < live.length && first.retry === null && !gone && performance.now() - started < TURN_BUDGET_MS) {
        const i = next++;
        const { entry, attempts } = live[i]!;
        const body = bodies[i]!;
        const attempt = attempts + 1;
        if (body === null) {
          log.push(unanswered(entry.event, attempt, 'event gone'));
          done.push(entry.id);
          continue;
        }
        const outcome = await deps.send(url, { id: entry.event, body, secrets });
        const { status, latencyMs: latency_ms, error } = outcome;
        log.push({ at: iso(), event_id: entry.event, attempt, status, latency_ms, error });
        if (outcome.result === 'retry') {
          retried.push(entry.id);
          first.retry ??= outcome;
        } else {
          done.push(entry.id);
          if (outcome.result === 'gone') gone = true;
          if (outcome.result === 'delivered') delivered = true;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(REQUESTS_PER_ENDPOINT, live.length) }, worker));
    await Promise.all([
      deps.deliveries.settle(endpoint.id, done, retried),
      deps.endpoints.logDeliveries(endpoint.id, log),
    ]);
    return { retry: first.retry, gone, delivered, log };
  }

  /** One turn, the service's failures thrown. */
  async function turn(id: string): Promise<number> {
    const started = performance.now();
    const endpoint = await deps.endpoints.get(id);
    if (!endpoint || endpoint.status === 'disabled') {
      await deps.deliveries.drop(id);
      return now();
    }
    const read = await deps.deliveries.read(id, DELIVERIES_PER_TURN);
    const oldest = now() - DELIVERY_WINDOW_MS;
    const expired = read.filter(({ entry }) => Number(entry.id.split('-')[0]) < oldest);
    if (expired.length > 0) {
      const last = endpoint.last_error ? ` (last: ${endpoint.last_error})` : '';
      const error = `expired: not delivered within 24 h${last}`;
      await deps.endpoints.logDeliveries(
        id,
        expired.map(({ entry, attempts }) => unanswered(entry.event, attempts, error)),
      );
      await deps.deliveries.settle(
        id,
        expired.map(({ entry }) => entry.id),
        [],
      );
      await deps.deliveries.countFailures('expired', expired.length);
    }
    const live = read.filter((r) => !expired.includes(r));
    if (live.length === 0) return now();
    const { secrets, resealed } = signingSecrets(endpoint, deps.box, now());
    if (resealed) await deps.endpoints.update(id, resealed);
    const sent = await sendAll(endpoint, live, secrets.map(signingKey), started);
    if (sent.gone) {
      await disable(endpoint, `the receiver answered 410 Gone at ${iso()}`);
      return now();
    }
    if (sent.retry) return receiverFailed(endpoint, sent.retry);
    if (sent.delivered || endpoint.failed_turns > 0) await recovered(endpoint);
    return now();
  }

  /** A turn that ended on a delivery to retry: the endpoint backs off, or is disabled after 24 h of failures. */
  async function receiverFailed(endpoint: EndpointRecord, outcome: SendOutcome): Promise<number> {
    const failingSince = endpoint.failing_since ?? iso();
    const error = outcome.error ?? 'delivery failed';
    await deps.deliveries.countFailures('receiver');
    if (now() - Date.parse(failingSince) >= RETRY_WINDOW_MS) {
      await disable(endpoint, `every delivery failed for 24 hours (last: ${error})`);
      return now();
    }
    const failed = endpoint.failed_turns + 1;
    await deps.endpoints.update(endpoint.id, { failing_since: failingSince, failed_turns: failed, last_error: error });
    return now() + backoffMs(failed, outcome.retryAfterMs, deps.random);
  }

  /** A good turn after failures: the run of failures ends, and a failure of the service's that was logged is logged as over. */
  async function recovered(endpoint: EndpointRecord): Promise<void> {
    if (endpoint.failing_since || endpoint.failed_turns > 0 || endpoint.last_error)
      await deps.endpoints.update(endpoint.id, HEALTHY);
    const causes = logged.get(endpoint.id);
    if (causes) {
      logged.delete(endpoint.id);
      deps.logger?.info({ endpoint: endpoint.id, causes: [...causes] }, 'webhook deliveries work again');
    }
  }

  /**
   * A turn the service failed: logged once per endpoint and cause, counted, noted in the delivery
   * log and on the endpoint (best effort: Redis may be the cause), and backed off.
   */
  async function serviceFailed(id: string, error: unknown): Promise<number> {
    const cause: keyof typeof SERVICE_FAILURES =
      error instanceof SealedSecretUnreadable ? 'secret' : error instanceof ServiceUnavailableError ? 'store' : 'bug';
    const detail = `service error: ${SERVICE_FAILURES[cause]}`;
    const causes = logged.get(id) ?? new Set<FailureCause>();
    if (!causes.has(cause)) {
      causes.add(cause);
      logged.set(id, causes);
      if (logged.size > 10_000) logged.delete(logged.keys().next().value!);
      const reason = cause === 'bug' ? { err: error } : { reason: messageOf(error) };
      const message =
        'webhook deliveries of this endpoint fail on the service’s side; they are retried until their 24 h end';
      deps.logger?.error({ endpoint: id, cause, ...reason }, message);
    }
    const noted = async () => {
      await deps.deliveries.countFailures(cause);
      const endpoint = await deps.endpoints.get(id);
      if (!endpoint) return 0;
      const [first] = await deps.deliveries.read(id, 1);
      // Counted as an attempt at the delivery it stopped, so its log reads 1, 2, 3… as a receiver's
      // failures do, rather than the same attempt over and over.
      if (first)
        await Promise.all([
          deps.endpoints.logDeliveries(id, [unanswered(first.entry.event, first.attempts + 1, detail)]),
          deps.deliveries.settle(id, [], [first.entry.id]),
        ]);
      const failed = endpoint.failed_turns + 1;
      await deps.endpoints.update(id, { failed_turns: failed, last_error: detail });
      return failed;
    };
    const failed = await noted().catch(() => 1);
    return now() + backoffMs(failed, null, deps.random);
  }

  /** One endpoint's turn; returns when it is due again. Never throws. */
  return async function deliver(endpoint: string): Promise<number> {
    try {
      return await turn(endpoint);
    } catch (error) {
      return serviceFailed(endpoint, error);
    }
  };
}

/** One endpoint's turn at its deliveries. */
export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>;
