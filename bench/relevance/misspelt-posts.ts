/**
 * Misspelt post queries (bench/relevance.md, "The model reads the query as corrected"): each topic
 * of the demo generator's catalog, with its longest word's third letter dropped (one slip) and with
 * its two longest words' (two slips; words of five letters or more), asked of one or two running
 * services. Judged against what the topic as written finds on the same service: the first page's
 * overlap with that page, and the share of posts of the topic's niche and of the topic itself (the
 * generator's labels) among the first ten. Never used to choose anything.
 *
 *   npm start   # the demo: 3,000 posts, 300 accounts, seed 42
 *   npx tsx bench/relevance/misspelt-posts.ts --key "$KEY" --url http://127.0.0.1:8080 [--other http://127.0.0.1:8081]
 *
 * With `--other` (another build serving the same data) both are asked query by query.
 */
import { mintId } from '../../src/contract/ids.ts';
import { seedPostLabels } from '../../src/seed/generator.ts';
import { NICHES } from '../../src/seed/vocabulary.ts';
import { cli } from '../lib/args.ts';

const args = cli({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    other: { type: 'string' },
    key: { type: 'string' },
    posts: { type: 'int', default: 3000, min: 1 },
    accounts: { type: 'int', default: 300, min: 1 },
    seed: { type: 'int', default: 42, min: 0 },
  },
});
const key = args.key ?? process.env['KEY'];
if (!key) throw new Error('--key (or KEY): an API key with the search scope');
const K = 10;
const labels = seedPostLabels({ posts: args.posts, accounts: args.accounts, seed: args.seed });
const labelOf = new Map([...labels.values()].map((l) => [mintId('post', l.id), l]));

/** The phrase with the third letter of its `slips` longest words (five letters or more) dropped; null without as many. */
function slipped(phrase: string, slips: number): string | null {
  const words = phrase.split(' ');
  const longest = words
    .map((word, i) => ({ word, i }))
    .filter(({ word }) => word.length >= 5 && /^[a-z]+$/.test(word))
    .sort((a, b) => b.word.length - a.word.length)
    .slice(0, slips);
  if (longest.length < slips) return null;
  for (const { word, i } of longest) words[i] = word.slice(0, 2) + word.slice(3);
  return words.join(' ');
}

async function firstPage(url: string, query: string): Promise<{ ids: string[]; corrected: boolean }> {
  const response = await fetch(`${url}/v1/social/posts/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ post: { query }, limit: K }),
  });
  if (response.status !== 200) throw new Error(`${query}: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { data: Array<{ id: string }>; corrected_query?: string };
  return { ids: body.data.map((p) => p.id), corrected: body.corrected_query !== undefined };
}

const services = [args.url, ...(args.other ? [args.other] : [])];
const mean = (xs: number[]) => Number((xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)).toFixed(4));
const rows: Record<string, unknown>[] = [];
for (const slips of [1, 2]) {
  const scores = new Map(
    services.map((url) => [
      url,
      { overlap: [] as number[], niche: [] as number[], topic: [] as number[], corrected: 0 },
    ]),
  );
  for (const niche of NICHES) {
    for (const [topicId, phrase] of niche.topics) {
      const query = slipped(phrase, slips);
      if (!query) continue;
      for (const url of services) {
        const meant = (await firstPage(url, phrase)).ids;
        const found = await firstPage(url, query);
        const score = scores.get(url)!;
        if (found.corrected) score.corrected += 1;
        score.overlap.push(meant.length === 0 ? 1 : found.ids.filter((id) => meant.includes(id)).length / meant.length);
        score.niche.push(found.ids.filter((id) => labelOf.get(id)?.niche === niche.id).length / K);
        score.topic.push(found.ids.filter((id) => labelOf.get(id)?.topic === topicId).length / K);
      }
    }
  }
  for (const [url, score] of scores)
    rows.push({
      slips,
      service: url,
      queries: score.overlap.length,
      corrected: score.corrected,
      overlap_with_meant: mean(score.overlap),
      niche_p_at_10: mean(score.niche),
      topic_p_at_10: mean(score.topic),
    });
}
console.table(rows);
