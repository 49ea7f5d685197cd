import { errors, type Client } from '@elastic/elasticsearch';
import { Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../internal/config.ts';
import { createOutageLog, type OutageLog, type OutageLogger } from '../internal/outages.ts';
import { createElasticsearchClient } from './elasticsearch-client.ts';

/**
 * The connections of one process, opened on first use: a command that only touches Redis (`keys
 * list`) never opens an Elasticsearch client, and the reverse. Connections recover by themselves
 * when a service returns; meanwhile requests answer 503, and the log says so once per outage and
 * connection (src/internal/outages.ts), never once per reconnect attempt.
 */
export interface Connections {
  /** The Elasticsearch client. */
  elasticsearch(): Client;
  /** The fail-fast Redis connection for request-path commands. */
  redis(): Redis;
  /**
   * The fail-fast Redis connection BullMQ producers add jobs on, one per process. Not
   * {@link redis}: BullMQ defines its Lua scripts (64) on the connection it is given, and ioredis
   * copies every defined script onto each pipeline and transaction it builds (a pipeline took
   * 60–70 µs with them against 5 without), which every store's pipelines would pay.
   */
  producerRedis(): Redis;
  /**
   * The fail-fast Redis connection of background jobs' stores (the alert worker's): down, its
   * commands fail at once like {@link redis}'s, but a busy Redis is waited for up to
   * {@link JOB_COMMAND_TIMEOUT_MS}, not the request path's 2 s. A job that gives up retries whole:
   * an intake job timing out after its engine write was redone about once per alerts bench run
   * behind a pass's writes (bench/alerts.md).
   */
  jobRedis(): Redis;
  /** A new Redis connection for blocking commands that the caller runs itself (Pub/Sub). */
  blockingRedis(purpose: string): Redis;
  /**
   * A connection for a BullMQ worker or queue-events listener. BullMQ duplicates it for each
   * connection it needs, so this one never connects itself; every duplicate is watched under
   * `purpose` and disconnected by {@link close}.
   */
  queueRedis(purpose: string): Redis;
  /**
   * Waits (bounded) for the fail-fast Redis connections (the request path's, and the producers'
   * once opened), so the first command does not race the connect. Resolves false on time-out: the
   * process then runs degraded (503s) until Redis is back.
   */
  redisReady(timeoutMs?: number): Promise<boolean>;
  /**
   * True while the fail-fast Redis connections are connected: the request path's (false before it
   * is first opened) and the producers' once opened.
   */
  redisUp(): boolean;
  /**
   * Disconnects every connection opened so far, BullMQ's duplicates included, without waiting on
   * the servers: a shutdown during an outage must not wait for a Redis that is not there.
   */
  close(): Promise<void>;
}

/** Opens connections lazily. */
export function openConnections(
  config: Pick<Config, 'ELASTICSEARCH_URL' | 'ELASTICSEARCH_TIMEOUT_MS' | 'REDIS_URL'>,
  logger?: OutageLogger,
): Connections {
  let es: Client | undefined;
  let redis: Redis | undefined;
  const opened = new Set<Redis>();
  // One outage log per purpose: a worker's several BullMQ connections report one outage.
  const outages = new Map<string, OutageLog>();
  const outageOf = (name: string) => outages.get(name) ?? outages.set(name, createOutageLog(name, logger)).get(name)!;
  const open = (purpose: RedisPurpose, name: string) => {
    const connection = createRedis(config.REDIS_URL, purpose);
    watchRedis(connection, outageOf(name), opened);
    return connection;
  };
  const commandRedis = () => (redis ??= open('command', 'Redis'));
  let producer: Redis | undefined;
  let job: Redis | undefined;
  return {
    elasticsearch() {
      if (!es) {
        es = createElasticsearchClient(config);
        watchElasticsearch(es, outageOf('Elasticsearch'));
      }
      return es;
    },
    redis: commandRedis,
    // Under the same outage log as the request path's: one outage, one line each way.
    producerRedis: () => (producer ??= open('command', 'Redis')),
    jobRedis: () => (job ??= open('job', 'Redis')),
    blockingRedis: (purpose) => open('blocking', `Redis (${purpose})`),
    queueRedis: (purpose) => open('template', `Redis (${purpose})`),
    async redisReady(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      if (!(await whenReady(commandRedis(), timeoutMs))) return false;
      // The producers' connection reconnects on its own schedule (up to 2 s behind after an
      // outage): until it has, the intake still answers 503.
      return producer ? whenReady(producer, Math.max(0, deadline - Date.now())) : true;
    },
    redisUp: () => redis?.status === 'ready' && (producer === undefined || producer.status === 'ready'),
    async close() {
      for (const connection of opened) connection.disconnect();
      opened.clear();
      await es?.close().catch(() => undefined);
    },
  };
}

/** How long a job's Redis command may take on {@link Connections.jobRedis} (a store's own guard may set less). */
export const JOB_COMMAND_TIMEOUT_MS = 30_000;

type RedisPurpose = 'command' | 'job' | 'blocking' | 'template';

/**
 * A Redis connection. `command` connections fail fast while Redis is down (no offline queue, one
 * retry), so requests answer 503 promptly; `job` connections too, with a longer command timeout;
 * `blocking` connections are what BullMQ workers and
 * queue-event listeners require (they wait and reconnect forever); a `template` is the same, the
 * connection a BullMQ worker or listener is given (and duplicates).
 */
function createRedis(url: string, purpose: RedisPurpose): Redis {
  const common: RedisOptions = { connectTimeout: 2000, retryStrategy: (times: number) => Math.min(times * 200, 2000) };
  switch (purpose) {
    case 'command':
    case 'job':
      // Auto-pipelining: the commands concurrent requests issue in one tick (rate-limit counts,
      // visibility epochs, snapshot look-ups) leave in one write, not one system call each.
      return new Redis(url, {
        ...common,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        commandTimeout: purpose === 'job' ? JOB_COMMAND_TIMEOUT_MS : 2000,
        enableAutoPipelining: true,
      });
    default:
      // Never lazy: BullMQ initializes a connection once, and a lazy one's first connect rejects
      // when Redis is down or slow to answer (the event loop busy past `connectTimeout`), which left
      // that worker without a connection for good although Redis came back
      // (test/integration/redis-outage.test.ts). Connected eagerly, its initialization waits for
      // the first `ready`, however many reconnects that takes.
      return new Redis(url, { ...common, maxRetriesPerRequest: null });
  }
}

/** Resolves when the connection is ready, or after `timeoutMs` (the caller keeps going degraded). */
function whenReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}

