/**
 * The floor of posts related to a query's strong word matches by their vectors (bench/relevance.md,
 * "Posts near the words' best matches"; `related` in src/embedding/model-floors.ts): the cosines
 * of every pair of the demo's posts by their stored vectors, grouped by whether the two share the
 * generator's niche (its hidden label) and their language. The floor is the 98th percentile of
 * "other niche, same language, not English": nearer than nearly every post of another subject in
 * its language. Reads an index the social bench loaded (bench/relevance/social.ts):
 *
 *   npx tsx bench/relevance/related-floor.ts --seed 23 --posts 800 --accounts 80 [--prefix P]
 */
import { Client } from '@elastic/elasticsearch';
import { mintId } from '../../src/contract/ids.ts';
import { postVectorsBody, readPostVectors } from '../../src/engine/elasticsearch/queries/post-vectors.ts';
import { seedPostLabels } from '../../src/seed/generator.ts';
import { cli } from '../lib/args.ts';

const args = cli({
  options: {
    prefix: { type: 'string', default: '' },
    posts: { type: 'int', default: 1500, min: 1 },
    accounts: { type: 'int', default: 150, min: 1 },
    seed: { type: 'int', default: 5, min: 0 },
  },
});
const prefix = args.prefix || `relevance-social-${args.seed}-${args.posts}`;
const labels = new Map(
  [...seedPostLabels({ seed: args.seed, posts: args.posts, accounts: args.accounts })].map(([id, label]) => [
    mintId('post', id),
    label,
  ]),
);
const client = new Client({ node: process.env['ELASTICSEARCH_URL'] ?? 'http://127.0.0.1:9200' });
try {
  const response = await client.search({
    index: `${prefix}-post-vectors`,
    ...postVectorsBody([...labels.keys()]),
    size: labels.size,
  });
  const posts = [...readPostVectors(response.hits.hits)].flatMap(([id, { vector }]) => {
    const label = labels.get(id);
    return label ? [{ vector, niche: label.niche, language: label.language }] : [];
  });
  const cosine = (a: number[], b: number[]) => {
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let i = 0; i < a.length; i++) {
      dot += a[i]! * b[i]!;
      na += a[i]! ** 2;
      nb += b[i]! ** 2;
    }
    return dot / Math.sqrt(na * nb);
  };
  const groups = new Map<string, number[]>();
  for (let i = 0; i < posts.length; i++)
    for (let j = i + 1; j < posts.length; j++) {
      const [a, b] = [posts[i]!, posts[j]!];
      const english = a.language === 'en' && b.language === 'en' ? 'English' : 'not English';
      const key = `${a.niche === b.niche ? 'same niche' : 'other niche'}, ${a.language === b.language ? 'same language' : 'other language'}, ${english}`;
      const values = groups.get(key) ?? [];
      values.push(cosine(a.vector, b.vector));
      groups.set(key, values);
    }
  const at = (sorted: number[], p: number) => sorted[Math.floor(p * (sorted.length - 1))]!.toFixed(3);
  process.stdout.write(
    `${prefix}: ${posts.length} posts with vectors\n| pairs | n | p02 | p10 | p50 | p90 | p98 |\n|---|---:|---:|---:|---:|---:|---:|\n`,
  );
  for (const [key, values] of [...groups].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const sorted = values.sort((a, b) => a - b);
    const cells = [0.02, 0.1, 0.5, 0.9, 0.98].map((p) => at(sorted, p));
    process.stdout.write(`| ${key} | ${sorted.length} | ${cells.join(' | ')} |\n`);
  }
} finally {
  await client.close();
}
