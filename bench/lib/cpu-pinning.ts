/**
 * CPU pinning for benches that compare the service with the raw engine on one machine. Pinning
 * every Elasticsearch JVM to some CPUs and the service's processes (and the load generator) to the
 * others models the deployment the ratios are about: the service on machines of its own, not
 * taking the engine's CPU. Both sides of a comparison run under the same pinning.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Client } from '@elastic/elasticsearch';
import type { Redis } from 'ioredis';

/** Sets the CPU affinity of every thread of `pid` (taskset's list syntax: `0`, `1-3`, `0,2`). */
export function pin(pid: number, cpus: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/**
 * The pid of the Redis server `redis` talks to when it runs on this machine (its CPU can be read
 * and pinned), or null when it is elsewhere.
 */
export async function localRedisPid(redis: Redis): Promise<number | null> {
  const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
  return Number.isInteger(pid) && pid > 0 && existsSync(`/proc/${pid}/stat`) ? pid : null;
}

/**
 * Pins every node of the cluster `es` talks to (they must run on this machine) to `engineCpus` and
 * `servicePids` to `serviceCpus`; returns what puts every one of them back on all CPUs. Returns a
 * description for the log too.
 */
export async function pinEngineAndService(
  es: Client,
  engineCpus: string,
  serviceCpus: string,
  servicePids: number[],
): Promise<{ unpin: () => void; description: string }> {
  const all = `0-${availableParallelism() - 1}`;
  const info = await es.nodes.info({ metric: 'process' });
  const engine = Object.values(info.nodes).map((n) => Number(n.process?.id));
  for (const pid of engine) pin(pid, engineCpus);
  for (const pid of servicePids) pin(pid, serviceCpus);
  let undone = false;
  const unpin = () => {
    if (undone) return;
    undone = true;
    for (const pid of [...engine, ...servicePids]) {
      try {
        pin(pid, all);
      } catch {
        // the process is gone already
      }
    }
  };
  return {
    unpin,
    description: `Elasticsearch (pids ${engine.join(', ')}) on CPUs ${engineCpus}; the service's processes (${servicePids.join(', ')}) on ${serviceCpus}`,
  };
}
