import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A dedicated redis-server for one drill: its own port and data directory, AOF on with an fsync
 * per write, so it can be stopped and started again for real without disturbing the shared Redis
 * that other test files use.
 */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** Stops the server: `SHUTDOWN NOSAVE` (AOF is still flushed), or a signal. */
  stop(how?: 'shutdown-nosave' | 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same port and directory; resolves once it answers PING (AOF loaded). */
  start(): Promise<void>;
  /** Sends one command over a fresh connection (inline protocol); returns the raw reply (RESP). */
  command(line: string): Promise<string>;
  /** Kills the server and removes its directory. */
  close(): Promise<void>;
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const running = new Set<ChildProcess>();
// A crashed test run must not leave redis-servers behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'drill-redis-'));
  let child: ChildProcess | null = null;
  let log = '';

  async function start() {
    const proc = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--daemonize',
        'no',
        '--protected-mode',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
    proc.stderr.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
    running.add(proc);
    proc.once('exit', () => running.delete(proc));
    // If this process dies without closing the server (killed, or a clean-up that threw first), a
    // watchdog kills the server and removes its directory: no redis-server outlives its test.
    spawn(
      'sh',
      [
        '-c',
        `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${proc.pid} 2>/dev/null; do sleep 1; done; if ! kill -0 ${process.pid} 2>/dev/null; then kill -9 ${proc.pid} 2>/dev/null; rm -rf '${dir}'; fi`,
      ],
      { stdio: 'ignore', detached: true },
    ).unref();
    child = proc;
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}:\n${log}`);
      const reply = await command('PING').catch(() => '');
      if (reply.startsWith('+PONG')) return;
      if (Date.now() > deadline)
        throw new Error(`redis-server on ${port} did not answer PING (last: ${reply})\n${log}`);
      await sleep(50);
    }
  }

  function command(line: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      let data = '';
      socket.setTimeout(5000, () => socket.destroy(new Error('timeout')));
      // QUIT after the command: the server closes the connection once both are answered.
      socket.on('connect', () => socket.write(`${line}\r\nQUIT\r\n`));
      socket.on('data', (d) => (data += d.toString()));
      socket.on('error', reject);
      socket.on('close', () => resolve(data));
    });
  }

  async function stop(how: 'shutdown-nosave' | 'SIGTERM' | 'SIGKILL' = 'shutdown-nosave') {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    if (how === 'shutdown-nosave') await command('SHUTDOWN NOSAVE').catch(() => undefined);
    else proc.kill(how);
    await Promise.race([exited, sleep(10_000).then(() => proc.kill('SIGKILL'))]);
    await exited;
    child = null;
  }

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    stop,
    start,
    command,
    async close() {
      await stop('SIGKILL').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
