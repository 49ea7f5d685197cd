import type { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { INDEX_NAMES, type IndexName } from '../../engine/elasticsearch/names.ts';
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
      runCommand(async ({ indexAdmin, queue, visibility }) => {
        if (!INDEX_NAMES.includes(name as IndexName)) {
          process.stderr.write(`social-search: unknown index "${name}"; expected ${INDEX_NAMES.join(' or ')}\n`);
          return EXIT.usage;
        }
        // Writes pause while the copy runs (observations keep queueing in Redis, none is lost);
        // reads keep being served by the old index until the atomic alias swap.
        await queue.pause();
        try {
          while ((await queue.getActiveCount()) > 0) await sleep(200);
          const result = await indexAdmin.rebuild(name as IndexName, {
            keepOld: options.keepOld === true,
            onProgress: (n) => process.stderr.write(`\rcopied ${n}`),
          });
          process.stderr.write('\n');
          // Search nodes must stop serving first pages from snapshots of the old index.
          await visibility.advance();
          out(`rebuilt ${name}: ${result.copied} documents, ${result.from.join(', ') || '(none)'} → ${result.to}`);
        } finally {
          await queue.resume();
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
