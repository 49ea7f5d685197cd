import type { Logger } from 'pino';
import { ServiceUnavailableError } from '../../internal/errors.ts';
import type { DeliveryStore } from './delivery-store.ts';
import type { WebhookDelivery } from './webhook-delivery.ts';

/** Turns one worker process runs at once (each one endpoint's). */
export const DELIVERY_SLOTS = 8;
/** Turns one holder's endpoints may have at once, across every worker process. */
export const HOLDER_SHARE = 4;
/**
 * How long a claimed endpoint is leased: a turn lasts at most its budget plus one request's
 * timeout (15 s); a worker that dies mid-turn leaves its endpoint due again after this.
 */
export const LEASE_MS = 30_000;
/** How often an idle worker looks for endpoints due. */
const POLL_MS = 250;

/** The running deliveries of one worker process. */
export interface RunningDeliveries {
  /** Stops taking turns and waits for those under way. */
  close(): Promise<void>;
}

/**
 * Runs webhook deliveries: up to {@link DELIVERY_SLOTS} turns at once, each one endpoint's
 * (webhook-delivery.ts). Endpoints with deliveries waiting are claimed oldest due first, each by
 * one worker at a time (a lease in Redis), and at most {@link HOLDER_SHARE} of one holder's at
 * once; after its turn an endpoint is due again behind those already waiting (or later, backed
 * off). So a slow, failing or flooded endpoint holds one slot and delays only itself, and one
 * holder's endpoints never hold every slot (BullMQ's groups, which would do this, are a Pro
 * feature; a queue of jobs per event let one endpoint hold them all).
 */
export function startDeliveries(deps: {
  store: Pick<DeliveryStore, 'claim' | 'finish'>;
  deliver: WebhookDelivery;
  logger?: Pick<Logger, 'warn'> | undefined;
  slots?: number;
  share?: number;
}): RunningDeliveries {
  const slots = deps.slots ?? DELIVERY_SLOTS;
  const running = new Set<Promise<void>>();
  let closed = false;
  let wake: (() => void) | null = null;
  let failing = false;

  async function turn(member: string): Promise<void> {
    const endpoint = member.slice(member.indexOf('\t') + 1);
    const next = await deps.deliver(endpoint);
    // Left to its lease when Redis is down: the endpoint is due again once the lease ends.
    await deps.store.finish(member, next).catch(() => undefined);
  }

  async function loop(): Promise<void> {
    while (!closed) {
      const free = slots - running.size;
      let claimed: string[] = [];
      if (free > 0) {
        try {
          claimed = await deps.store.claim(free, { leaseMs: LEASE_MS, share: deps.share ?? HOLDER_SHARE });
          failing = false;
        } catch (error) {
          // An outage is logged once by its connection; anything else once until it clears.
          if (!failing && !(error instanceof ServiceUnavailableError))
            deps.logger?.warn({ err: error }, 'webhook deliveries cannot claim endpoints; retrying');
          failing = true;
        }
      }
      for (const member of claimed) {
        const run: Promise<void> = turn(member).finally(() => {
          running.delete(run);
          wake?.();
        });
        running.add(run);
      }
      if (claimed.length > 0 && claimed.length === free) continue;
      // Idle, or every slot busy: until a turn ends or the next look.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, failing ? 1000 : POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  }

  const looping = loop();
  return {
    async close() {
      closed = true;
      wake?.();
      await looping;
      await Promise.allSettled([...running]);
    },
  };
}
