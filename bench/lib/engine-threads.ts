import { readdirSync, readFileSync } from 'node:fs';
import type { Client } from '@elastic/elasticsearch';
import { CLK_TCK } from './processes.ts';

/** The engine's CPU seconds by the JVM's kinds of thread: its JIT compilers, its collector, the rest. */
export interface EngineThreadsCpu {
  /** C1 and C2 compiler threads: compiling the engine's code, a cost that dwindles as the JVM warms. */
  jit: number;
  /** G1's threads (`GC Thread#n`, `G1 …`). */
  gc: number;
  /** Every other thread: the engine's own work (indexing, gets, searches, refreshes, merges). */
  rest: number;
}

/** The kind of a JVM thread by its Linux name (the JVM names its own threads; the engine's start `elasticsearch[`). */
function kindOf(name: string): keyof EngineThreadsCpu {
  if (name.startsWith('C1 Compiler') || name.startsWith('C2 Compiler')) return 'jit';
  if (name.startsWith('GC Thread') || name.startsWith('G1 ')) return 'gc';
  return 'rest';
}

/**
 * Samples the CPU of every thread of the local Elasticsearch nodes each `intervalMs`, by kind
 * ({@link EngineThreadsCpu}). Per thread, because the kinds are not in `_nodes/stats`: on
 * 2026-12-06 a 50k intake run on an engine started 3 minutes before cost it 128 CPU-s, 53 of them
 * in the JIT compilers, and the fourth run after it 56 with 3 (bench/intake.md, "The engine's two
 * modes"). Sampled rather than read once at each end since the JVM starts and stops compiler and
 * merge threads as it goes, and a thread gone takes its count with it: what one does after the last
 * sample (≤ `intervalMs`) is lost. Null when no node runs on this machine (its `/proc` is not here).
 */
export async function sampleEngineThreads(
  es: Pick<Client, 'nodes'>,
  intervalMs = 1000,
): Promise<{ read: () => EngineThreadsCpu; stop: () => void } | null> {
  const info = await es.nodes.info({ metric: 'process' });
  const pids = Object.values(info.nodes).map((n) => Number(n.process?.id));
  if (pids.length === 0 || !pids.every((pid) => readTasks(pid) !== null)) return null;
  const lastTicks = new Map<string, number>();
  const total: EngineThreadsCpu = { jit: 0, gc: 0, rest: 0 };
  const sample = () => {
    for (const pid of pids) {
      for (const task of readTasks(pid) ?? []) {
        const key = `${pid}/${task.tid}/${task.name}`;
        total[kindOf(task.name)] += (task.ticks - (lastTicks.get(key) ?? 0)) / CLK_TCK;
        lastTicks.set(key, task.ticks);
      }
    }
  };
  sample();
  const baseline = { ...total };
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return {
    read: () => {
      sample();
      return { jit: total.jit - baseline.jit, gc: total.gc - baseline.gc, rest: total.rest - baseline.rest };
    },
    stop: () => clearInterval(timer),
  };
}

/** Every thread of `pid` with its name and CPU ticks (user + system), or null when `pid` is not here. */
function readTasks(pid: number): Array<{ tid: string; name: string; ticks: number }> | null {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const tasks = [];
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    tasks.push({ tid, name, ticks: Number(fields[11]) + Number(fields[12]) });
  }
  return tasks;
}

/** The difference of two readings. */
export function threadsBetween(before: EngineThreadsCpu, after: EngineThreadsCpu): EngineThreadsCpu {
  return { jit: after.jit - before.jit, gc: after.gc - before.gc, rest: after.rest - before.rest };
}
