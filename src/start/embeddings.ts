import type { Logger } from 'pino';
import type { Embedder } from '../embedding/embedder.ts';
import type { Config } from '../internal/config.ts';

/**
 * Loads the embedding model before a process starts serving, and says how queries will rank.
 * A model that is configured but cannot load stops the process (exit 1): serving BM25 results
 * while the operator believes search is semantic would be a silent degradation.
 */
export async function startEmbeddings(
  embedder: Embedder,
  ranking: Config['SEARCH_RANKING'],
  logger: Pick<Logger, 'info' | 'warn' | 'fatal'>,
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
    logger.info({ model: status.model, ranking: ranking }, `queries rank ${ranking}`);
  }
}
