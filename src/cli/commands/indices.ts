import type { Command } from 'commander';
import { INDEX_NAMES, type HistoryStatus, type IndexStatus } from '../../engine/index-admin.ts';
import { openIndexOperations } from '../../start/index-operations.ts';
import { EXIT, out, runCommand } from '../context.ts';

/** The template column of `indices status`, with the one command that brings the index up to date. */
function templateText(status: IndexStatus): string {
  if (status.indices.length === 0) return 'template=- (missing: run `social-search indices apply`)';
  const version = `template=v${status.template_version ?? '-'}`;
  // A changed template never reaches an existing index in place (apply says so too): only a copy does.
  return status.up_to_date
    ? version
    : `${version} (built from an older template: run \`social-search indices rebuild ${status.name}\`)`;
}

/**
 * Where each shard copy is, compactly: `0p@node-1,0r@node-2` (shard, primary or replica, node),
 * with the state when not started and `unassigned` for a copy no node holds.
 */
function allocationText(status: IndexStatus): string {
  const several = status.indices.length > 1;
  return status.allocation
    .map(
      (c) =>
        `${several ? `${c.index}/` : ''}${c.shard}${c.primary ? 'p' : 'r'}@${c.node ?? 'unassigned'}${c.state === 'STARTED' || c.node === null ? '' : `(${c.state})`}`,
    )
    .join(',');
}

/** `indices apply | rebuild NAME | status` (operations contract §1). */
export function registerIndices(program: Command): void {
  const indices = program.command('indices').description('install templates, rebuild and inspect indices');

  indices
    .command('apply')
    .description('install the templates of index-templates/ and create missing indices (idempotent)')
    .action(() =>
      runCommand(async ({ config, connections, logger, use }) => {
        const { admin } = use(openIndexOperations(config, connections, logger));
        for (const line of await admin.apply()) {
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
      runCommand(async ({ config, connections, logger, use }) => {
        const index = INDEX_NAMES.find((n) => n === name);
        if (index === undefined) {
          process.stderr.write(`social-search: unknown index "${name}"; expected ${INDEX_NAMES.join(' or ')}\n`);
          return EXIT.usage;
        }
        // Ctrl-C or TERM stops the copy cleanly (partial copy deleted, live index untouched,
        // intake resumed); a second signal exits at once.
        const abort = new AbortController();
        const stop = () => {
          if (abort.signal.aborted) process.exit(130);
          process.stderr.write(`\nstopping: removing the partial copy of ${name} and resuming intake\n`);
          abort.abort();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
        try {
          await connections.redisReady();
          const { rebuilds } = use(openIndexOperations(config, connections, logger));
          const outcome = await rebuilds.rebuild(index, {
            keepOld: options.keepOld === true,
            signal: abort.signal,
            // One line rewritten on a terminal; a line each in a log, where `\r` would join them into one.
            onProgress: (n) => process.stderr.write(process.stderr.isTTY ? `\rcopied ${n}` : `copied ${n}\n`),
          });
          if (process.stderr.isTTY) process.stderr.write('\n');
          if (outcome.status === 'busy') {
            process.stderr.write(
              `social-search: a rebuild of ${name} is already running (${outcome.heldBy}); wait for it to finish\n`,
            );
            return EXIT.failed;
          }
          out(`rebuilt ${name}: ${outcome.copied} documents, ${outcome.from.join(', ') || '(none)'} → ${outcome.to}`);
          return EXIT.ok;
        } catch (error) {
          process.stderr.write('\n');
          if (!abort.signal.aborted) throw error;
          process.stderr.write(`social-search: rebuild of ${name} cancelled; the live index is unchanged\n`);
          return 130;
        } finally {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
        }
      }),
    );

  indices
    .command('status')
    .description('template versions, document counts, health and queue depth')
    .option('--json', 'print JSON')
    .action((options: { json?: boolean }) =>
      runCommand(async ({ config, connections, logger, use }) => {
        const operations = use(openIndexOperations(config, connections, logger));
        await connections.redisReady();
        const status = await operations.admin.status();
        const history = await operations.admin.historyStatus();
        const depths = await operations.queueDepths();
        if (options.json) {
          // `queue` is the observations queue, as before `queues` named all three.
          out(JSON.stringify({ indices: status, history, queue: depths.observations, queues: depths }));
          return;
        }
        for (const s of status) {
          out(
            `${s.name}\t${s.read_alias} → ${s.indices.join(',') || '(missing)'}\tdocs=${s.docs}\thealth=${s.health}\t` +
              templateText(s) +
              (s.shards
                ? `\tshards=${s.shards.primaries} replicas=${s.shards.replicas}\trefresh=${s.refresh_interval}\tallocation=${allocationText(s)}`
                : ''),
          );
        }
        out(historyText(history));
        for (const [name, jobs] of Object.entries(depths))
          out(
            `queue ${name}\t${Object.entries(jobs)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')}`,
          );
      }),
    );
}

/** The metric history's line of `indices status`. */
function historyText(h: HistoryStatus): string {
  if (!h.template_installed) return `history\t${h.read_alias}\t(template missing; run \`social-search indices apply\`)`;
  const months = h.months.length === 0 ? '(no points yet)' : `${h.months[0]!.index} … ${h.months.at(-1)!.index}`;
  const perPoint = h.bytes_per_point === null ? '' : ` (${h.bytes_per_point} B/point)`;
  const range = h.oldest ? `\tfrom=${h.oldest} to=${h.newest}` : '';
  const thinned = h.months.filter((m) => m.thinned).length;
  return (
    `history\t${h.read_alias} → ${months}\tmonths=${h.months.length} thinned=${thinned}\tpoints=${h.points}` +
    `\tstore=${h.store_bytes}B${perPoint}\tretention=${h.retention_days}d${range}`
  );
}
