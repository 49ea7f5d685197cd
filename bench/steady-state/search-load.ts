/**
 * A fixed, open-loop search load for the steady-state day: `rate` requests a second whatever the
 * answers' times (a late answer never delays the next request, so a slow service shows in the
 * latencies instead of in a lower rate), over undici keep-alive connections, timed per phase
 * (`idle`, `day`, …) and per kind. Five kinds in turn, their parameters drawn from a seeded
 * stream over the seed's vocabulary:
 *
 * - `post_query`: a post text search (lexical, or hybrid with the model);
 * - `post_filters_sort`: format and views filters, sorted by a counter;
 * - `post_author_metric`: recent posts of authors with ≥ 10,000 followers and a median views
 *   over 90 days above a bound (author scope: followers_count and a derived metric);
 * - `account_filters`: accounts of a niche above a follower count, by followers;
 * - `account_posts_scope`: accounts of a niche with 1–2 recent posts above a views bound
 *   (the `account.posts` publishing scope).
 */
import { Pool } from 'undici';
import { DAY } from '../../src/seed/accounts.ts';
import { Rng } from '../../src/seed/random.ts';
import { NICHES } from '../../src/seed/vocabulary.ts';
import { queryTexts } from '../soak/mix.ts';
import { quantile } from '../lib/measure.ts';

/** The kinds of search, in the order they are sent. */
export const SEARCH_KINDS = [
  'post_query',
  'post_filters_sort',
  'post_author_metric',
  'account_filters',
  'account_posts_scope',
] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

interface SearchRequest {
  kind: SearchKind;
  path: string;
  body: string;
}

/** Latencies of one phase and kind. */
export interface LatencyStats {
  requests: number;
  /** Answers other than 200, and requests without an answer. */
  errors: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  /** Mean results per answer (an empty answer is cheap: the mix should find something). */
  mean_results: number;
}

const ms = (x: number) => Math.round(x * 10) / 10;

function stats(list: number[], errors: number, results: number): LatencyStats {
  const sorted = [...list].sort((a, b) => a - b);
  return {
    requests: list.length,
    errors,
    p50_ms: ms(quantile(sorted, 0.5, 0)),
    p90_ms: ms(quantile(sorted, 0.9, 0)),
    p99_ms: ms(quantile(sorted, 0.99, 0)),
    max_ms: ms(sorted.at(-1) ?? 0),
    mean_results: list.length === 0 ? 0 : ms(results / list.length),
  };
}

/** The request stream: kinds in turn, parameters from `seed`; dates relative to the dataset's `now`. */
function searchRequests(seed: number, now: number): () => SearchRequest {
  const rng = new Rng(seed);
  const texts = queryTexts();
  const niches = NICHES.map((n) => n.id);
  const since = (days: number) => new Date(now - days * DAY).toISOString().slice(0, 19) + 'Z';
  let turn = 0;
  const post = (kind: SearchKind, body: unknown): SearchRequest => ({
    kind,
    path: '/v1/social/posts/search',
    body: JSON.stringify(body),
  });
  const account = (kind: SearchKind, body: unknown): SearchRequest => ({
    kind,
    path: '/v1/social/accounts/search',
    body: JSON.stringify(body),
  });
  const build: Record<SearchKind, () => SearchRequest> = {
    // Squaring a uniform skews towards the front: a few texts often, most rarely (as bench/soak/mix.ts).
    post_query: () =>
      post('post_query', { post: { query: texts[Math.floor(rng.next() ** 2 * texts.length)]! }, limit: 20 }),
    post_filters_sort: () =>
      post('post_filters_sort', {
        post: {
          filters: { format: { in: [rng.pick(['reel', 'carousel', 'image'])] }, views: { gte: rng.int(0, 20_000) } },
        },
        sort: rng.pick([
          { by: 'views', order: 'desc' },
          { by: 'likes', order: 'desc' },
          { by: 'posted_at', order: 'desc' },
        ]),
        limit: 20,
      }),
    post_author_metric: () =>
      post('post_author_metric', {
        post: {
          filters: { posted_at: { gte: since(rng.pick([30, 90])) } },
          author: {
            filters: {
              followers_count: { gte: 10_000 },
              median_views_90d: { gte: rng.pick([500, 2000, 10_000]) },
            },
          },
        },
        sort: { by: 'views', order: 'desc' },
        limit: 20,
      }),
    account_filters: () =>
      account('account_filters', {
        account: {
          filters: {
            niches: { contains_any: [rng.pick(niches)] },
            followers_count: { gte: rng.pick([1000, 10_000, 100_000]) },
          },
        },
        sort: { by: 'followers_count', order: 'desc' },
        limit: 20,
      }),
    account_posts_scope: () =>
      account('account_posts_scope', {
        account: {
          filters: { niches: { contains_any: [rng.pick(niches)] } },
          posts: {
            minimum_matching_posts: rng.int(1, 2),
            filters: { posted_at: { gte: since(30) }, views: { gte: rng.pick([100, 1000, 5000]) } },
          },
        },
        limit: 20,
      }),
  };
  return () => build[SEARCH_KINDS[turn++ % SEARCH_KINDS.length]!]();
}

