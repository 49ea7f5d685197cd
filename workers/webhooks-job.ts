import type { JobHandler } from '../src/queues/consumers.ts';
import type { WebhookDelivery } from '../src/services/alerts/webhook-delivery.ts';

/**
 * The handler of the `webhooks` queue: one run at a batch of events for one endpoint. When an
 * event is worth another attempt, the job keeps what is left of the batch and throws
 * (RetryDeliveryError): the queue retries it on the delivery schedule.
 */
export function webhooksJob(deps: { deliver: WebhookDelivery }): JobHandler<'webhooks'> {
  return (payload, job) => deps.deliver(payload, { queuedAt: job.queuedAt, keep: job.keep });
}
