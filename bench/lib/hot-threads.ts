import type { Client } from '@elastic/elasticsearch';

/**
 * Where the engine's CPU goes, by thread pool and by what the threads were doing: a sampler that
 * asks `_nodes/hot_threads` (CPU, every busy thread, ten stack snapshots a second) back to back
 * for as long as it runs, and sums each thread's CPU milliseconds by phase, by pool (`write`,
 * `search`, `refresh`, `get`, Lucene's merge threads…) and by the work its stacks show (HNSW graph,
 * stored fields, terms, doc values, global ordinals, parsing…). A thread's CPU is split between
 * its snapshot groups in proportion to the snapshots each holds. Samples, not a profile: each
 * reported thread's CPU over its interval is exact, its split by work is the stacks' share.
 */
export interface HotThreads {
  /** Sums go to this phase from the next interval on; null pauses them. */
  setPhase(phase: string | null): void;
  /** CPU ms of one phase: by pool, by work, and the intervals it covered. */
  report(phase: string): HotThreadsReport;
  stop(): Promise<void>;
}

export interface HotThreadsReport {
  intervals: number;
  /** Intervals whose request failed (not in the sums). */
  failed: number;
  seconds: number;
  by_pool: Record<string, number>;
  by_work: Record<string, number>;
}

/**
 * Kinds of work by a marker of their stack frames, in order of precedence: a snapshot group is the
 * first kind any of its frames shows (a search's fetch phase parses JSON, a write's indexing reads
 * IDs: the more specific kind comes first).
 */
const WORK_MARKERS: Array<[RegExp, string]> = [
  [/OrdinalMap|GlobalOrdinals/, 'global ordinals'],
  [
    /hnsw|Hnsw|VectorsWriter|VectorValues|ScalarQuantiz|KnnVector|VectorScorer|DenseVector/,
    'vectors (HNSW, quantization)',
  ],
  [/FetchPhase|FetchSource|StoredFieldsReader|StoredFieldLoader/, 'fetch and stored fields read'],
  [/aggregations/, 'aggregations'],
  [/StoredFieldsWriter|compressing|LZ4|ZstdCompression/, 'stored fields'],
  [/DocValuesConsumer|DocValuesWriter|DocValuesProducer/, 'doc values'],
  [/PointValues|BKD|PointsWriter/, 'points'],
  [/TermsWriter|FreqProx|BlockTree|PostingsWriter|TermsHash|ForUtil/, 'terms and postings'],
  [
    /PerThreadIDVersionAndSeqNoLookup|VersionsAndSeqNo|LiveVersionMap|PendingDeletes|BufferedUpdates|applyDeletes/,
    'versions, IDs and deletes',
  ],
  [/org\.apache\.lucene\.search|QueryPhase/, 'query execution'],
  [/DocumentParser|SourceToParse|xcontent|jackson/, 'parsing'],
  [/[Tt]ranslog/, 'translog'],
];

