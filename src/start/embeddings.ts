import type { Logger } from 'pino';
import type { Embedder } from '../embedding/embedder.ts';
import type { Config } from '../internal/config.ts';
import type { EngineHealth } from '../engine/health.ts';
import { relevanceFloors } from '../embedding/model-floors.ts';

/**
 * Loads the embedding model before a process starts serving, and says how queries will rank and
 * under which relevance floors (the model's calibration, or the configuration's); warns when posts
 * hold vectors of another model (a query's vector would be compared with them).
 * A model that is configured but cannot load stops the process (exit 1): serving BM25 results
 * while the operator believes search is semantic would be a silent degradation.
 */
export async function startEmbeddings(
  embedder: Embedder,
  ranking: Config['SEARCH_RANKING'],
  logger: Pick<Logger, 'info' | 'warn' | 'fatal'>,
  /** The configuration the floors are read from (model-floors.ts). */
  floorsConfig: Parameters<typeof relevanceFloors>[0],
  engine: Pick<EngineHealth, 'vectorModels'>,
): Promise<void> {
  try {
    await embedder.ready();
  } catch {
    logger.fatal(
      { embeddings: embedder.status() },
      'the embedding model failed to load; fix MODEL_DIR/MODEL_ID or set EMBEDDINGS=off',
    );
    process.exit(1);
  }
  const status = embedder.status();
  if (status.state === 'off') {
    logger.warn({ embeddings: status }, 'embeddings off: queries rank by BM25 only');
  } else {
    const { similarity, unmatched, sentence, related, source } = relevanceFloors(floorsConfig);
    logger.info(
      {
        model: status.model,
        ranking,
        similarityFloor: similarity,
        unmatchedFloor: unmatched ?? similarity,
        sentenceFloor: sentence ?? similarity,
        relatedFloor: related ?? null,
      },
      `queries rank ${ranking}; relevance floors: ${source}`,
    );
    if (status.model) await warnOfOtherModels(status.model, engine, logger);
  }
}

/** Vector documents read at start to tell which models made them (one small search). */
const VECTOR_SAMPLE = 200;

/**
 * One warning when posts' vectors were made by another model than the configured one (a switch of
 * model before `indices rebuild`): vectors of two models share no space, so until the rebuild
 * re-embeds them those posts rank by chance on the meaning side. An engine that cannot say is
 * not a reason to stop: the readiness checks report it.
 */
async function warnOfOtherModels(
  model: string,
  engine: Pick<EngineHealth, 'vectorModels'>,
  logger: Pick<Logger, 'warn'>,
): Promise<void> {
  const counts = await engine.vectorModels(VECTOR_SAMPLE).catch(() => []);
  const others = counts.filter((count) => count.model !== model);
  if (others.length === 0) return;
  const sampled = counts.reduce((sum, count) => sum + count.posts, 0);
  const posts = others.reduce((sum, count) => sum + count.posts, 0);
  logger.warn(
    { model, otherModels: others, sampled },
    `${posts} of ${sampled} posts sampled hold vectors of ${others.map((count) => count.model).join(', ')}, not of ${model}: ` +
      'semantic search compares queries with them by chance until `social-search indices rebuild posts` re-embeds them',
  );
}
