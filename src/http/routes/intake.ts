import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { intakeResponseSchema, problemSchema } from '../../contract/api.ts';
import { MalformedRequestError } from '../../internal/errors.ts';
import {
  MAX_INTAKE_BYTES,
  MAX_OBSERVATIONS_PER_REQUEST,
  entriesOfArray,
  type IntakeEntry,
  type IntakeService,
  type RejectedLine,
} from '../../services/intake/intake-service.ts';
import type { KeyService } from '../../services/keys/key-service.ts';
import { readNdjson } from '../../services/intake/ndjson-reader.ts';
import { requireKey } from '../plugins/auth.ts';
import { createBodyBudget } from '../plugins/body-budget.ts';

const NDJSON = 'application/x-ndjson';

/**
 * An intake body, split into entries by its content type's parser: NDJSON line by line (a bad
 * line is rejected alone), or a JSON array. A class, so no JSON value can imitate it.
 */
class IntakeBody {
  constructor(
    readonly entries: IntakeEntry[],
    readonly rejected: RejectedLine[],
  ) {}
}

/**
 * The request body as the route declares it. Each observation is validated on its own by the
 * intake service (a bad one never blocks the others), so the body schema is the container.
 */
const intakeBodySchema = z.instanceof(IntakeBody).meta({
  description:
    'Observations (operations contract §3: account, post, post_enrichment, account_enrichment), as NDJSON (application/x-ndjson, one per line) or a JSON array (application/json); at most 5,000 and 20 MiB.',
});

/** The intake endpoint of operations contract §2. */
export const intakeRoutes: FastifyPluginAsyncZod<{
  keys: Pick<KeyService, 'authenticate' | 'requireScope'>;
  intake: IntakeService;
  /** Request bodies this node reads at once, in bytes (config INTAKE_MAX_IN_FLIGHT_MB); absent: unbounded. */
  bytesInFlight?: number;
}> = async (app, { keys, intake, bytesInFlight }) => {
  const budget =
    bytesInFlight === undefined ? null : createBodyBudget({ maxBytes: bytesInFlight, largest: MAX_INTAKE_BYTES });
  // NDJSON is read line by line as it arrives (never held whole), so one bad line never fails the
  // whole body and an oversized one is refused as soon as it passes a limit.
  app.addContentTypeParser(NDJSON, async (_request: unknown, payload: Readable) => {
    const { entries, rejected } = await readNdjson(payload, {
      maxBytes: MAX_INTAKE_BYTES,
      maxEntries: MAX_OBSERVATIONS_PER_REQUEST,
    });
    return new IntakeBody(entries, rejected);
  });
  // JSON with Fastify's own (prototype-poisoning-safe) parser, then it must be an array: 400 if not.
  const json = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: MAX_INTAKE_BYTES },
    (request, body, done) =>
      json(request, typeof body === 'string' ? body : body.toString('utf8'), (error, value) => {
        if (error) return done(error, undefined);
        try {
          done(null, new IntakeBody(entriesOfArray(value), []));
        } catch (notArray) {
          done(notArray instanceof Error ? notArray : new Error(String(notArray)), undefined);
        }
      }),
  );

  app.post(
    '/internal/v1/social/observations',
    {
      // The key first: a request refused for it spends no room of the budget.
      onRequest: budget ? [requireKey(keys, 'ingest'), budget.reserve] : requireKey(keys, 'ingest'),
      bodyLimit: MAX_INTAKE_BYTES,
      schema: {
        operationId: 'ingestObservations',
        querystring: z.strictObject({
          wait: z.enum(['true', 'false', '1', '0', 'vectors']).optional().meta({
            description:
              '`true`: answer 200 once every accepted observation can be read and searched by its words (vectors follow). `vectors`: also wait for the vectors of their text (semantic ranking in place). Absent or `false`: answer 202 once queued.',
          }),
        }),
        body: intakeBodySchema,
        response: {
          200: intakeResponseSchema,
          202: intakeResponseSchema,
          413: problemSchema,
          503: problemSchema,
          504: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const wait = request.query.wait !== undefined && request.query.wait !== 'false' && request.query.wait !== '0';
      // The model embeds ~50 long texts a second on two cores: a waited request of 1,000 long
      // posts answered in 21.5 s with its vectors, 2.1 s without (bench/intake.md, "Long texts").
      const embedLater = wait && request.query.wait !== 'vectors';
      const input = request.body;
      if (input.entries.length === 0 && input.rejected.length === 0) {
        throw new MalformedRequestError('The body carries no observations.');
      }
      const { accepted, rejected } = await intake.submit(
        { entries: input.entries, rejected: input.rejected },
        { wait, requestId: request.id, ...(embedLater ? { embedLater } : {}) },
      );
      request.log.info({ accepted, rejected: rejected.length, wait: request.query.wait ?? false }, 'intake');
      return reply.code(wait ? 200 : 202).send({ request_id: request.id, accepted, rejected });
    },
  );
};
