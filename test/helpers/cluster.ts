/**
 * The Elasticsearch cluster of `npm run test:cluster` (scripts/test-cluster.sh starts it with
 * scripts/services.sh: ES_NODES nodes on loopback, node i answering HTTP on ES_PORT+i-1, and sets
 * ELASTICSEARCH_URL to their list), the means to lose one of its nodes and bring it back, and a
 * small HTTP client for the service's API processes.
 */
import type { Client } from '@elastic/elasticsearch';
import { spawn } from 'node:child_process';
import { inflateRawSync } from 'node:zlib';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = new URL('../..', import.meta.url).pathname;

/** The cluster's HTTP URLs (ELASTICSEARCH_URL) and its size (ES_NODES), as test-cluster.sh exports them. */
export const CLUSTER = {
  urls: (process.env.ELASTICSEARCH_URL ?? '').split(',').filter(Boolean),
  nodes: Number(process.env.ES_NODES ?? 1),
};

/** Fails at once, saying how to run it, when this file runs outside `npm run test:cluster`. */
export function requireCluster(minimumNodes = 3): void {
  if (CLUSTER.nodes < minimumNodes || CLUSTER.urls.length < minimumNodes) {
    throw new Error(
      `needs a cluster of at least ${minimumNodes} Elasticsearch nodes: run \`npm run test:cluster\` ` +
        `(ES_NODES=${process.env.ES_NODES ?? 'unset'}, ELASTICSEARCH_URL=${process.env.ELASTICSEARCH_URL ?? 'unset'})`,
    );
  }
}

/** One Elasticsearch node as the cluster reports it. */
export interface NodeInfo {
  id: string;
  /** node-1 … node-N (scripts/services.sh) */
  name: string;
  /** The node's JVM. */
  pid: number;
  master: boolean;
}

/** The nodes of the cluster now, by name. */
export async function clusterNodes(es: Client): Promise<NodeInfo[]> {
  const [info, state] = await Promise.all([
    es.nodes.info({ metric: ['process'] }),
    es.cluster.state({ metric: ['master_node'] }),
  ]);
  return Object.entries(info.nodes)
    .map(([id, n]) => ({ id, name: n.name, pid: Number(n.process?.id), master: id === state.master_node }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** SIGKILLs the JVM of a node (no shutdown of any kind: the node is simply gone). */
export function killNode(node: NodeInfo): void {
  process.kill(node.pid, 'SIGKILL');
}

/** Starts a node of the cluster again with `scripts/services.sh start-node N`; resolves once it answers. */
export async function startNode(name: string): Promise<{ ms: number; output: string }> {
  const n = /^node-(\d+)$/.exec(name)?.[1];
  if (!n) throw new Error(`not a node of scripts/services.sh: ${name}`);
  const started = performance.now();
  const child = spawn('bash', ['scripts/services.sh', 'start-node', n], {
    cwd: ROOT,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`services.sh start-node ${n} exited ${code}:\n${output}`);
  return { ms: Math.round(performance.now() - started), output };
}

/**
 * Waits until the cluster has `nodes` nodes and at least `status` (green > yellow), asking any
 * node that answers; resolves with the milliseconds it took.
 */
export async function waitForCluster(
  es: Client,
  want: { status: 'green' | 'yellow'; nodes: number },
  timeoutMs: number,
): Promise<number> {
  const started = performance.now();
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  for (;;) {
    const health = await es.cluster
      .health(
        { wait_for_status: want.status, wait_for_nodes: String(want.nodes), timeout: '2s' },
        { requestTimeout: 10_000 },
      )
      .catch(() => null);
    if (health) {
      last = `${health.status}, ${health.number_of_nodes} nodes, ${health.unassigned_shards} unassigned, ${health.initializing_shards} initializing`;
      if (!health.timed_out) return Math.round(performance.now() - started);
    }
    if (Date.now() > deadline)
      throw new Error(`cluster not ${want.status} with ${want.nodes} nodes within ${timeoutMs} ms (${last})`);
    await sleep(250);
  }
}

/** Where each copy of the shards of `index` (an alias or a pattern) is: `{ index, shard, primary, state, node }`. */
export async function shardCopies(es: Client, index: string) {
  const rows = await es.cat.shards({ index, format: 'json', h: ['index', 'shard', 'prirep', 'state', 'node'] });
  return rows.map((r) => ({
    index: String(r.index),
    shard: Number(r.shard),
    primary: r.prirep === 'p',
    state: String(r.state),
    node: r.node ?? null,
  }));
}

/**
 * The Elasticsearch node ids a cursor's snapshot (point in time) holds contexts on. Test-only
 * introspection: a cursor is `base64url(deflate(JSON))` plus a signature (src/query/cursor-codec.ts),
 * its state carries the point in time id, and that id (binary) names the node of each shard's context.
 */
export function snapshotNodes(cursor: string, nodes: NodeInfo[]): string[] {
  const payload = JSON.parse(inflateRawSync(Buffer.from(cursor.split('.')[0]!, 'base64url')).toString()) as {
    state?: { snapshot?: string };
  };
  const pit = Buffer.from(payload.state?.snapshot ?? '', 'base64');
  return nodes.filter((n) => pit.includes(Buffer.from(n.id))).map((n) => n.name);
}

// ---------------------------------------------------------------------------------------------
// The API over HTTP
// ---------------------------------------------------------------------------------------------

/** One answer of an API process. */
export interface Answer {
  status: number;
  /** Milliseconds from sending to the whole body. */
  ms: number;
  body: any;
  headers: Headers | null;
}

/** Sends one request to an API process (`status` 0 when it could not be reached). */
export async function call(
  base: string,
  path: string,
  options: { key?: string; body?: unknown; ndjson?: unknown[]; method?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let payload: string | undefined;
  if (options.ndjson) {
    headers['content-type'] = 'application/x-ndjson';
    payload = options.ndjson.map((o) => JSON.stringify(o)).join('\n');
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(options.body);
  }
  const started = performance.now();
  try {
    const response = await fetch(`${base}${path}`, {
      method: options.method ?? (payload === undefined ? 'GET' : 'POST'),
      headers,
      ...(payload === undefined ? {} : { body: payload }),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: response.status, ms: performance.now() - started, body, headers: response.headers };
  } catch (error) {
    return { status: 0, ms: performance.now() - started, body: (error as Error).message, headers: null };
  }
}

/** The value of a counter in an API process's /metrics (Prometheus text), 0 when absent. */
export async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** The `p`-th percentile (0–100) of `values`, nearest rank; null for none. */
export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
