/**
 * Load generation for the throughput and soak benches: autocannon (keep-alive connections, a fixed
 * concurrency, optionally a fixed overall rate) with every request drawn from a caller's function,
 * counted and timed per kind. Connections spread round-robin over the given base URLs (two API
 * nodes, a cluster's nodes).
 */
import autocannon from 'autocannon';

/** One request of the load. `kind` groups the counts and latencies. */
export interface LoadRequest {
  kind: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  contentType?: string;
}

/** Counts and latencies of one kind. */
export interface KindStats {
  requests: number;
  /** Responses by HTTP status. */
  statuses: Record<string, number>;
  /** Milliseconds, request written to response read. */
  p50_ms: number;
  p99_ms: number;
  mean_ms: number;
}

/** What a load run measured. */
export interface LoadResult {
  duration_s: number;
  requests: number;
  requests_per_s: number;
  /** Responses outside 2xx. */
  non2xx: number;
  /** Connection errors and timeouts (no response at all). */
  errors: number;
  timeouts: number;
  /** autocannon's own latency percentiles over every 2xx response (corrected for coordinated omission at a fixed rate). */
  latency: { p50_ms: number; p90_ms: number; p99_ms: number; max_ms: number };
  kinds: Record<string, KindStats>;
}

/** A running load; counters readable at any time (the soak samples them). */
export interface LoadRun {
  /** Responses so far, and those outside 2xx, errors. */
  progress(): { responses: number; non2xx: number; errors: number };
  done: Promise<LoadResult>;
  stop(): void;
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (x: number) => Math.round(x * 100) / 100;

/** Starts a load: `connections` keep-alive connections, at most `rate` requests/s overall (null: as fast as they go). */
export function startLoad(options: {
  urls: string[];
  connections: number;
  rate: number | null;
  durationS: number;
  headers?: Record<string, string>;
  next: () => LoadRequest;
  /** Per-request timeout, seconds. */
  timeoutS?: number;
  /** Called with each response's status and body (e.g. to check a raw engine answer). */
  check?: (kind: string, status: number, body: string) => void;
}): LoadRun {
  const durations = new Map<string, number[]>();
  const statuses = new Map<string, Record<string, number>>();
  let responses = 0;
  let non2xx = 0;
  let errors = 0;
  type Context = { kind?: string; started?: number };
  let finish!: (error: Error | null, result: autocannon.Result) => void;
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    finish = (error, result) => (error ? reject(error) : resolve(result));
  });
  const instance = autocannon(
    {
      // autocannon takes several URLs and spreads connections over them (its typings say one).
      url: options.urls as unknown as string,
      connections: options.connections,
      ...(options.rate ? { overallRate: options.rate } : {}),
      duration: options.durationS,
      timeout: options.timeoutS ?? 30,
      headers: options.headers ?? {},
      requests: [
        {
          setupRequest: (request, context) => {
            const next = options.next();
            const ctx = context as Context;
            ctx.kind = next.kind;
            ctx.started = performance.now();
            return {
              ...request,
              method: next.method,
              path: next.path,
              body: next.body ?? '',
              headers: { ...request.headers, ...(next.contentType ? { 'content-type': next.contentType } : {}) },
            };
          },
          onResponse: (status, body, context) => {
            const ctx = context as Context;
            const kind = ctx.kind ?? 'unknown';
            responses++;
            if (status < 200 || status > 299) non2xx++;
            let list = durations.get(kind);
            if (!list) durations.set(kind, (list = []));
            list.push(performance.now() - (ctx.started ?? performance.now()));
            let byStatus = statuses.get(kind);
            if (!byStatus) statuses.set(kind, (byStatus = {}));
            byStatus[status] = (byStatus[status] ?? 0) + 1;
            options.check?.(kind, status, body);
          },
        },
      ],
    },
    (error, result) => finish(error, result),
  );
  instance.on('reqError', () => void errors++);

  const done = finished.then((result): LoadResult => {
    const kinds: Record<string, KindStats> = {};
    for (const [kind, list] of durations) {
      list.sort((a, b) => a - b);
      kinds[kind] = {
        requests: list.length,
        statuses: statuses.get(kind) ?? {},
        p50_ms: ms(quantile(list, 0.5)),
        p99_ms: ms(quantile(list, 0.99)),
        mean_ms: ms(list.reduce((a, b) => a + b, 0) / Math.max(1, list.length)),
      };
    }
    return {
      duration_s: result.duration,
      requests: responses,
      requests_per_s: ms(responses / result.duration),
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      latency: {
        p50_ms: result.latency.p50,
        p90_ms: result.latency.p90,
        p99_ms: result.latency.p99,
        max_ms: result.latency.max,
      },
      kinds,
    };
  });
  return { progress: () => ({ responses, non2xx, errors }), done, stop: () => instance.stop() };
}
