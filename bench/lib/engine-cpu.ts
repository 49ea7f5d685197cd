import type { Client } from '@elastic/elasticsearch';

/**
 * The engine's CPU time so far, every node's, in milliseconds (`_nodes/stats`, process): a bench
 * reads it before and after a run and reports the difference beside its own `process.cpuUsage()`.
 */
export async function engineCpuMs(es: Pick<Client, 'nodes'>): Promise<number> {
  const stats = await es.nodes.stats({ metric: 'process' });
  return Object.values(stats.nodes).reduce((sum, node) => sum + (node.process?.cpu?.total_in_millis ?? 0), 0);
}

/** The engine's CPU at rest, ms a second (the stats polls included), over `ms`: to take out of a measure. */
export async function idleCpuRate(es: Pick<Client, 'nodes'>, ms = 5000): Promise<number> {
  const cpu0 = await engineCpuMs(es);
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return ((await engineCpuMs(es)) - cpu0) / ((performance.now() - t0) / 1000);
}

/** Counters of what the engine did, summed over every node and index (`_nodes/stats`, indices). */
export interface EngineActivity {
  /** Milliseconds spent in each kind of work (time in the engine's threads, not CPU: merges are throttled). */
  get_ms: number;
  search_ms: number;
  index_ms: number;
  refresh_ms: number;
  merge_ms: number;
  gets: number;
  searches: number;
  refreshes: number;
  merges: number;
}

/**
 * What the engine has done so far: a bench takes the difference over a run to say where the
 * engine's CPU went (gets, searches, indexing, refreshes, merges), which the CPU total cannot.
 */
export async function engineActivity(es: Pick<Client, 'nodes'>): Promise<EngineActivity> {
  const stats = await es.nodes.stats({
    metric: 'indices',
    index_metric: ['get', 'search', 'indexing', 'refresh', 'merge'],
  });
  const total: EngineActivity = {
    get_ms: 0,
    search_ms: 0,
    index_ms: 0,
    refresh_ms: 0,
    merge_ms: 0,
    gets: 0,
    searches: 0,
    refreshes: 0,
    merges: 0,
  };
  for (const node of Object.values(stats.nodes)) {
    const i = node.indices;
    if (!i) continue;
    total.get_ms += i.get?.time_in_millis ?? 0;
    total.gets += i.get?.total ?? 0;
    total.search_ms += (i.search?.query_time_in_millis ?? 0) + (i.search?.fetch_time_in_millis ?? 0);
    total.searches += i.search?.query_total ?? 0;
    total.index_ms += i.indexing?.index_time_in_millis ?? 0;
    total.refresh_ms += i.refresh?.total_time_in_millis ?? 0;
    total.refreshes += i.refresh?.total ?? 0;
    total.merge_ms += i.merges?.total_time_in_millis ?? 0;
    total.merges += i.merges?.total ?? 0;
  }
  return total;
}

/** `after − before`, field by field. */
export function activitySince(before: EngineActivity, after: EngineActivity): EngineActivity {
  const out = { ...after };
  for (const key of Object.keys(out) as Array<keyof EngineActivity>) out[key] = after[key] - before[key];
  return out;
}

/** Counters of what the engine did in some indices, primaries, from their creation on. */
export interface IndexWork {
  index_ops: number;
  index_ms: number;
  refreshes: number;
  /** Of `refreshes`, those asked for (refresh API, `refresh=true`), not the engine's own. */
  external_refreshes: number;
  refresh_ms: number;
  merges: number;
  merge_ms: number;
  merged_docs: number;
  /** Bytes the merges read (`merges.total_size_in_bytes`): what a stored byte costs again and again. */
  merged_bytes: number;
  /** The primaries' store on disk now (not a counter: a delta is the growth). */
  store_bytes: number;
  gets: number;
  get_ms: number;
  flushes: number;
  segments: number;
  queries: number;
  query_ms: number;
  fetch_ms: number;
}

/** A counter of {@link IndexWork}, or one of its times in seconds (`index_s` for `index_ms`, two decimals). */
export type WorkCounter =
  keyof IndexWork | (keyof IndexWork extends infer K ? (K extends `${infer B}_ms` ? `${B}_s` : never) : never);

/**
 * The `counters` of {@link IndexWork} in `index` (names, aliases or patterns, comma-separated), in
 * that order; all 0 when there is none. The service's and the raw side's reach the same documents:
 * their difference says where the service's extra engine CPU goes (real-time gets force refreshes).
 */