/**
 * Reports a Redis connection's outages to `outage` (ioredis reconnects by itself and emits an
 * `error` per failed attempt; the log keeps the first), and does the same for every duplicate
 * made from it: BullMQ runs its workers and listeners on duplicates, whose errors would otherwise
 * reach the log once per attempt through BullMQ's `error` events. Open connections are kept in
 * `opened`, so that shutdown can disconnect them all.
 */
function watchRedis(connection: Redis, outage: OutageLog, opened: Set<Redis>): void {
  opened.add(connection);
  connection.on('error', (error: unknown) => outage.down(error, connection));
  connection.on('ready', () => outage.up(connection));
  // A connection closed on purpose (BullMQ closing a duplicate, shutdown) leaves the outage
  // without reporting a recovery that did not happen.
  connection.on('end', () => {
    opened.delete(connection);
    outage.leave(connection);
  });
  const duplicate = connection.duplicate.bind(connection);
  connection.duplicate = (override?: Partial<RedisOptions>) => {
    const copy = duplicate(override);
    watchRedis(copy, outage, opened);
    return copy;
  };
}

/**
 * Reports Elasticsearch outages: a request that could not reach the cluster (refused, timed out,
 * no living node, or a 502/503/504 from a proxy or a cluster without a master) starts one; any
 * answer from the cluster ends it.
 */
function watchElasticsearch(client: Client, outage: OutageLog): void {
  client.diagnostic.on('response', (error) => {
    const unreachable =
      error instanceof errors.ConnectionError ||
      error instanceof errors.TimeoutError ||
      error instanceof errors.NoLivingConnectionsError ||
      (error instanceof errors.ResponseError && [502, 503, 504].includes(error.statusCode ?? 0));
    if (unreachable) outage.down(error);
    else outage.up();
  });
}
