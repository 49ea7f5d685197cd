import type { Logger } from 'pino';
import type { JobHandler } from '../queues/consumers.ts';
import type { MatchResult } from '../services/alerts/matching.ts';

/**
 * The handler of the `alerts` queue: one recovery pass over the posts written but not matched at
 * their write (services/alerts/recovery-pass.ts). Its claim is keyed by the job id: a re-run takes
 * it again.
 */
export function alertsJob(deps: {
  pass: (run: string) => Promise<MatchResult>;
  logger: Pick<Logger, 'debug'>;
}): JobHandler<'alerts'> {
  return async (_payload, job) => {
    const started = performance.now();
    const result = await deps.pass(job.id ?? 'unnamed');
    deps.logger.debug(
      { job: job.id, total_ms: Math.round(performance.now() - started), ...result },
      'alerts recovery pass done',
    );
    return result;
  };
}
