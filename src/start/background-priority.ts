import { readdirSync } from 'node:fs';
import os from 'node:os';
import type { Logger } from 'pino';

/**
 * Searches first, on a shared host: a process that does only background work (a worker, an
 * intake-only API node) lowers its CPU priority to `niceness`, so that when it shares cores with
 * the engine or a reads node, the searches customers wait on are scheduled first. Under no
 * contention nice changes nothing. Figures: bench/steady-state.md, "Background work niced".
 *
 * On Linux a priority belongs to a thread, not a process (setpriority(2), "BUGS"): every thread
 * already running is lowered (V8's and libuv's, read from /proc/self/task); threads started later
 * (the model's, onnxruntime's, libuv's pool) inherit it from the thread that starts them. Elsewhere
 * the calling thread is lowered, which is what `os.setPriority` can do. A priority is only ever
 * lowered: raising one back needs privileges, and 0 leaves the process as it is.
 */
export function lowerCpuPriority(
  niceness: number,
  logger: Pick<Logger, 'info' | 'warn'>,
  role: 'worker' | 'intake node',
): void {
  if (niceness <= 0) return;
  let lowered = 0;
  let failed: unknown = null;
  const threads = threadIds();
  for (const thread of threads) {
    try {
      if (os.getPriority(thread) >= niceness) continue;
      os.setPriority(thread, niceness);
      lowered += 1;
    } catch (error) {
      // A thread may end between the listing and the call; anything else is reported once below.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') failed = error;
    }
  }
  if (failed !== null) logger.warn({ err: failed, niceness, role }, 'could not lower the CPU priority of every thread');
  else logger.info({ niceness, threads: threads.length, lowered, role }, 'background work at a lower CPU priority');
}

/** The process's threads on Linux; elsewhere the calling thread alone (0). */
function threadIds(): number[] {
  if (process.platform !== 'linux') return [0];
  try {
    return readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
  } catch {
    return [0];
  }
}
