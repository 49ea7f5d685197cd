import type { Command } from 'commander';
import type { FailedObservationJob } from '../../services/intake/failures.ts';
import { openIntakeFailures } from '../../start/core.ts';
import { EXIT, out, runCommand, type CommandContext } from '../context.ts';

/** `intake failures [--json]` and `intake retry [ID…|--all]`: observations that could not be indexed. */
export function registerIntake(program: Command): void {
  const intake = program.command('intake').description('inspect and requeue observations that could not be indexed');

  intake
    .command('failures')
    .description('list failed observation jobs (each up to 500 observations) with why they failed')
    .option('--json', "one JSON object per job and line, with each observation's kind and platform id")
    .action((options: { json?: boolean }) =>
      runCommand(async (context) => {
        const failures = await open(context);
        if (!failures) return EXIT.failed;
        let jobs = 0;
        let observations = 0;
        for await (const job of failures.list()) {
          jobs++;
          observations += job.observationCount;
          out(options.json ? JSON.stringify(toJson(job)) : toLine(job));
        }
        if (!options.json) {
          process.stderr.write(
            jobs === 0
              ? 'no failed observation jobs\n'
              : `${jobs} failed job(s), ${observations} observation(s); requeue with \`social-search intake retry ID…\` or \`--all\`\n`,
          );
        }
      }),
    );

  intake
    .command('retry')
    .description('requeue failed observation jobs with a fresh set of attempts')
    .argument('[ids...]', 'job ids, as `intake failures` lists them')
    .option('--all', 'every failed job')
    .action((ids: string[], options: { all?: boolean }) =>
      runCommand(async (context) => {
        if (ids.length > 0 === (options.all === true)) {
          process.stderr.write(
            'social-search: name the jobs to requeue (`intake retry ID…`) or pass --all, not both\n',
          );
          return EXIT.usage;
        }
        const failures = await open(context);
        if (!failures) return EXIT.failed;
        const outcome = await failures.retry(options.all ? 'all' : ids);
        out(
          outcome.retried.length === 0
            ? 'no failed jobs requeued'
            : `requeued ${outcome.retried.length} job(s): ${outcome.retried.join(' ')}`,
        );
        if (outcome.notFailed.length > 0) {
          process.stderr.write(
            `social-search: not in the failed set (unknown, or already requeued): ${outcome.notFailed.join(' ')}\n`,
          );
          return EXIT.failed;
        }
      }),
    );
}

/** The failures service, or null (and a message) when Redis does not answer. */
async function open({ config, connections, use }: CommandContext) {
  const failures = use(openIntakeFailures(config, connections));
  if (await connections.redisReady()) return failures;
  process.stderr.write(`social-search: Redis at ${config.REDIS_URL} is not reachable\n`);
  return null;
}

/** The CLI's JSON (snake_case, a wire shape). */
function toJson(job: FailedObservationJob) {
  return {
    id: job.id,
    request_id: job.requestId,
    observation_count: job.observationCount,
    attempts: job.attempts,
    failed_reason: job.failedReason,
    failed_at: job.failedAt?.toISOString() ?? null,
    kinds: job.kinds,
    observations: job.observations.map((o) => ({ kind: o.kind, platform_id: o.platformId })),
  };
}

/** One tab-separated line: id, when, request, size, attempts, kinds, reason (on one line, shortened). */
function toLine(job: FailedObservationJob): string {
  const reason = job.failedReason.replace(/\s+/g, ' ').trim();
  const kinds = Object.entries(job.kinds)
    .map(([kind, n]) => `${kind}=${n}`)
    .join(',');
  return [
    job.id,
    job.failedAt?.toISOString() ?? '-',
    job.requestId ?? '-',
    `${job.observationCount} observations`,
    `${job.attempts} attempts`,
    kinds || '-',
    reason.length > 300 ? `${reason.slice(0, 299)}…` : reason,
  ].join('\t');
}
