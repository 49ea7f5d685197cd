import {
  createServer,
  request as httpRequest,
  Agent,
  type IncomingMessage,
  type ServerResponse,
  type ClientRequest,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A fault-injecting HTTP proxy in front of Elasticsearch, switchable at runtime.
 *
 * The drills need Elasticsearch to "stop" and to answer 429/5xx, but every test file shares one
 * Elasticsearch: stopping its JVM (or making it answer errors) would fail whatever else runs.
 * So the service under test talks to this proxy instead (ELASTICSEARCH_URL), and the proxy
 * decides per request whether to forward it, cut it, or answer an error of its own.
 *
 * Modes:
 * - `pass`: forward everything.
 * - `reset`: Elasticsearch "stopped": every open connection and in-flight request is cut (a request
 *   already forwarded may have been applied: its answer is lost, as when a node dies mid-request),
 *   and every new connection is reset at once.
 * - `refuse`: nothing listens on the port (connection refused), in-flight requests are cut.
 * - `status`: answer `status` (429, 502, 503, 504…) with an Elasticsearch-like error body, without
 *   forwarding, to a `fraction` of the requests that `match` (default: all); the rest pass.
 * - `reject-items`: answer a `fraction` of bulk requests with 200 and every item rejected with
 *   429 `es_rejected_execution_exception`, without forwarding (what a node under indexing pressure
 *   does: the request succeeds, its operations do not).
 */
export type FaultMode =
  | { kind: 'pass' }
  | { kind: 'reset' }
  | { kind: 'refuse' }
  | { kind: 'status'; status: number; fraction: number; match?: RequestMatch }
  | { kind: 'reject-items'; fraction: number };

/** Which requests a fault applies to. */
export type RequestMatch = (request: { method: string; path: string }) => boolean;

/** Bulk requests (`/_bulk`, `/<index>/_bulk`). */
export const bulkRequests: RequestMatch = ({ path }) => /(^|\/)_bulk(\?|$)/.test(path);

export interface FaultProxyStats {
  forwarded: number;
  /** Requests cut (reset) or connections refused/reset while down. */
  cut: number;
  /** Answered with an injected error status. */
  injected: Record<number, number>;
  /** Bulk requests answered with every item rejected. */
  rejectedBulks: number;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: the ELASTICSEARCH_URL of the service under test. */
  readonly url: string;
  /** Switches the mode; takes effect for the next request (and cuts in-flight ones for reset/refuse). */
  set(mode: FaultMode): Promise<void>;
  mode(): FaultMode;
  stats(): FaultProxyStats;
  close(): Promise<void>;
}

/** Starts a proxy on a free local port forwarding to `target` (e.g. http://127.0.0.1:9200). */
export async function startFaultProxy(target: string, options: { random?: () => number } = {}): Promise<FaultProxy> {
  const upstream = new URL(target);
  const random = options.random ?? Math.random;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let mode: FaultMode = { kind: 'pass' };
  const stats: FaultProxyStats = { forwarded: 0, cut: 0, injected: {}, rejectedBulks: 0 };
  const sockets = new Set<Socket>();
  const inFlight = new Set<{ upstream: ClientRequest; response: ServerResponse }>();

  const server = createServer((req, res) => handle(req, res));
  // The client keeps connections alive; a server closing idle ones first would add resets of its own.
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;
  server.requestTimeout = 0;
  server.on('connection', (socket: Socket) => {
    if (mode.kind === 'reset' || mode.kind === 'refuse') {
      stats.cut++;
      socket.resetAndDestroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  function handle(req: IncomingMessage, res: ServerResponse) {
    const path = req.url ?? '/';
    const method = req.method ?? 'GET';
    const current = mode;
    if (current.kind === 'reset' || current.kind === 'refuse') {
      stats.cut++;
      req.socket.resetAndDestroy();
      return;
    }
    if (current.kind === 'status' && (current.match ?? (() => true))({ method, path }) && random() < current.fraction) {
      req.resume();
      req.on('end', () => {
        stats.injected[current.status] = (stats.injected[current.status] ?? 0) + 1;
        const type = current.status === 429 ? 'es_rejected_execution_exception' : 'unavailable_shards_exception';
        answer(res, current.status, {
          error: { type, reason: `injected by the drill's fault proxy (${current.status})` },
          status: current.status,
        });
      });
      return;
    }
    if (current.kind === 'reject-items' && bulkRequests({ method, path }) && random() < current.fraction) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        stats.rejectedBulks++;
        answer(res, 200, { took: 1, errors: true, items: rejectedItems(Buffer.concat(chunks).toString('utf8')) });
      });
      return;
    }
    forward(req, res);
  }

  function forward(req: IncomingMessage, res: ServerResponse) {
    const out = httpRequest(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
        agent,
      },
      (answerFromUpstream) => {
        res.writeHead(answerFromUpstream.statusCode ?? 502, answerFromUpstream.headers);
        answerFromUpstream.pipe(res);
        answerFromUpstream.on('end', () => inFlight.delete(entry));
        answerFromUpstream.on('error', () => res.destroy());
      },
    );
    const entry = { upstream: out, response: res };
    inFlight.add(entry);
    stats.forwarded++;
    out.on('error', () => {
      inFlight.delete(entry);
      res.destroy();
    });
    res.on('close', () => inFlight.delete(entry));
    req.pipe(out);
  }

  function cutEverything() {
    for (const { upstream: out, response } of inFlight) {
      stats.cut++;
      out.destroy();
      response.socket?.resetAndDestroy();
    }
    inFlight.clear();
    for (const socket of sockets) socket.resetAndDestroy();
    sockets.clear();
  }

  await listen(0);
  const port = (server.address() as AddressInfo).port;

  function listen(at: number): Promise<void> {
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(at, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  return {
    url: `http://127.0.0.1:${port}`,
    async set(next) {
      const wasListening = server.listening;
      mode = next;
      if (next.kind === 'reset' || next.kind === 'refuse') cutEverything();
      if (next.kind === 'refuse' && wasListening) await new Promise<void>((resolve) => server.close(() => resolve()));
      if (next.kind !== 'refuse' && !wasListening) await listen(port);
    },
    mode: () => mode,
    stats: () => structuredClone(stats),
    async close() {
      mode = { kind: 'refuse' };
      cutEverything();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

function answer(res: ServerResponse, status: number, body: unknown) {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    // The client refuses 2xx answers that do not say they come from Elasticsearch.
    'x-elastic-product': 'Elasticsearch',
  });
  res.end(payload);
}

/** One rejected item per operation of an NDJSON bulk body (delete has no source line). */
function rejectedItems(body: string) {
  const lines = body.split('\n').filter((l) => l.trim() !== '');
  const items: unknown[] = [];
  for (let i = 0; i < lines.length; i++) {
    const action = JSON.parse(lines[i]!) as Record<string, { _index?: string; _id?: string }>;
    const [op, meta] = Object.entries(action)[0]!;
    items.push({
      [op]: {
        _index: meta?._index ?? 'unknown',
        _id: meta?._id ?? null,
        status: 429,
        error: {
          type: 'es_rejected_execution_exception',
          reason: "injected by the drill's fault proxy: rejected execution (queue capacity 200)",
        },
      },
    });
    if (op !== 'delete') i++;
  }
  return items;
}
