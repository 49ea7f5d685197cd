import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { intakeResponseSchema, problemSchema } from '../../contract/api.ts';
import { MalformedRequestError } from '../../internal/errors.ts';
import {
  MAX_INTAKE_BYTES,
  entriesOfArray,
  parseNdjson,
  type IntakeService,
} from '../../services/intake/intake-service.ts';
import type { KeyService } from '../../services/keys/key-service.ts';
import { requireKey } from '../plugins/auth.ts';

const NDJSON = 'application/x-ndjson';

/** The NDJSON parser's output; a class, so no JSON body can imitate it. */
class NdjsonBody {
  constructor(readonly text: string) {}
}

/** The intake endpoint of operations contract §2. */
export const intakeRoutes: FastifyPluginAsyncZod<{
  keys: Pick<KeyService, 'authenticate' | 'requireScope'>;
  intake: IntakeService;
}> = async (app, { keys, intake }) => {
  // NDJSON arrives as text and is split here, so one bad line never fails the whole body.
  app.addContentTypeParser(NDJSON, { parseAs: 'string', bodyLimit: MAX_INTAKE_BYTES }, (_req, body, done) =>
    done(null, new NdjsonBody(body as string)),
  );

  app.post(
    '/internal/v1/social/observations',
    {
      onRequest: requireKey(keys, 'ingest'),
      bodyLimit: MAX_INTAKE_BYTES,
      schema: {
        operationId: 'ingestObservations',
        querystring: z.strictObject({ wait: z.enum(['true', 'false', '1', '0']).optional() }),
        body: z.unknown(),
        response: { 200: intakeResponseSchema, 202: intakeResponseSchema, 413: problemSchema, 504: problemSchema },
      },
    },
    async (request, reply) => {
      const wait = request.query.wait === 'true' || request.query.wait === '1';
      const body = request.body;
      const input =
        body instanceof NdjsonBody ? parseNdjson(body.text) : { entries: entriesOfArray(body), rejected: [] };
      if (input.entries.length === 0 && input.rejected.length === 0) {
        throw new MalformedRequestError('The body carries no observations.');
      }
      const { accepted, rejected } = await intake.submit(input, { wait, requestId: request.id });
      request.log.info({ accepted, rejected: rejected.length, wait }, 'intake');
      return reply.code(wait ? 200 : 202).send({ request_id: request.id, accepted, rejected });
    },
  );
};
