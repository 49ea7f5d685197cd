/**
 * How consistently each stemmer conflates plural and singular on SciFact's vocabulary: over the
 * pairs "Xs"/"X" that both occur in the corpus (excluding -ss/-is/-us words), the share that the
 * in-engine hunspell en_US filter and the client-side Porter2 stemmer map to a common form.
 * Complements analyzers.ts (which measures ranking): see bench/relevance.md, "Stemming and
 * analyzer choice (SciFact, Elasticsearch directly)".
 *
 *   npx tsx bench/relevance/stemmer-coverage.ts
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { loadCorpus, scifactDir } from './beir.ts';
import { loadStemmer } from './client-analysis.ts';
import { cli } from '../lib/args.ts';

cli({});

const client = new Client({ node: process.env['ELASTICSEARCH_URL'] ?? 'http://127.0.0.1:9200' });
const stemDir = process.env['STEMMER_DIR'] ?? '/tmp/stemmer-scratch';

try {
  const porter2 = await loadStemmer(
    stemDir,
    'porter2',
    'wink-porter2-stemmer@2.0.1',
    'wink-porter2-stemmer/src/wink-porter2-stemmer.js',
    'default',
  );
  if (!porter2) throw new Error('wink-porter2-stemmer is needed (see the hint above)');
  const counts = new Map<string, number>();
  for (const d of await loadCorpus(scifactDir())) {
    for (const w of `${d.title} ${d.text}`.toLowerCase().match(/[a-z]+/g) ?? [])
      counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  const pairs = [...counts.keys()].filter((w) => /[^siu]s$/.test(w) && w.length > 3 && counts.has(w.slice(0, -1)));
  const words = [...new Set(pairs.flatMap((w) => [w, w.slice(0, -1)]))];

  // One _analyze call per chunk: each [a-z]+ word is exactly one standard token, so position i is word i.
  const hunspell = new Map<string, string[]>();
  for (let i = 0; i < words.length; i += 2000) {
    const chunk = words.slice(i, i + 2000);
    const { tokens = [] } = await client.indices.analyze({
      tokenizer: 'standard',
      // (the client's typings demand the `lang`/`language`/`locale` aliases together)
      filter: [
        'lowercase',
        { type: 'hunspell', locale: 'en_US', dedup: true } as unknown as estypes.AnalysisHunspellTokenFilter,
      ],
      text: chunk.join(' '),
    });
    for (const t of tokens) {
      const word = chunk[t.position]!;
      hunspell.set(word, [...(hunspell.get(word) ?? []), t.token]);
    }
  }

  let occurrences = 0;
  const ok = { hunspell: { pairs: 0, occurrences: 0 }, porter2: { pairs: 0, occurrences: 0 } };
  const missed: [string, number][] = [];
  for (const plural of pairs) {
    const singular = plural.slice(0, -1);
    const n = counts.get(plural)!;
    occurrences += n;
    const stemsOfSingular = hunspell.get(singular) ?? [singular];
    const conflated = {
      hunspell: (hunspell.get(plural) ?? [plural]).some((stem) => stemsOfSingular.includes(stem)),
      porter2: porter2.stem(plural) === porter2.stem(singular),
    };
    for (const name of ['hunspell', 'porter2'] as const) {
      if (!conflated[name]) continue;
      ok[name].pairs++;
      ok[name].occurrences += n;
    }
    if (!conflated.hunspell) missed.push([plural, n]);
  }
  const pct = (x: number, of: number): string => `${((100 * x) / of).toFixed(1)}%`;
  console.log(`plural/singular pairs both in the SciFact corpus: ${pairs.length} (${occurrences} plural occurrences)`);
  for (const [name, o] of Object.entries(ok)) {
    console.log(
      `  ${name.padEnd(9)} conflates ${pct(o.pairs, pairs.length)} of pairs, ${pct(o.occurrences, occurrences)} of occurrences`,
    );
  }
  console.log(
    `  most frequent plurals hunspell leaves apart: ${missed
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([w, n]) => `${w} (${n})`)
      .join(', ')}`,
  );
} finally {
  await client.close();
}
