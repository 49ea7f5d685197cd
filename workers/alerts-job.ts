import type { Logger } from 'pino';
import type { JobHandler } from '../src/queues/consumers.ts';
import type { MatchPassResult } from '../src/services/alerts/match-pass.ts';

/**
 * The handler of the `alerts` queue: one matching pass over every post written since the last
 * (services/alerts/match-pass.ts). Its claim is keyed by the job id: a re-run takes it again.
 */
export function alertsJob(deps: {
  pass: (run: string) => Promise<MatchPassResult>;
  logger: Pick<Logger, 'debug'>;
}): JobHandler<'alerts'> {
  return async (_payload, job) => {
    const started = performance.now();
    const result = await deps.pass(job.id ?? 'unnamed');
    deps.logger.debug(
      { job: job.id, total_ms: Math.round(performance.now() - started), ...result },
      'alerts pass done',
    );
    return result;
  };
}
