import type { FastifyReply, FastifyRequest } from 'fastify';
import { IntakeBusyError } from '../../internal/errors.ts';

/** A node's bound on the request bodies one route reads at once. */
export interface BodyBudget {
  /**
   * An `onRequest` hook (after authentication): reserves the request's declared length (the
   * largest a body may be when it declares none), or refuses it with a 503 problem and
   * Retry-After before a byte of its body is read; the reservation ends with its response.
   */
  reserve(this: void, request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

const MIB = 2 ** 20;

/**
 * Creates the budget of one route on this node: `maxBytes` of bodies at once, each counted as its
 * `Content-Length`, or as `largest` (the route's body limit) when chunked. A request always goes
 * when nothing else is reserved, so one body of the largest size always fits.
 *
 * Why (bench/intake.md, "Intake bodies in flight"): every intake request is parsed whole and then
 * waits for its turn at validation, so an API node's memory grew with the requests sent at once:
 * 220 MiB with one request of 5,000 observations, 398 with 8, 586 with 32 (the slowest answer
 * 17 s, the heap at its 512 MiB limit), and a node serving searches with it slowed them all.
 */
export function createBodyBudget(options: { maxBytes: number; largest: number }): BodyBudget {
  let reserved = 0;
  return {
    async reserve(request, reply) {
      const declared = Number(request.headers['content-length']);
      const bytes =
        Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, options.largest) : options.largest;
      if (reserved > 0 && reserved + bytes > options.maxBytes) {
        throw new IntakeBusyError(
          `This API node is already reading ${(reserved / MIB).toFixed(1)} MiB of intake requests (its bound: ${(options.maxBytes / MIB).toFixed(0)} MiB); nothing from this request was read. Send it again after Retry-After.`,
        );
      }
      reserved += bytes;
      // Released once: when the response is sent, or when the connection goes without one.
      let held = true;
      const release = () => {
        if (held) reserved -= bytes;
        held = false;
      };
      reply.raw.once('finish', release);
      reply.raw.once('close', release);
    },
  };
}