/** The method a frame names, without module and package: `IndexingChain.processDocument`. */
const methodOf = (frame: string) => /([\w$]+\.[\w$<>]+)\(/.exec(frame)?.[1] ?? frame;

function workOf(frames: string[]): string {
  for (const [marker, work] of WORK_MARKERS) if (frames.some((frame) => marker.test(frame))) return work;
  // Unmarked: named by its first frame outside the JDK, so a report shows what to mark next.
  const own = frames.find((frame) => !frame.startsWith('java.base')) ?? frames[0];
  return `other (${own ? methodOf(own) : 'no stack'})`;
}

/** A thread's pool: `elasticsearch[node][write][T#2]` → write; a Lucene merge thread → merge. */
export function poolOf(thread: string): string {
  const es = /^elasticsearch\[[^\]]*\]\[([^\]]+)\]/.exec(thread);
  if (es) return es[1]!.replace(/^transport_worker$/, 'transport');
  if (/Lucene Merge Thread/.test(thread)) return 'merge';
  return thread.replace(/[#\d]+/g, '').trim();
}

/** One busy thread of one answer: its pool, its CPU ms over the interval, and that split by work. */
export interface ThreadSample {
  pool: string;
  cpuMs: number;
  work: Map<string, number>;
}

/** Parses one `hot_threads` answer (text) into each busy thread's CPU ms and its split by work. */
export function parseHotThreads(text: string): ThreadSample[] {
  const samples: ThreadSample[] = [];
  let current: ThreadSample | null = null;
  let group: { share: number; frames: string[] } | null = null;
  let shown = 0;
  let snapshots = 10;
  const close = () => {
    if (current && group) {
      const work = workOf(group.frames);
      current.work.set(work, (current.work.get(work) ?? 0) + current.cpuMs * group.share);
      shown += group.share;
    }
    group = null;
  };
  // The snapshots a thread's answer did not show (it lists a few groups) keep their share apart.
  const closeThread = () => {
    close();
    if (current && shown < 0.999) current.work.set('stacks not shown', current.cpuMs * (1 - shown));
    shown = 0;
  };
  for (const line of text.split('\n')) {
    const head = /\[cpu=([\d.]+)%.*?\(([\d.]+)(micros|ms|s) out of ([\d.]+)(micros|ms|s)\).*?thread '([^']+)'/.exec(
      line,
    );
    if (head) {
      closeThread();
      const unit = (n: string, u: string) => Number(n) * (u === 's' ? 1000 : u === 'micros' ? 0.001 : 1);
      const intervalMs = unit(head[4]!, head[5]!);
      current = { pool: poolOf(head[6]!), cpuMs: (Number(head[1]) / 100) * intervalMs, work: new Map() };
      samples.push(current);
      continue;
    }
    const shared = /(\d+)\/(\d+) snapshots sharing following/.exec(line);
    if (shared && current) {
      close();
      snapshots = Number(shared[2]);
      group = { share: Number(shared[1]) / snapshots, frames: [] };
      continue;
    }
    // A snapshot shared with no other: one of the interval's snapshots.
    if (/^\s+unique snapshot/.test(line) && current) {
      close();
      group = { share: 1 / snapshots, frames: [] };
      continue;
    }
    if (group && /^\s+\S/.test(line)) group.frames.push(line.trim());
  }
  closeThread();
  return samples;
}

/** Starts sampling `es` every `intervalMs` (one interval after another) until stopped. */
export function startHotThreads(es: Pick<Client, 'nodes'>, intervalMs = 1000): HotThreads {
  const phases = new Map<string, { intervals: number; pool: Map<string, number>; work: Map<string, number> }>();
  // Intervals whose request failed (the engine busy or away), by phase: reported, never fatal.
  const failed = new Map<string, number>();
  let phase: string | null = null;
  let running = true;
  const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms);
  const loop = (async () => {
    while (running) {
      const at: string | null = phase;
      let text: string;
      try {
        text = (await es.nodes.hotThreads({
          threads: 1000,
          interval: `${intervalMs}ms`,
          snapshots: 10,
          // Every thread: one busy for part of an interval may sit idle at all ten snapshots, and
          // skipping idle ones dropped most of the engine's CPU (a quarter of it was reported).
          ignore_idle_threads: false,
          type: 'cpu',
        })) as unknown as string;
      } catch {
        // A sample lost is a sample lost, not the bench: counted, and the next one a moment later.
        if (at !== null) failed.set(at, (failed.get(at) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
        continue;
      }
      // An interval that straddled a phase change counts for neither.
      if (at === null || at !== phase) continue;
      const sums = phases.get(at) ?? { intervals: 0, pool: new Map(), work: new Map() };
      phases.set(at, sums);
      sums.intervals++;
      for (const s of parseHotThreads(text)) {
        add(sums.pool, s.pool, s.cpuMs);
        for (const [work, ms] of s.work) add(sums.work, `${s.pool}: ${work}`, ms);
      }
    }
  })();
  // The 40 largest, ms: the unmarked stacks' names can be many.
  const rounded = (map: Map<string, number>) =>
    Object.fromEntries(
      [...map]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 40)
        .map(([k, v]) => [k, Math.round(v)]),
    );
  return {
    setPhase(next) {
      phase = next;
    },
    report(name) {
      const sums = phases.get(name);
      const lost = failed.get(name) ?? 0;
      if (!sums) return { intervals: 0, failed: lost, seconds: 0, by_pool: {}, by_work: {} };
      return {
        intervals: sums.intervals,
        failed: lost,
        seconds: (sums.intervals * intervalMs) / 1000,
        by_pool: rounded(sums.pool),
        by_work: rounded(sums.work),
      };
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}
