import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiProcess, type ApiProcess } from '../helpers/api-process.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

// Searches first on a shared host: the processes that serve no searches (a worker, an intake-only
// node) run at a lower CPU priority, every thread of them; a node serving searches does not.
let stack: Stack;
const started: ApiProcess[] = [];

beforeAll(async () => {
  stack = await startStack('bgprio', {}, { worker: false });
});

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
  await stack?.close();
});

async function start(env: Record<string, string>, command: 'serve' | 'worker' = 'serve'): Promise<ApiProcess> {
  const child = await startApiProcess(stack.config, env, { command });
  started.push(child);
  return child;
}

/** Each thread's nice value (field 19 of /proc/<pid>/task/<tid>/stat; the fields after the name). */
function threadNiceness(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe.skipIf(process.platform !== 'linux')('background work at a lower CPU priority', () => {
  it('a worker and an intake node run every thread at BACKGROUND_NICENESS; a reads node and an all-routes node do not', async () => {
    const own = Math.max(...threadNiceness(process.pid));
    const [worker, intake, reads, all, unniced] = await Promise.all([
      start({}, 'worker'),
      start({ API_ROUTES: 'intake' }),
      start({ API_ROUTES: 'reads' }),
      start({}),
      start({ API_ROUTES: 'intake', BACKGROUND_NICENESS: '0' }),
    ]);
    const workerThreads = threadNiceness(worker.pid);
    // V8's and libuv's threads too, not the main thread alone: Linux gives each thread its own.
    expect(workerThreads.length).toBeGreaterThan(4);
    expect(new Set(workerThreads)).toEqual(new Set([Math.max(10, own)]));
    expect(worker.output()).toMatch(/"msg":"background work at a lower CPU priority"/);
    // The log counts the threads it lowered, all of them here (none was at 10 before).
    const logged = /"threads":(\d+),"lowered":(\d+)/.exec(worker.output());
    expect(Number(logged?.[1])).toBeGreaterThan(4);
    expect(logged?.[2]).toBe(own >= 10 ? '0' : logged?.[1]);
    expect(new Set(threadNiceness(intake.pid))).toEqual(new Set([Math.max(10, own)]));
    // Searches are served at the priority the node was started with.
    expect(new Set(threadNiceness(reads.pid))).toEqual(new Set([own]));
    expect(new Set(threadNiceness(all.pid))).toEqual(new Set([own]));
    expect(new Set(threadNiceness(unniced.pid))).toEqual(new Set([own]));
  });
});
