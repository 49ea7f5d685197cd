import type { JobHandler } from '../src/queues/consumers.ts';
import type { WebhookDelivery } from '../src/services/alerts/webhook-delivery.ts';

/**
 * The handler of the `webhooks` queue: one attempt at one event for one endpoint. A failure worth
 * another attempt throws (RetryDeliveryError), and the queue retries it on the delivery schedule.
 */
export function webhooksJob(deps: { deliver: WebhookDelivery }): JobHandler<'webhooks'> {
  return (payload, job) => deps.deliver(payload, { attempt: job.attempt, queuedAt: job.queuedAt });
}