/** A running search load. */
export interface SearchLoad {
  /** Labels the requests sent from now on (null: sent, not recorded, e.g. a warm-up). */
  setPhase(phase: string | null): void;
  /** Latencies so far of `phase` and its sub-phases (`phase:…`), overall and per kind. */
  report(phase: string): { all: LatencyStats; kinds: Record<string, LatencyStats> };
  /** Every latency of `phase` and its sub-phases, ms, all kinds together (to pool runs: compare-days.ts). */
  samples(phase: string): number[];
  /** The `n` slowest searches of `phase` and its sub-phases: when each was due (ISO) and what it was. */
  slowest(phase: string, n: number): Array<{ at: string; kind: string; ms: number }>;
  /** Statuses of answers other than 200 so far, with a sample body. */
  failures(): Array<{ kind: string; status: number | string; body: string }>;
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<void>;
}

/**
 * Starts sending `rate` searches a second to `baseUrl`. Latency runs from the moment a request was
 * due (not when a connection took it), so a client-side wait counts too.
 */
export function startSearchLoad(options: {
  baseUrl: string;
  key: string;
  rate: number;
  /** The dataset's reference time, ms (posted_at bounds). */
  now: number;
  seed?: number;
}): SearchLoad {
  const next = searchRequests(options.seed ?? 7, options.now);
  // Enough connections that a slow answer never holds the next request back.
  const pool = new Pool(options.baseUrl, { connections: 32, pipelining: 1 });
  const samples = new Map<string, Map<string, number[]>>();
  const errors = new Map<string, Map<string, number>>();
  const results = new Map<string, Map<string, number>>();
  const failures: Array<{ kind: string; status: number | string; body: string }> = [];
  const timeline: Array<{ phase: string; at: number; kind: string; ms: number }> = [];
  const inFlight = new Set<Promise<void>>();
  let phase: string | null = null;
  let stopped = false;
  const interval = 1000 / options.rate;
  const started = performance.now();
  let sent = 0;

  const record = <T>(map: Map<string, Map<string, T>>, p: string, kind: string, init: T, f: (v: T) => T) => {
    let byKind = map.get(p);
    if (!byKind) map.set(p, (byKind = new Map()));
    byKind.set(kind, f(byKind.get(kind) ?? init));
  };

  const send = (due: number, p: string | null) => {
    const request = next();
    const done = (async () => {
      let status: number | string;
      let body = '';
      try {
        const response = await pool.request({
          method: 'POST',
          path: request.path,
          headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' },
          body: request.body,
        });
        status = response.statusCode;
        body = await response.body.text();
      } catch (error) {
        status = String(error);
      }
      const elapsed = performance.now() - due;
      if (status !== 200) {
        if (failures.length < 20) failures.push({ kind: request.kind, status, body: body.slice(0, 300) });
        if (p !== null) record(errors, p, request.kind, 0, (n) => n + 1);
        return;
      }
      if (p === null) return;
      const found = (JSON.parse(body) as { data: unknown[] }).data.length;
      record(results, p, request.kind, 0, (n) => n + found);
      timeline.push({ phase: p, at: performance.timeOrigin + due, kind: request.kind, ms: elapsed });
      record(samples, p, request.kind, [] as number[], (list) => {
        list.push(elapsed);
        return list;
      });
    })();
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done));
  };

  // A timer per request, each due at start + n/rate: drift never accumulates.
  const tick = () => {
    if (stopped) return;
    const now = performance.now();
    while (started + sent * interval <= now) {
      send(started + sent * interval, phase);
      sent++;
    }
    setTimeout(tick, Math.max(0, started + sent * interval - performance.now()));
  };
  // Rate 0: no searches (a day that measures the intake alone).
  if (options.rate > 0) tick();

  return {
    setPhase(p) {
      phase = p;
    },
    report(p) {
      const byKind = merged(samples, p, (a: number[], b: number[]) => [...a, ...b]);
      const errs = merged(errors, p, (a: number, b: number) => a + b);
      const found = merged(results, p, (a: number, b: number) => a + b);
      const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
      const kinds: Record<string, LatencyStats> = {};
      for (const kind of SEARCH_KINDS)
        kinds[kind] = stats(byKind.get(kind) ?? [], errs.get(kind) ?? 0, found.get(kind) ?? 0);
      const all = stats([...byKind.values()].flat(), sum(errs), sum(found));
      return { all, kinds };
    },
    samples: (p) => [...merged(samples, p, (a: number[], b: number[]) => [...a, ...b]).values()].flat(),
    slowest: (p, n) =>
      timeline
        .filter((t) => t.phase === p || t.phase.startsWith(`${p}:`))
        .sort((a, b) => b.ms - a.ms)
        .slice(0, n)
        .map((t) => ({ at: new Date(t.at).toISOString(), kind: t.kind, ms: Math.round(t.ms * 10) / 10 })),
    failures: () => failures,
    async stop() {
      stopped = true;
      await Promise.all([...inFlight]);
      await pool.close();
    },
  };
}

/** The per-kind values of `phase` and of its sub-phases (`phase:…`), combined. */
function merged<T>(map: Map<string, Map<string, T>>, phase: string, combine: (a: T, b: T) => T): Map<string, T> {
  const out = new Map<string, T>();
  for (const [p, byKind] of map) {
    if (p !== phase && !p.startsWith(`${phase}:`)) continue;
    for (const [kind, value] of byKind) {
      const had = out.get(kind);
      out.set(kind, had === undefined ? value : combine(had, value));
    }
  }
  return out;
}
