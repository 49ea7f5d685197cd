import type { Command } from 'commander';
import { defaultModelDir } from '../../internal/paths.ts';
import { createLogger } from '../../internal/logger.ts';
import { openServiceProcess } from '../../start/process.ts';
import { installShutdown, serviceShutdownPhases } from '../../start/shutdown.ts';
import { startEmbeddings } from '../../start/embeddings.ts';
import { openHolders } from '../../start/core.ts';
import { configOrExit } from '../context.ts';
import { seedDataset } from './seed.ts';

const DEMO = { posts: 3000, accounts: 300, seed: 42 };

/**
 * The demo ranks semantically out of the box with the first default model folder present
 * (bge-small-en-v1.5 as scripts/services.sh installs it, else all-MiniLM-L6-v2 beside the
 * repository) when no model was configured (an explicit MODEL_DIR, MODEL_ID or EMBEDDINGS=off wins).
 */
function withDefaultModel(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.MODEL_DIR || env.MODEL_ID || env.EMBEDDINGS === 'off') return env;
  const found = defaultModelDir();
  return found ? { ...env, MODEL_DIR: found } : env;
}

/**
 * `quickstart` (what `npm start` runs after starting the local services): templates, demo data
 * when the indices are empty, then the API and the worker in the foreground, and a key to use.
 */
export function registerQuickstart(program: Command): void {
  program
    .command('quickstart')
    .description('apply templates, load demo data when empty, run API and worker, print a key')
    .option('--posts <n>', 'demo posts when the index is empty', String(DEMO.posts))
    .option('--accounts <n>', 'demo accounts when the index is empty', String(DEMO.accounts))
    .action(async (options: { posts: string; accounts: string }) => {
      const config = configOrExit(withDefaultModel(process.env));
      // stdout carries the banner; logs go to stderr.
      const logger = createLogger(config, 2);
      const owned = openServiceProcess(config, logger, { writes: true });
      const { engine, embedder } = owned;
      const say = (line = '') => process.stdout.write(`${line}\n`);
      if (!(await owned.connections.redisReady())) {
        process.stderr.write(
          `social-search: Redis at ${config.REDIS_URL} is not reachable; run \`npm run services\`\n`,
        );
        process.exit(1);
      }

      for (const line of await engine.admin.apply()) {
        if (line.action !== 'unchanged' || line.detail)
          say(`indices: ${line.action} ${line.object}${line.detail ? ` (${line.detail})` : ''}`);
      }
      await startEmbeddings(embedder, config.SEARCH_RANKING, logger, config, engine.health);
      const [{ startWorkerProcess }, { createApi }] = await Promise.all([
        import('../../start/worker-process.ts'),
        import('../../start/api.ts'),
      ]);
      const worker = startWorkerProcess(config, owned.connections, { engine, embedder, logger });
      const api = createApi(config, owned.connections, { engine, embedder, logger });
      installShutdown(logger, serviceShutdownPhases({ api, worker, process: owned }));

      const posts = (await engine.admin.status()).find((s) => s.name === 'posts')?.docs ?? 0;
      if (posts === 0) {
        const size = { posts: Number(options.posts), accounts: Number(options.accounts) };
        say(
          `Loading demo data (${size.posts} posts, ${size.accounts} accounts, seed ${DEMO.seed}) through the intake…`,
        );
        const started = Date.now();
        // Searchable at once by BM25; vectors follow from the embeddings queue (~15 posts/s per core).
        const result = await seedDataset(api.intake, {
          ...size,
          seed: DEMO.seed,
          // Anchored at the present: counts over the last 30 days, growth over the last week and
          // the newest posts hold demo data whenever it is loaded.
          now: new Date(),
          history: true,
          wait: true,
          embedLater: true,
        });
        say(`Demo data indexed: ${result.accepted} observations in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
        if (embedder.status().state === 'ready') {
          say(
            `Embedding the demo posts in the background: queries rank by meaning as their vectors arrive (a few minutes on 2 cores).`,
          );
        }
      } else {
        say(`Indices already hold ${posts} posts; no demo data loaded.`);
      }

      const key = await api.keys.create({
        owner: 'quickstart@example.com',
        name: `quickstart ${new Date().toISOString()}`,
        scopes: ['search', 'ingest'],
      });
      const address = await api.app.listen({ host: config.HOST, port: config.PORT });
      const base = config.PUBLIC_BASE_URL;
      say();
      say(`Social Content Search Service is running at ${base} (listening on ${address}).`);
      say();
      say(`API key (scopes search, ingest; shown once): ${key.key}`);
      say();
      say('Try:');
      say(`  export KEY=${key.key}`);
      const examples = await engine.reads.examples();
      const account = examples.accountId ? await api.accounts.get(examples.accountId).catch(() => null) : null;
      const post = examples.postId ? await api.posts.get(examples.postId).catch(() => null) : null;
      say(
        `  curl -s -H "Authorization: Bearer $KEY" ${base}/v1/social/accounts/${account ? `@${account.handle}` : '@<handle>'}`,
      );
      say(`  curl -s -H "Authorization: Bearer $KEY" ${base}/v1/social/posts/${post?.id ?? '<post id>'}`);
      if (post)
        say(
          `  curl -s -H "Authorization: Bearer $KEY" ${base}/v1/social/posts/${post.shortcode}    # the same post by shortcode`,
        );
      if (account)
        say(
          `  curl -s -H "Authorization: Bearer $KEY" "${base}/v1/social/accounts/@${account.handle}/history?interval=week&from=${new Date(Date.parse(account.observed_at) - 42 * 86_400_000).toISOString().slice(0, 10)}T00:00:00Z"    # its followers week by week`,
        );
      const json = `-H "Content-Type: application/json"`;
      if (account)
        say(
          `  curl -s -H "Authorization: Bearer $KEY" ${json} ${base}/v1/social/accounts/search -d '{"account":{"similar_to":"@${account.handle}","filters":{"followers_count":{"gte":10000}}},"limit":5}'    # creators like @${account.handle} with 10k+ followers`,
        );
      if (post)
        say(
          `  curl -s -H "Authorization: Bearer $KEY" ${json} ${base}/v1/social/posts/search -d '{"post":{"similar_to":"${post.shortcode}"},"limit":5}'    # posts like this one (once its vector is in)`,
        );
      say(`  curl -s ${base}/readyz`);
      say();
      if (config.DASHBOARD === 'on' && config.DASHBOARD_SIGNUP !== 'closed') {
        const invitation = await openHolders(config, owned.connections).invite({ days: 7 });
        say(`Dashboard (your own keys and usage): ${base}/dashboard/sign-up?invitation=${invitation.code}`);
        say('  (a one-time invitation, valid 7 days; more with `npx social-search holders invite`)');
        say();
      }
      say('Press Ctrl+C to stop (the local Elasticsearch and Redis keep running: npm run services:stop).');
    });
}
