import type { Logger } from 'pino';
import { RetryDeliveryError } from '../../queues/registry.ts';
import type { AlertStore, EndpointRecord } from './alert-store.ts';
import type { SecretBox } from './secret-box.ts';
import { sendWebhook, type SendOutcome, type WebhookMessage } from './webhook-sender.ts';

/** How long deliveries of one event are retried, and how long an endpoint may fail before it is disabled. */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** What became of one delivery job. */
export type DeliveryResult = 'delivered' | 'failed' | 'endpoint-disabled' | 'endpoint-gone' | 'expired';

/** One delivery job: an event for an endpoint, first queued at `queuedAt` (epoch ms). */
export interface DeliveryJob {
  endpoint_id: string;
  event_id: string;
  body: string;
}

/** The secrets signing now: the current one, and the previous during its overlap. */
export function signingSecrets(endpoint: EndpointRecord, box: SecretBox, now: number): string[] {
  const secrets = [box.open(endpoint.secret)];
  if (endpoint.previous_secret && endpoint.previous_secret_until && Date.parse(endpoint.previous_secret_until) > now)
    secrets.push(box.open(endpoint.previous_secret));
  return secrets;
}

/**
 * Creates the delivery of one job: sign, send (webhook-sender.ts), log the attempt, and keep the
 * endpoint's state. A 2xx ends a run of failures; a 410 disables the endpoint at once; timeouts,
 * connection errors, 429 and 5xx are retried (RetryDeliveryError) until 24 h after the event was
 * first queued, and an endpoint that has failed throughout 24 h is disabled. Other statuses are
 * answers, not outages: logged, not retried (the event stays pullable).
 */
export function createWebhookDelivery(deps: {
  store: Pick<AlertStore, 'endpoint' | 'updateEndpoint' | 'logDelivery'>;
  box: SecretBox;
  allowPrivate: boolean;
  userAgent: string;
  send?: typeof sendWebhook;
  logger?: Pick<Logger, 'info'>;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  const send = deps.send ?? sendWebhook;

  async function disable(endpoint: EndpointRecord, reason: string): Promise<void> {
    await deps.store.updateEndpoint(endpoint.id, { status: 'disabled', disabled_reason: reason });
    deps.logger?.info({ endpoint: endpoint.id, reason }, 'webhook endpoint disabled');
  }

  async function record(endpoint: EndpointRecord, job: DeliveryJob, attempt: number, outcome: SendOutcome) {
    await deps.store.logDelivery(endpoint.id, {
      at: new Date(now()).toISOString(),
      event_id: job.event_id,
      attempt,
      status: outcome.status,
      latency_ms: outcome.latencyMs,
      error: outcome.error,
    });
  }

  return async function deliver(
    job: DeliveryJob,
    context: { attempt: number; queuedAt: number },
  ): Promise<DeliveryResult> {
    const endpoint = await deps.store.endpoint(job.endpoint_id);
    if (!endpoint) return 'endpoint-gone';
    if (endpoint.status === 'disabled') return 'endpoint-disabled';
    const message: WebhookMessage = {
      id: job.event_id,
      body: job.body,
      secrets: signingSecrets(endpoint, deps.box, now()),
    };
    const outcome = await send(new URL(endpoint.url), message, {
      allowPrivate: deps.allowPrivate,
      userAgent: deps.userAgent,
    });
    await record(endpoint, job, context.attempt, outcome);
    switch (outcome.result) {
      case 'delivered':
        if (endpoint.failing_since) await deps.store.updateEndpoint(endpoint.id, { failing_since: null });
        return 'delivered';
      case 'gone':
        await disable(endpoint, `the receiver answered 410 Gone at ${new Date(now()).toISOString()}`);
        return 'endpoint-disabled';
      case 'failed':
        return 'failed';
      case 'retry': {
        const failingSince = endpoint.failing_since ?? new Date(now()).toISOString();
        if (!endpoint.failing_since) await deps.store.updateEndpoint(endpoint.id, { failing_since: failingSince });
        if (now() - Date.parse(failingSince) >= RETRY_WINDOW_MS) {
          await disable(endpoint, `every delivery failed for 24 hours (last: ${outcome.error ?? 'no answer'})`);
          return 'endpoint-disabled';
        }
        if (now() - context.queuedAt >= RETRY_WINDOW_MS) return 'expired';
        throw new RetryDeliveryError(outcome.error ?? 'delivery failed', outcome.retryAfterMs);
      }
    }
  };
}

/** The delivery of one job. */
export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>;
