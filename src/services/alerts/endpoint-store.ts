import { z } from 'zod';
import { hashCodec, ownedRecords, type AlertRedis } from './alert-redis.ts';

const endpointSchema = z.object({
  id: z.string(),
  owner: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  status: z.enum(['enabled', 'disabled']),
  /** Why it was disabled (null while enabled). */
  disabled_reason: z.string().nullable(),
  /** The signing secret, sealed (secret-box.ts). */
  secret: z.string(),
  /** Secrets of earlier rotations still signing beside it (each until `until`), oldest first, sealed. */
  previous_secrets: z.array(z.object({ secret: z.string(), until: z.string() })).default([]),
  created_at: z.string(),
  /** The first failure of the receiver's current run of failures (null after a success). */
  failing_since: z.string().nullable(),
  /** Turns in a row that ended in a failure, the receiver's or the service's (the back-off's exponent). */
  failed_turns: z.coerce.number().int().default(0),
  /** What the last failed turn said (shown in the dashboard; null after a success). */
  last_error: z.string().nullable(),
});

/** A webhook endpoint as stored. */
export type EndpointRecord = z.infer<typeof endpointSchema>;

/** One delivery attempt, as the delivery log shows it (and stores it, one JSON line each). */
const deliveryAttemptSchema = z.object({
  at: z.string(),
  event_id: z.string(),
  attempt: z.number(),
  /** The receiver's HTTP status (null: no response). */
  status: z.number().nullable(),
  latency_ms: z.number(),
  error: z.string().nullable(),
});
export type DeliveryAttempt = z.infer<typeof deliveryAttemptSchema>;

/** An endpoint's failure state after a good turn (or re-enabled). */
export const HEALTHY = { failing_since: null, failed_turns: 0, last_error: null } as const;

/** Delivery attempts kept per endpoint. */
export const DELIVERIES_KEPT = 100;

/**
 * The webhook endpoints of every holder (`endpoint:{id}`, `owner:{owner}:endpoints`), each with
 * its delivery log (`endpoint:{id}:deliveries`, the last {@link DELIVERIES_KEPT} attempts).
 */
export function createEndpointStore(store: AlertRedis) {
  const { redis, key } = store;
  const deliveriesOf = (id: string) => key('endpoint', id, 'deliveries');
  const records = ownedRecords(
    store,
    { one: 'endpoint', many: 'endpoints' },
    hashCodec(endpointSchema, ['previous_secrets']),
  );
  return {
    ...records,
    /** Deletes an endpoint, its log and `also` (its deliveries); saved searches that named it keep their events. */
    delete: (record: Pick<EndpointRecord, 'id' | 'owner'>, also: readonly string[] = []) =>
      records.delete(record, [deliveriesOf(record.id), ...also]),

    /** Adds attempts (oldest first) to an endpoint's delivery log, which keeps the last {@link DELIVERIES_KEPT}. */
    logDeliveries: (id: string, attempts: readonly DeliveryAttempt[]) =>
      store.run(async () => {
        if (attempts.length === 0) return;
        const kept = attempts.slice(-DELIVERIES_KEPT).map((attempt) => JSON.stringify(attempt));
        store.unwrap(
          await redis
            .multi()
            .lpush(deliveriesOf(id), ...kept)
            .ltrim(deliveriesOf(id), 0, DELIVERIES_KEPT - 1)
            .exec(),
        );
      }),

    /** An endpoint's last delivery attempts, newest first. */
    deliveries: (id: string, limit: number) =>
      store.run(async () =>
        (await redis.lrange(deliveriesOf(id), 0, limit - 1)).map((line) =>
          deliveryAttemptSchema.parse(JSON.parse(line)),
        ),
      ),
  };
}

/** The endpoint store. */
export type EndpointStore = ReturnType<typeof createEndpointStore>;
