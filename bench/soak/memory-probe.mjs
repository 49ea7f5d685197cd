// @ts-check
/**
 * Preloaded into the service processes the soak bench starts (`NODE_OPTIONS=--import=<this file>`):
 * appends the process's own view of its memory to SOAK_PROBE_FILE every SOAK_PROBE_INTERVAL_MS,
 * one JSON line each. /proc tells the bench how much is resident; only the process itself can
 * say how much of that is V8's heap, external memory and ArrayBuffers, and so how much is native
 * (onnxruntime, glibc arenas, thread stacks, code). Plain JavaScript, main thread only, and
 * nothing else: it must not change what it measures.
 */
import { appendFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

const file = process.env['SOAK_PROBE_FILE'];
const intervalMs = Number(process.env['SOAK_PROBE_INTERVAL_MS'] ?? 5000);

if (isMainThread && file) {
  const sample = () => {
    const usage = process.memoryUsage();
    const heap = getHeapStatistics();
    appendFileSync(
      file,
      `${JSON.stringify({
        t: Date.now(),
        rss: usage.rss,
        heap_total: usage.heapTotal,
        heap_used: usage.heapUsed,
        external: usage.external,
        array_buffers: usage.arrayBuffers,
        // What V8 itself allocated with malloc (outside the heap's pages), and its limit.
        v8_malloced: heap.malloced_memory,
        v8_peak_malloced: heap.peak_malloced_memory,
        heap_limit: heap.heap_size_limit,
      })}\n`,
    );
  };
  setInterval(sample, intervalMs).unref();
  sample();
}
