/**
 * The service processes a bench starts (`social-search serve` and `worker`, service-stack.ts), and
 * what it reads of them from /proc: resident memory (VmRSS) and CPU time. Linux only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';

const MiB = 1024 * 1024;
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on every Linux this runs on). */
export const CLK_TCK = 100;

/** A child process of the bench, its output appended to a log file. */
export interface ServiceChild {
  readonly name: string;
  readonly pid: number;
  /** Resolves with the exit code (or the signal's name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** The last lines it wrote, for error messages. */
  tail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `node <args>` (or `command <args>`) in `cwd`; stdout and stderr go to `logFile`. */
export function startChild(
  name: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; logFile: string; command?: string },
): ServiceChild {
  const command = options.command ?? process.execPath;
  const log = createWriteStream(options.logFile, { flags: 'a' });
  log.write(
    `--- ${new Date().toISOString()} ${name}: ${command === process.execPath ? 'node' : command} ${args.join(' ')}\n`,
  );
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    log.write(chunk);
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(line);
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      log.end();
      resolve(code ?? signal ?? 'unknown');
    });
  });
  let gone = false;
  void exited.then(() => (gone = true));
  return {
    name,
    pid: child.pid,
    exited,
    tail: () => lines.slice(-15).join('\n'),
    async stop(graceMs = 30_000) {
      if (gone) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resident set size of `pid` in MiB (VmRSS), or null once it has gone. */
export function rssMiB(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? (Number(match[1]) * 1024) / MiB : null;
  } catch {
    return null;
  }
}

/** User + system CPU seconds `pid` has used so far, or null once it has gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 (state) on.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return null;
  }
}

/**
 * Samples the RSS of some processes every `intervalMs`. Keeps each one's peak over its whole life
 * (start-up included: loading the model is part of what a worker costs), its peak since the last
 * {@link resetWindow} (the measured phase), and its last value.
 */
export class RssSampler {
  private readonly lifePeaks = new Map<number, number>();
  private readonly windowPeaks = new Map<number, number>();
  private readonly lasts = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pids: number[],
    intervalMs = 500,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  sample(): void {
    for (const pid of this.pids) {
      const rss = rssMiB(pid);
      if (rss === null) continue;
      this.lasts.set(pid, rss);
      this.lifePeaks.set(pid, Math.max(rss, this.lifePeaks.get(pid) ?? 0));
      this.windowPeaks.set(pid, Math.max(rss, this.windowPeaks.get(pid) ?? 0));
    }
  }

  /** Samples `pid` too, from now on. */
  add(pid: number): void {
    this.pids.push(pid);
    this.sample();
  }

  /** Starts a new peak window. */
  resetWindow(): void {
    this.windowPeaks.clear();
    this.sample();
  }

  lifePeak(pid: number): number | null {
    return this.lifePeaks.get(pid) ?? null;
  }

  windowPeak(pid: number): number | null {
    return this.windowPeaks.get(pid) ?? null;
  }

  last(pid: number): number | null {
    return this.lasts.get(pid) ?? null;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** CPU seconds the whole machine has spent busy so far (all cores; /proc/stat minus idle and iowait). */
export function machineBusySeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((sum, x) => sum + x, 0);
  return (total - fields[3]! - fields[4]!) / CLK_TCK;
}
