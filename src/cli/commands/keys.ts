import type { Command } from 'commander';
import { openKeys } from '../../start/core.ts';
import { EXIT, out, runCommand } from '../context.ts';

/** `keys create | list | revoke` (operations contract §1). */
export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('create, list and revoke API keys');

  keys
    .command('create')
    .description('create a key and print its secret once')
    .requiredOption('--owner <email>', 'who the key belongs to')
    .requiredOption('--name <label>', 'a label, e.g. the integration using it')
    .option('--scopes <list>', 'comma-separated: search, ingest', 'search')
    .option('--json', 'print {"id","key","owner","name","scopes"} on one line')
    .action((options: { owner: string; name: string; scopes: string; json?: boolean }) =>
      runCommand(async ({ config, connections, use }) => {
        const service = use(openKeys(config, connections, { cached: false }));
        await connections.redisReady();
        const scopes = options.scopes.split(',').map((s) => s.trim()).filter(Boolean);
        const created = await service.create({ owner: options.owner, name: options.name, scopes });
        if (options.json) {
          const { id, key, owner, name } = created;
          out(JSON.stringify({ id, key, owner, name, scopes: created.scopes }));
        } else {
          out(`id:     ${created.id}`);
          out(`owner:  ${created.owner}`);
          out(`name:   ${created.name}`);
          out(`scopes: ${created.scopes.join(',')}`);
          out(`key:    ${created.key}`);
          out('This is the only time the key is shown; store it as a secret.');
        }
      }),
    );

  keys
    .command('list')
    .description('list keys (never their secrets)')
    .option('--owner <email>', 'only this owner\'s keys')
    .option('--json', 'one JSON object per line')
    .action((options: { owner?: string; json?: boolean }) =>
      runCommand(async ({ config, connections, use }) => {
        const service = use(openKeys(config, connections, { cached: false }));
        await connections.redisReady();
        const list = await service.list(options.owner ? { owner: options.owner } : {});
        for (const k of list) {
          out(
            options.json
              ? JSON.stringify(k)
              : [k.id, k.status, k.owner, k.name, k.scopes.join(','), k.created_at, k.revoked_at ?? ''].join('\t'),
          );
        }
      }),
    );

  keys
    .command('revoke')
    .description('revoke a key; it stops working at once')
    .argument('<key-id>', 'the key id (key_…)')
    .action((id: string) =>
      runCommand(async ({ config, connections, use }) => {
        const service = use(openKeys(config, connections, { cached: false }));
        await connections.redisReady();
        if (!(await service.revoke(id))) {
          process.stderr.write(`social-search: no key ${id}\n`);
          return EXIT.failed;
        }
        out(`revoked ${id}`);
      }),
    );
}
