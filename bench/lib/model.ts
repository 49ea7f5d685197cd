/** The embedding model as the benches load it. */
import path from 'node:path';
import { Client } from '@elastic/elasticsearch';
import { createEmbedder } from '../../src/embedding/embedder.ts';
import { loadConfig } from '../../src/internal/config.ts';
import { defaultModelDir } from '../../src/internal/paths.ts';
import { REPO_ROOT } from './service-snapshot.ts';

/**
 * MODEL_DIR, or the model `npm start` uses: bge-small-en-v1.5 as `scripts/services.sh start` installs
 * it, else the shared all-MiniLM-L6-v2 (../shared/models).
 */
export const MODEL_DIR =
  process.env['MODEL_DIR'] ?? defaultModelDir() ?? path.resolve(REPO_ROOT, '../shared/models/all-MiniLM-L6-v2');

/**
 * What an offline relevance bench reads: the service's configuration on this environment (the
 * model of {@link MODEL_DIR}), its embedder, loaded, and an Elasticsearch client.
 */
export async function openModel() {
  const config = loadConfig({ MODEL_DIR, ...process.env });
  const embedder = createEmbedder(config);
  await embedder.ready();
  const es = new Client({ node: config.ELASTICSEARCH_URL });
  return { config, embedder, es };
}
