import type { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { INDEX_NAMES, type IndexName } from '../../engine/elasticsearch/names.ts';
import { createEmbeddingQueue } from '../../intake/embedding-queue.ts';
import { createRecordEmbeddings } from '../../intake/record-embeddings.ts';
import { EXIT, out, runCommand } from '../context.ts';

/** `indices apply | rebuild NAME | status` (operations contract §1). */
export function registerIndices(program: Command): void {
  const indices = program.command('indices').description('install templates, rebuild and inspect indices');

  indices
    .command('apply')
    .description('install the templates of index-templates/ and create missing indices (idempotent)')
    .action(() =>
      runCommand(async ({ indexAdmin }) => {
        for (const line of await indexAdmin.apply()) {
          out(`${line.action.padEnd(9)} ${line.object}${line.detail ? ` (${line.detail})` : ''}`);
        }
      }),
    );

  indices
    .command('rebuild')
    .description('rebuild an index from its current template with zero read downtime')
    .argument('<name>', INDEX_NAMES.join(' | '))
    .option('--keep-old', 'keep the previous concrete index after the alias swap')
    .action((name: string, options: { keepOld?: boolean }) =>
      runCommand(async (runtime, logger) => {
        const { indexAdmin, queue, visibility, config } = runtime;
        if (!INDEX_NAMES.includes(name as IndexName)) {
          process.stderr.write(`social-search: unknown index "${name}"; expected ${INDEX_NAMES.join(' or ')}\n`);
          return EXIT.usage;
        }
        // With a model configured, the copy also embeds every record whose vector is missing or
        // from another model: this is how existing data gets vectors, or moves to a new model.
        const embedder = runtime.embedder();
        await embedder.ready();
        const records = embedder.status().state === 'ready' ? createRecordEmbeddings({ engine: runtime.engine, embedder }) : null;
        if (records) logger.warn(`records without a current ${records.modelId} vector are embedded during the copy`);
        // Writes pause while the copy runs (observations and embeddings keep queueing in Redis,
        // none is lost); reads keep being served by the old index until the atomic alias swap.
        const embeddings = createEmbeddingQueue({ connection: runtime.redis, prefix: config.REDIS_PREFIX });
        const paused = [queue, embeddings];
        await Promise.all(paused.map((q) => q.pause()));
        try {
          while ((await Promise.all(paused.map((q) => q.getActiveCount()))).some((n) => n > 0)) await sleep(200);
          const result = await indexAdmin.rebuild(name as IndexName, {
            keepOld: options.keepOld === true,
            onProgress: (n) => process.stderr.write(`\rcopied ${n}`),
            ...(records ? { transform: (page: any[]) => records.withVectors(name as IndexName, page) } : {}),
          });
          process.stderr.write('\n');
          // Search nodes must stop serving first pages from snapshots of the old index.
          await visibility.advance();
          out(`rebuilt ${name}: ${result.copied} documents, ${result.from.join(', ') || '(none)'} → ${result.to}`);
        } finally {
          await Promise.all(paused.map((q) => q.resume()));
          await embeddings.close();
        }
      }),
    );

  indices
    .command('status')
    .description('template versions, document counts, health and queue depth')
    .option('--json', 'print JSON')
    .action((options: { json?: boolean }) =>
      runCommand(async ({ indexAdmin, queue }) => {
        const status = await indexAdmin.status();
        const jobs = { ...(await queue.getJobCounts('waiting', 'active', 'delayed', 'failed')), paused: (await queue.isPaused()) ? 1 : 0 };
        if (options.json) {
          out(JSON.stringify({ indices: status, queue: jobs }));
          return;
        }
        for (const s of status) {
          out(
            `${s.name}\t${s.read_alias} → ${s.indices.join(',') || '(missing)'}\tdocs=${s.docs}\thealth=${s.health}\t` +
              `template=v${s.template_version ?? '-'}${s.up_to_date ? '' : ' (needs rebuild or apply)'}`,
          );
        }
        out(`queue\t${Object.entries(jobs).map(([k, v]) => `${k}=${v}`).join(' ')}`);
      }),
    );
}
