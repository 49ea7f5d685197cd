/**
 * Account search by what an account is about (bench/relevance.md, "Account search by words"): the
 * demo generator gives every account its niches (hidden labels, replayed here with
 * `seedAccountLabels`); each query names one topic of one niche's catalog and asks
 * `POST /v1/social/accounts/search` (`account.query`) for a first page of ten. Judged: niche
 * precision over the first min(10, accounts of that niche) results, and the share of queries
 * answered with nothing. Three phrasings of every topic, none used to choose the ranking:
 * - `topic`: the catalog's phrase as written ("glute workout"), which biographies often quote;
 * - `inflected`: its last word's other number ("glute workouts", "budgeting methods");
 * - `asked`: a request a person would type, with its function words ("who posts about glute workouts");
 * - `misspelt`: the phrase with one slip in its longest word ("glute wokout", "budegting methods").
 *
 * It reads a running service, loaded with the generator's data for the same options:
 *
 *   npm start   # the demo: 3,000 posts, 300 accounts, seed 42
 *   npx tsx bench/relevance/account-search.ts --url http://127.0.0.1:8080 --key "$KEY" [--posts 3000 --accounts 300 --seed 42]
 *
 * Also each first page's p50 at the client (every query asked once, so no query embedding is
 * cached on a freshly started node). Appends its figures, and each query's precision (`per_query`), to
 * bench/results/relevance-account-search.json.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mintId } from '../../src/contract/ids.ts';
import { seedAccountLabels } from '../../src/seed/generator.ts';
import { NICHES } from '../../src/seed/vocabulary.ts';
import { cli } from '../lib/args.ts';
import { REPO_ROOT } from './beir.ts';

const args = cli({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    key: { type: 'string' },
    posts: { type: 'int', default: 3000, min: 1 },
    accounts: { type: 'int', default: 300, min: 1 },
    seed: { type: 'int', default: 42, min: 0 },
    label: { type: 'string' },
  },
});
const key = args.key ?? process.env['KEY'];
if (!key) throw new Error('--key (or KEY): an API key with the search scope');
const K = 10;

/** The last word in its other number: "workout" ↔ "workouts", "recipe" ↔ "recipes", "dishes" → "dish". */
function otherNumber(phrase: string): string {
  const words = phrase.split(' ');
  const last = words.at(-1)!;
  let other: string;
  if (/(ss|sh|ch|x)es$/.test(last)) other = last.slice(0, -2);
  else if (/ies$/.test(last)) other = `${last.slice(0, -3)}y`;
  else if (/s$/.test(last) && !/ss$/.test(last)) other = last.slice(0, -1);
  else if (/(s|sh|ch|x)$/.test(last)) other = `${last}es`;
  else if (/[^aeiou]y$/.test(last)) other = `${last.slice(0, -1)}ies`;
  else other = `${last}s`;
  return [...words.slice(0, -1), other].join(' ');
}

/**
 * One slip of the fingers in the phrase's longest word of five letters or more, at its middle: a
 * letter left out, or two neighbours swapped (by the phrase's letters, so each run types the same
 * slips); a phrase without such a word is left as written.
 */
function misspelt(phrase: string): string {
  const words = phrase.split(' ');
  const longest = words.reduce((best, w, i) => (w.length > words[best]!.length ? i : best), 0);
  const word = words[longest]!;
  if (word.length < 5 || !/^[a-z]+$/.test(word)) return phrase;
  const at = Math.floor(word.length / 2);
  const swap = [...phrase].reduce((sum, c) => sum + c.charCodeAt(0), 0) % 2 === 1 && word[at - 1] !== word[at];
  words[longest] = swap
    ? word.slice(0, at - 1) + word[at]! + word[at - 1]! + word.slice(at + 1)
    : word.slice(0, at) + word.slice(at + 1);
  return words.join(' ');
}

const PHRASINGS = {
  topic: (phrase: string) => phrase,
  inflected: otherNumber,
  asked: (phrase: string) => `who posts about ${otherNumber(phrase)}`,
  misspelt,
} as const;
type Phrasing = keyof typeof PHRASINGS;

