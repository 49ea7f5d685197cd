import type { Client } from '@elastic/elasticsearch';

/**
 * The engine's CPU time so far, every node's, in milliseconds (`_nodes/stats`, process): a bench
 * reads it before and after a run and reports the difference beside its own `process.cpuUsage()`.
 */
export async function engineCpuMs(es: Pick<Client, 'nodes'>): Promise<number> {
  const stats = await es.nodes.stats({ metric: 'process' });
  return Object.values(stats.nodes).reduce((sum, node) => sum + (node.process?.cpu?.total_in_millis ?? 0), 0);
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
