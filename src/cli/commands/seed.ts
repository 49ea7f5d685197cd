import { InvalidArgumentError, type Command } from 'commander';
import { randomBytes } from 'node:crypto';
import type { IntakeService } from '../../services/intake/intake-service.ts';
import { ingestStream, type StreamIngestResult } from '../../services/intake/stream-ingest.ts';
import { openIntake } from '../../start/core.ts';
import { EXIT, out, runCommand } from '../context.ts';

/** Pushes a generated dataset through the real intake path. */
export async function seedDataset(
  intake: IntakeService,
  options: {
    posts: number;
    accounts: number;
    seed: number;
    wait: boolean;
    /** Re-observe accounts and recent posts over time (a metric history with growth curves). */
    history?: boolean;
    /** The dataset's present: its last observations are from just before it (default: the generator's fixed date). */
    now?: Date;
    embedLater?: boolean;
    onProgress?: (accepted: number) => void;
    onBackpressure?: (waitMs: number) => void;
    onUnavailable?: (waitMs: number) => void;
  },
): Promise<StreamIngestResult> {
  // Loaded by the commands that seed only (its vocabulary is a large table).
  const { generateObservations } = await import('../../seed/generator.ts');
  let line = 0;
  const entries = (function* () {
    for (const value of generateObservations({
      posts: options.posts,
      accounts: options.accounts,
      seed: options.seed,
      history: options.history === true,
      ...(options.now ? { now: options.now } : {}),
    })) {
      yield { line: ++line, value };
    }
  })();
  return ingestStream(entries, intake, {
    wait: options.wait,
    ...(options.embedLater ? { embedLater: true } : {}),
    requestId: `seed_${randomBytes(9).toString('base64url')}`,
    waitTimeoutMs: 6 * 3600 * 1000,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.onBackpressure ? { onBackpressure: options.onBackpressure } : {}),
    ...(options.onUnavailable ? { onUnavailable: options.onUnavailable } : {}),
    onRejected: (r) => process.stderr.write(`${JSON.stringify(r)}\n`),
  });
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`expected a non-negative integer, got ${value}`);
  return n;
}

/** An ISO 8601 time with its offset, for `--now`. */
function instant(value: string): Date {
  const at = new Date(value);
  if (!/^\d{4}-\d\d-\d\dT.*(Z|[+-]\d\d:\d\d)$/.test(value) || Number.isNaN(at.getTime()))
    throw new InvalidArgumentError(`expected an ISO 8601 time with its offset (2026-11-01T00:00:00Z), got ${value}`);
  return at;
}

/** `seed --posts N --accounts M [--seed S] [--now T] [--history] [--wait]`. */
export function registerSeed(program: Command): void {
  program
    .command('seed')
    .description('generate a realistic, reproducible demo dataset and push it through the intake')
    .requiredOption('--posts <n>', 'number of posts', positiveInt)
    .requiredOption('--accounts <n>', 'number of accounts', positiveInt)
    .option('--seed <s>', 'random seed (same seed and --now, same data)', positiveInt, 1)
    .option(
      '--now <time>',
      "the dataset's present, ISO 8601 (default: the current time): its newest posts and observations come just before it",
      instant,
    )
    .option('--history', 're-observe accounts and recent posts over time, for metric histories and growth')
    .option('--wait', 'return only when everything is indexed and searchable')
    .action(
      (options: { posts: number; accounts: number; seed: number; now?: Date; history?: boolean; wait?: boolean }) =>
        runCommand(async ({ config, connections, use }) => {
          if (options.accounts === 0 && options.posts > 0) {
            process.stderr.write('social-search: posts need at least one account\n');
            return EXIT.usage;
          }
          const { intake } = use(openIntake(config, connections));
          await connections.redisReady();
          let queued = 0;
          const result = await seedDataset(intake, {
            ...options,
            // The present by default, so that "the last 30 days" of counts and growth hold the data.
            now: options.now ?? new Date(),
            history: options.history === true,
            wait: options.wait === true,
            onProgress: (n) => process.stderr.write(`\rqueued ${(queued = n)} observations                          `),
            onBackpressure: () => process.stderr.write(`\rqueued ${queued} observations, waiting for the workers…`),
            onUnavailable: (ms) =>
              process.stderr.write(`\rqueued ${queued} observations, the queue did not answer; again in ${ms} ms…`),
          });
          process.stderr.write('\n');
          out(JSON.stringify(result));
        }),
    );
}