/** Servable, public accounts of the labels (what account search can return), by service ID. */
const labels = seedAccountLabels({ posts: args.posts, accounts: args.accounts, seed: args.seed }).filter(
  (a) => a.active && !a.isPrivate,
);
const nicheOf = new Map(labels.map((a) => [mintId('account', a.id), new Set(a.niches)]));
const perNiche = new Map<string, number>();
for (const a of labels) for (const n of a.niches) perNiche.set(n, (perNiche.get(n) ?? 0) + 1);

/** Each first page's time at the client, 429 waits left out, by phrasing. */
const took: number[] = [];
const tookBy = new Map<string, number[]>();

async function firstPage(query: string, phrasing: string): Promise<string[]> {
  const started = performance.now();
  const response = await fetch(`${args.url}/v1/social/accounts/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ account: { query }, limit: K }),
  });
  if (response.status === 429) {
    // The key's searches per minute: wait as told, then ask again.
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get('retry-after') ?? 5)));
    return firstPage(query, phrasing);
  }
  if (response.status !== 200) throw new Error(`${query}: ${response.status} ${await response.text()}`);
  const ms = performance.now() - started;
  took.push(ms);
  tookBy.set(phrasing, [...(tookBy.get(phrasing) ?? []), ms]);
  return ((await response.json()) as { data: Array<{ id: string }> }).data.map((a) => a.id);
}

/** Each query's niche precision, by `<phrasing>:<topic>`, for paired comparisons between runs. */
const perQuery: Record<string, number> = {};
const results: Record<Phrasing, { precision: number[]; empty: number }> = {
  topic: { precision: [], empty: 0 },
  inflected: { precision: [], empty: 0 },
  asked: { precision: [], empty: 0 },
  misspelt: { precision: [], empty: 0 },
};
for (const niche of NICHES) {
  const relevant = perNiche.get(niche.id) ?? 0;
  if (relevant === 0) continue;
  for (const [topicId, phrase] of niche.topics) {
    for (const phrasing of Object.keys(PHRASINGS) as Phrasing[]) {
      const ids = await firstPage(PHRASINGS[phrasing](phrase), phrasing);
      const depth = Math.min(K, relevant);
      const hits = ids.slice(0, depth).filter((id) => nicheOf.get(id)?.has(niche.id)).length;
      results[phrasing].precision.push(hits / depth);
      perQuery[`${phrasing}:${topicId}`] = hits / depth;
      if (ids.length === 0) results[phrasing].empty += 1;
    }
  }
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT }).toString().trim();
const summary = Object.fromEntries(
  (Object.keys(results) as Phrasing[]).map((p) => [
    p,
    {
      queries: results[p].precision.length,
      niche_precision: Number(mean(results[p].precision).toFixed(4)),
      empty: results[p].empty,
    },
  ]),
);
const p50 = (xs: number[]) => Number([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(2));
const p50Ms = p50(took);
const p50ByPhrasing = Object.fromEntries([...tookBy].map(([phrasing, ms]) => [phrasing, p50(ms)]));
const record = {
  at: new Date().toISOString(),
  commit,
  label: args.label ?? null,
  size: { posts: args.posts, accounts: args.accounts, seed: args.seed },
  judged_accounts: labels.length,
  first_page_p50_ms: p50Ms,
  first_page_p50_ms_by_phrasing: p50ByPhrasing,
  ...summary,
  per_query: perQuery,
};
console.table(summary);
console.log(`first page p50 ${p50Ms} ms (${took.length} queries, each asked once: the query embedding not cached)`);
console.log(`by phrasing: ${JSON.stringify(p50ByPhrasing)}`);
const out = path.join(REPO_ROOT, 'bench/results');
mkdirSync(out, { recursive: true });
appendFileSync(path.join(out, 'relevance-account-search.json'), `${JSON.stringify(record)}\n`);
