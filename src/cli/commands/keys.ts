import type { Command } from 'commander';
import { openHolders, openKeys } from '../../start/core.ts';
import { EXIT, out, runCommand } from '../context.ts';

/** `keys create | list | revoke` (operations contract §1). */
export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('create, list, limit and revoke API keys');

  keys
    .command('create')
    .description('create a key and print its secret once')
    .requiredOption('--owner <email>', 'the account holder the key belongs to (created when absent)')
    .requiredOption('--name <label>', 'a label, e.g. the integration using it')
    .option('--scopes <list>', 'comma-separated: search, ingest', 'search')
    .option('--json', 'print {"id","key","owner","name","scopes"} on one line')
    .action((options: { owner: string; name: string; scopes: string; json?: boolean }) =>
      runCommand(async ({ config, connections, use }) => {
        const service = use(openKeys(config, connections, { cached: false }));
        await connections.redisReady();
        const scopes = options.scopes
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
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
    .option('--owner <email>', "only this owner's keys")
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
    .command('limit')
    .description('set a key\'s own rate limits (requests per minute); "default" restores the service default')
    .argument('<key-id>', 'the key id (key_…)')
    .option('--search <n>', 'searches and facets per minute (RATE_LIMIT_SEARCH_PER_MINUTE otherwise)')
    .option('--read <n>', 'GETs of posts and accounts per minute (RATE_LIMIT_READ_PER_MINUTE otherwise)')
    .action((id: string, options: { search?: string; read?: string }) =>
      runCommand(async ({ config, connections, use }) => {
        if (options.search === undefined && options.read === undefined) {
          process.stderr.write('social-search: give --search N and/or --read N (N ≥ 0, or "default")\n');
          return EXIT.usage;
        }
        const limits: { search?: number | null; read?: number | null } = {};
        for (const name of ['search', 'read'] as const) {
          const raw = options[name];
          if (raw === undefined) continue;
          if (raw !== 'default' && !/^\d+$/.test(raw)) {
            process.stderr.write(
              `social-search: --${name} must be a whole number ≥ 0 or "default", got ${JSON.stringify(raw)}\n`,
            );
            return EXIT.usage;
          }
          limits[name] = raw === 'default' ? null : Number(raw);
        }
        const service = use(openKeys(config, connections, { cached: false }));
        await connections.redisReady();
        if (!(await service.setLimits(id, limits))) {
          process.stderr.write(`social-search: no key ${id}\n`);
          return EXIT.failed;
        }
        const shown = (name: 'search' | 'read', fallback: number) => {
          const value = limits[name];
          return value === undefined
            ? 'unchanged'
            : value === null
              ? `default (${fallback}/min)`
              : value === 0
                ? 'unlimited'
                : `${value}/min`;
        };
        out(
          `${id}: search ${shown('search', config.RATE_LIMIT_SEARCH_PER_MINUTE)}, read ${shown('read', config.RATE_LIMIT_READ_PER_MINUTE)}; every API node applies it from its next request`,
        );
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

/** `holders invite`: invitation codes for the dashboard's sign-up. */
export function registerHolders(program: Command): void {
  const holders = program.command('holders').description('account holders of the dashboard');
  holders
    .command('invite')
    .description('create a one-time invitation code for the dashboard sign-up and print it once')
    .option('--email <email>', 'bind it to this email (required to claim a holder created by `keys create --owner`)')
    .option('--days <n>', 'days it stays valid (1–90)', '7')
    .option('--json', 'print {"code","email","expires_at","sign_up_url"} on one line')
    .action((options: { email?: string; days: string; json?: boolean }) =>
      runCommand(async ({ config, connections }) => {
        await connections.redisReady();
        const invitation = await openHolders(config, connections).invite({
          email: options.email,
          days: Number(options.days),
        });
        const url = `${config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/dashboard/sign-up?invitation=${encodeURIComponent(invitation.code)}`;
        if (options.json) {
          out(JSON.stringify({ ...invitation, sign_up_url: url }));
        } else {
          out(`code:     ${invitation.code}`);
          out(`for:      ${invitation.email ?? 'anyone with the code'}`);
          out(`expires:  ${invitation.expires_at}`);
          out(`sign up:  ${url}`);
        }
      }),
    );
}