export async function indexWork<K extends WorkCounter>(
  es: Pick<Client, 'indices'>,
  index: string,
  counters: readonly K[],
): Promise<Record<K, number>> {
  const stats = await es.indices
    .stats({ index, metric: ['indexing', 'merge', 'refresh', 'get', 'flush', 'segments', 'search', 'store'] })
    .catch(() => null);
  const p = stats?._all.primaries;
  const all: IndexWork = {
    index_ops: p?.indexing?.index_total ?? 0,
    index_ms: p?.indexing?.index_time_in_millis ?? 0,
    refreshes: p?.refresh?.total ?? 0,
    external_refreshes: p?.refresh?.external_total ?? 0,
    refresh_ms: p?.refresh?.total_time_in_millis ?? 0,
    merges: p?.merges?.total ?? 0,
    merge_ms: p?.merges?.total_time_in_millis ?? 0,
    merged_docs: p?.merges?.total_docs ?? 0,
    merged_bytes: p?.merges?.total_size_in_bytes ?? 0,
    store_bytes: p?.store?.size_in_bytes ?? 0,
    gets: p?.get?.total ?? 0,
    get_ms: p?.get?.time_in_millis ?? 0,
    flushes: p?.flush?.total ?? 0,
    segments: p?.segments?.count ?? 0,
    queries: p?.search?.query_total ?? 0,
    query_ms: p?.search?.query_time_in_millis ?? 0,
    fetch_ms: p?.search?.fetch_time_in_millis ?? 0,
  };
  const value = (counter: WorkCounter) =>
    counter in all
      ? all[counter as keyof IndexWork]
      : Math.round(all[counter.replace(/_s$/, '_ms') as keyof IndexWork] / 10) / 100;
  return Object.fromEntries(counters.map((counter) => [counter, value(counter)])) as Record<K, number>;
}

/** {@link indexWork} of a prefix's posts, accounts and metric-history indices, each apart. */
export async function familyWork<K extends WorkCounter>(
  es: Pick<Client, 'indices'>,
  prefix: string,
  counters: readonly K[],
): Promise<Record<'posts' | 'post_vectors' | 'accounts' | 'metrics', Record<K, number>>> {
  // The posts' vector documents (since 2026-11-30; all 0 for a service before them).
  const [posts, postVectors, accounts, metrics] = await Promise.all(
    ['posts-v*', 'post-vectors-v*', 'accounts-v*', 'metrics-*'].map((family) =>
      indexWork(es, `${prefix}-${family}`, counters),
    ),
  );
  return { posts: posts!, post_vectors: postVectors!, accounts: accounts!, metrics: metrics! };
}

/**
 * Redis's CPU time so far, in milliseconds (`INFO cpu`: the server's own threads; not its
 * snapshot children, whose cost is the operator's persistence setting).
 */
export async function redisCpuMs(redis: { info(section: 'cpu'): Promise<string> }): Promise<number> {
  const info = await redis.info('cpu');
  const value = (name: string) => Number(new RegExp(`^used_cpu_${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return (value('sys') + value('user')) * 1000;
}

/**
 * Waits until no node is merging (`_nodes/stats` merges.current), at most `timeoutMs`; returns
 * whether it settled. A bench that counts the engine's CPU per round waits for it at each round's
 * end: the merges a round's writes set off are then counted in that round, not in whichever comes
 * next (bench/alerts.md).
 */
export async function mergesSettled(es: Pick<Client, 'nodes'>, timeoutMs = 120_000): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const stats = await es.nodes.stats({ metric: 'indices', index_metric: ['merge'] });
    const merging = Object.values(stats.nodes).reduce((sum, node) => sum + (node.indices?.merges?.current ?? 0), 0);
    if (merging === 0) return true;
    if (performance.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** What the engine's nodes read from their disks so far (`_nodes/stats`, fs io_stats: Linux only). */
export interface DiskReads {
  read_mb: number;
  read_operations: number;
}

/** Reads from disk so far, every node's: what the page cache did not hold. */
export async function diskReads(es: Pick<Client, 'nodes'>): Promise<DiskReads> {
  const stats = await es.nodes.stats({ metric: 'fs' });
  let kb = 0;
  let operations = 0;
  for (const node of Object.values(stats.nodes)) {
    kb += node.fs?.io_stats?.total?.read_kilobytes ?? 0;
    operations += node.fs?.io_stats?.total?.read_operations ?? 0;
  }
  return { read_mb: kb / 1024, read_operations: operations };
}

/** The reads between two readings, MB rounded to a tenth. */
export function diskDelta(after: DiskReads, before: DiskReads): DiskReads {
  return {
    read_mb: Math.round((after.read_mb - before.read_mb) * 10) / 10,
    read_operations: after.read_operations - before.read_operations,
  };
}
