import { describe, expect, it } from 'vitest';
import { parseHotThreads, poolOf, startHotThreads } from '../../bench/lib/hot-threads.ts';

// Two nodes' answer in the engine's own format (Elasticsearch 9.4, `_nodes/hot_threads`, CPU).
const ANSWER = `::: {node-1}{a}{b}{node-1}{127.0.0.1}{127.0.0.1:9300}{cdfhilmrstw}{9.4.3}
   Hot threads at 2026-12-01T02:55:00.000Z, interval=500ms, busiestThreads=1000, ignoreIdleThreads=false:

   40.0% [cpu=30.0%, other=10.0%] (200ms out of 500ms) cpu usage by thread 'elasticsearch[node-1][write][T#2]'
     6/10 snapshots sharing following 4 elements
       app/org.apache.lucene.core@10.3.0/org.apache.lucene.codecs.lucene90.compressing.Lucene90CompressingStoredFieldsWriter.flush(Lucene90CompressingStoredFieldsWriter.java:250)
       app/org.apache.lucene.core@10.3.0/org.apache.lucene.index.IndexingChain.processDocument(IndexingChain.java:600)
       app/org.elasticsearch.server@9.4.3/org.elasticsearch.index.engine.InternalEngine.index(InternalEngine.java:1200)
       java.base@25.0.3/java.lang.Thread.run(Thread.java:1474)
     3/10 snapshots sharing following 3 elements
       app/org.elasticsearch.server@9.4.3/org.elasticsearch.index.mapper.DocumentParser.parseDocument(DocumentParser.java:90)
       app/org.elasticsearch.server@9.4.3/org.elasticsearch.index.shard.IndexShard.applyIndexOperationOnPrimary(IndexShard.java:950)
       java.base@25.0.3/java.lang.Thread.run(Thread.java:1474)
     unique snapshot
       java.base@25.0.3/java.util.concurrent.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:642)
       java.base@25.0.3/java.lang.Thread.run(Thread.java:1474)

    3.2% [cpu=3.2%, idle=96.8%] (500ms out of 500ms) cpu usage by thread 'elasticsearch[node-1][transport_worker][T#1]'
     10/10 snapshots sharing following 2 elements
       io.netty.transport@4.1.118.Final/io.netty.channel.nio.NioEventLoop.run(NioEventLoop.java:569)
       java.base@25.0.3/java.lang.Thread.run(Thread.java:1474)

::: {node-2}{c}{d}{node-2}{127.0.0.1}{127.0.0.1:9301}{cdfhilmrstw}{9.4.3}
   Hot threads at 2026-12-01T02:55:00.000Z, interval=500ms, busiestThreads=1000, ignoreIdleThreads=false:

   80.0% [cpu=80.0%, other=0.0%] (1s out of 1s) cpu usage by thread 'Lucene Merge Thread #3'
     5/10 snapshots sharing following 2 elements
       app/org.apache.lucene.core@10.3.0/org.apache.lucene.util.hnsw.HnswGraphBuilder.addGraphNode(HnswGraphBuilder.java:200)
       java.base@25.0.3/java.lang.Thread.run(Thread.java:1474)
`;

describe('hot threads: the engine CPU a bench reads by pool and by work', () => {
  const samples = parseHotThreads(ANSWER);

  it('reads every busy thread of every node with its CPU (not its other or idle time) over its interval', () => {
    expect(samples.map((s) => [s.pool, s.cpuMs])).toEqual([
      ['write', 150],
      ['transport', 16],
      ['merge', 800],
    ]);
  });

  it("splits a thread's CPU by the work its snapshot groups show, and keeps the unshown snapshots apart", () => {
    const write = Object.fromEntries(samples[0]!.work);
    expect(write['stored fields']).toBeCloseTo(90, 9); // 6 of 10 snapshots: stored fields written
    expect(write['parsing']).toBeCloseTo(45, 9); // 3 of 10: the document parsed
    expect(write['other (ThreadPoolExecutor$Worker.run)']).toBeCloseTo(15, 9); // the unique snapshot
    expect(Object.keys(write)).not.toContain('stacks not shown');
    const merge = Object.fromEntries(samples[2]!.work);
    expect(merge['vectors (HNSW, quantization)']).toBeCloseTo(400, 9);
    expect(merge['stacks not shown']).toBeCloseTo(400, 9); // 5 of 10 snapshots not listed
  });

  it('names pools from thread names', () => {
    expect(poolOf('elasticsearch[local][refresh][T#1]')).toBe('refresh');
    expect(poolOf('elasticsearch[node-2][transport_worker][T#3]')).toBe('transport');
    expect(poolOf('Lucene Merge Thread #12')).toBe('merge');
  });

  it('counts a sample whose request failed and goes on, instead of failing the bench at its end', async () => {
    let calls = 0;
    const nodes = {
      hotThreads: async () => {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (calls === 2) throw new Error('503: the engine is busy');
        return ANSWER;
      },
    };
    const sampler = startHotThreads({ nodes } as unknown as Parameters<typeof startHotThreads>[0], 5);
    sampler.setPhase('day');
    while (calls < 5) await new Promise((resolve) => setTimeout(resolve, 5));
    sampler.setPhase(null);
    await sampler.stop();
    const report = sampler.report('day');
    expect(report.failed).toBe(1);
    expect(report.intervals).toBeGreaterThanOrEqual(2);
    expect(report.by_pool.write).toBeGreaterThan(0);
  });
});
