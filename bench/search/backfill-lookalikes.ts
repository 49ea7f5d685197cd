/**
 * Gives a large benchmark index's accounts their lookalike vectors, for the lookalike LATENCY
 * benchmark only (quality: bench/relevance/lookalikes.ts, through the real worker path).
 *
 *   INDEX_PREFIX=bench REDIS_PREFIX=bench MODEL_DIR=../shared/models/all-MiniLM-L6-v2 \
 *     npx tsx bench/search/backfill-lookalikes.ts
 *
 * Run after backfill-vectors.ts. `indices rebuild accounts` would also embed every account's own
 * text (100k biographies: ~16 minutes of the model on two cores); this rebuilds the accounts index
 * with the same lookalike computation the worker runs (services/intake/lookalikes.ts) from the
 * posts' stored vectors, without the accounts' own text (the posts' share alone), which is what
 * the engine searches either way: one 384-dimension vector per account.
 */
import { randomBytes } from 'node:crypto';
import type { AccountRecord } from '../../src/domain/records.ts';
import type { RebuildTransform } from '../../src/engine/index-admin.ts';
import { loadConfig } from '../../src/internal/config.ts';
import { createLookalikes } from '../../src/services/intake/lookalikes.ts';
import { openServiceProcess } from '../../src/start/process.ts';
import { cli } from '../lib/args.ts';

cli({});

const config = loadConfig({ SIGNING_SECRET: randomBytes(32).toString('hex'), ...process.env });
const service = openServiceProcess(config);
await service.connections.redisReady();
await service.embedder.ready();
const modelId = service.embedder.modelId;
if (modelId === null) throw new Error('set MODEL_DIR (the model id the posts were embedded with)');
const lookalikes = createLookalikes({
  store: service.engine.intake,
  modelId,
  embedTopics: (texts) => service.embedder.embedDocuments(texts),
});

const started = Date.now();
let withVector = 0;
const result = await service.engine.admin.rebuild('accounts', {
  onProgress: (n) => process.stderr.write(`\rcopied ${n} (${((Date.now() - started) / 1000).toFixed(0)} s)`),
  transform: (async (records: AccountRecord[]) => {
    const out = await lookalikes.withLookalikes(records);
    withVector += out.filter((a) => a.lookalike).length;
    return out;
  }) as RebuildTransform,
});
process.stderr.write(
  `\nrebuilt accounts: ${result.copied} documents, ${withVector} with a lookalike vector, in ${((Date.now() - started) / 1000).toFixed(0)} s → ${result.to}\n`,
);
await service.close();
