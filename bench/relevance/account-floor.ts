/**
 * The similarity floor as account search meets it (bench/relevance.md, "Account search by meaning",
 * the floor): for every topic of the generator's niche catalog (90), the query's vector as the
 * service embeds it and its 50 nearest accounts by their own text's vector (servable, public),
 * each marked of the topic's niche or not (the generator's hidden labels). Prints the 2nd
 * percentile of the niche's accounts' cosines in the first 50 (the rule the model's floor was
 * calibrated by on posts, src/embedding/model-floors.ts) and, for each floor, the accounts above
 * it and the niche's share of them. Reads an index loaded by `npm start` or `seed`:
 *
 *   MODEL_DIR=.services/models/bge-small-en-v1.5 npx tsx bench/relevance/account-floor.ts [--prefix social --seed 42]
 */
import { mintId } from '../../src/contract/ids.ts';
import { seedAccountLabels } from '../../src/seed/generator.ts';
import { NICHES } from '../../src/seed/vocabulary.ts';
import { benchLogger, harnessEnv, harnessRuntime } from '../lib/in-process-service.ts';
import { cli } from '../lib/args.ts';
import { quantile } from '../lib/measure.ts';

const args = cli({
  options: {
    prefix: { type: 'string', default: 'social' },
    posts: { type: 'int', default: 3000, min: 1 },
    accounts: { type: 'int', default: 300, min: 1 },
    seed: { type: 'int', default: 42, min: 0 },
  },
});
const size = { posts: args.posts, accounts: args.accounts, seed: args.seed };
const labels = seedAccountLabels(size).filter((a) => a.active && !a.isPrivate);
const nicheOf = new Map(labels.map((a) => [mintId('account', a.id), new Set(a.niches)]));
const runtime = harnessRuntime(harnessEnv(args.prefix), benchLogger());
/** Per topic, its nearest accounts: cosine, and whether of the topic's niche. */
const near: Array<Array<[number, boolean]>> = [];
try {
  await runtime.ready();
  await runtime.embedder.ready();
  for (const niche of NICHES)
    for (const [, phrase] of niche.topics) {
      const vector = await runtime.embedder.embedQuery(phrase);
      const response = await runtime.es.search({
        index: `${args.prefix}-accounts`,
        knn: {
          field: 'embedding',
          query_vector: Array.from(vector),
          k: 50,
          num_candidates: 100,
          filter: [{ term: { servable: true } }, { term: { is_private: false } }],
        },
        size: 50,
        _source: false,
      });
      near.push(response.hits.hits.map((h) => [2 * (h._score ?? 0) - 1, nicheOf.get(h._id!)?.has(niche.id) ?? false]));
    }
} finally {
  await runtime.close();
}
const onNiche = near.flatMap((hits) => hits.filter(([, on]) => on).map(([c]) => c)).sort((a, b) => a - b);
console.log(
  `${near.length} topics; the niche's cosines in the first 50: p02 ${quantile(onNiche, 0.02).toFixed(3)}, median ${quantile(onNiche, 0.5).toFixed(3)}`,
);
console.table(
  [0.5, 0.55, 0.6, 0.65, 0.7].map((floor) => {
    const above = near.flatMap((hits) => hits.filter(([c]) => c >= floor));
    const first = near.flatMap((hits) => hits.slice(0, 10).filter(([c]) => c >= floor));
    return {
      floor,
      above: above.length,
      of_the_niche: Number((above.filter(([, on]) => on).length / Math.max(1, above.length)).toFixed(3)),
      first_10_above: first.length,
      first_10_of_the_niche: Number((first.filter(([, on]) => on).length / Math.max(1, first.length)).toFixed(3)),
    };
  }),
);
