import type { Logger } from 'pino';
import type { Embedder } from '../embedding/embedder.ts';
import type { Config } from '../internal/config.ts';
import { relevanceFloors } from '../embedding/model-floors.ts';

/**
 * Loads the embedding model before a process starts serving, and says how queries will rank and
 * under which relevance floors (the model's calibration, or the configuration's).
 * A model that is configured but cannot load stops the process (exit 1): serving BM25 results
 * while the operator believes search is semantic would be a silent degradation.
 */
export async function startEmbeddings(
  embedder: Embedder,
  ranking: Config['SEARCH_RANKING'],
  logger: Pick<Logger, 'info' | 'warn' | 'fatal'>,
  /** The configuration the floors are read from (model-floors.ts). */
  floorsConfig: Parameters<typeof relevanceFloors>[0],
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
    const { similarity, unmatched, source } = relevanceFloors(floorsConfig);
    logger.info(
      { model: status.model, ranking, similarityFloor: similarity, unmatchedFloor: unmatched ?? similarity },
      `queries rank ${ranking}; relevance floors: ${source}`,
    );
  }
}
