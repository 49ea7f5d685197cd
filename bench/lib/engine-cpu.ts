import type { Client } from '@elastic/elasticsearch';

/**
 * The engine's CPU time so far, every node's, in milliseconds (`_nodes/stats`, process): a bench
 * reads it before and after a run and reports the difference beside its own `process.cpuUsage()`.
 */
export async function engineCpuMs(es: Pick<Client, 'nodes'>): Promise<number> {
  const stats = await es.nodes.stats({ metric: 'process' });
  return Object.values(stats.nodes).reduce((sum, node) => sum + (node.process?.cpu?.total_in_millis ?? 0), 0);
}
