import { createHash } from 'node:crypto';
import { QUEUES } from '../../queues/registry.ts';
import type { DeliveryEvent, DeliveryJob } from './webhook-delivery.ts';

/** A delivery to queue: one event for one endpoint, its body whole or by reference (webhook-delivery.ts). */
export type QueuedDelivery = { endpoint_id: string } & DeliveryEvent;

/** The most events one delivery job sends. */
export const EVENTS_PER_DELIVERY_JOB = 50;

/** A delivery job and the id it is queued under. */
export interface QueuedDeliveryJob {
  id: string;
  job: DeliveryJob;
}

/**
 * The delivery jobs of `deliveries`: each endpoint's events, in their order, split into jobs of at
 * most {@link EVENTS_PER_DELIVERY_JOB}, and over at least as many jobs as the queue runs at once
 * (while there are events enough), so that a slow receiver still gets that many requests in
 * flight. A job's id is its endpoint's and its event's (one event) or a digest of its event ids:
 * the same jobs queued again (a pass re-run after a crash) are not queued twice.
 */
export function deliveryBatches(deliveries: readonly QueuedDelivery[]): QueuedDeliveryJob[] {
  const byEndpoint = new Map<string, QueuedDelivery[]>();
  for (const delivery of deliveries) {
    const list = byEndpoint.get(delivery.endpoint_id);
    if (list) list.push(delivery);
    else byEndpoint.set(delivery.endpoint_id, [delivery]);
  }
  const jobs: QueuedDeliveryJob[] = [];
  for (const [endpoint, list] of byEndpoint) {
    const count = Math.max(
      Math.ceil(list.length / EVENTS_PER_DELIVERY_JOB),
      Math.min(list.length, QUEUES.webhooks.concurrency),
    );
    // Sizes differing by one at most: 20 events make 8 jobs of 2 or 3.
    for (let k = 0, from = 0; k < count; k++) {
      const to = from + Math.floor(list.length / count) + (k < list.length % count ? 1 : 0);
      const events = list.slice(from, to).map(({ endpoint_id: _endpoint, ...event }) => event);
      jobs.push({ id: `${endpoint}.${jobKey(events.map((e) => e.event_id))}`, job: { endpoint_id: endpoint, events } });
      from = to;
    }
  }
  return jobs;
}

/** The event's id for one event; else a digest of the ids, whatever their order. */
function jobKey(eventIds: readonly string[]): string {
  if (eventIds.length === 1) return eventIds[0]!;
  const digest = createHash('sha256')
    .update([...eventIds].sort().join('\n'))
    .digest('base64url');
  return `batch_${digest.slice(0, 27)}`;
}
