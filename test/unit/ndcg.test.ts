import { describe, expect, it } from 'vitest';
import { idealDcgAtK, meanNdcgAtK, ndcgAtK, trecOrder, type ScoredDoc } from '../../bench/relevance/ndcg.ts';

const judged = (entries: Record<string, number>): Map<string, number> => new Map(Object.entries(entries));
const ranked = (...ids: string[]): ScoredDoc[] => ids.map((id, i) => ({ id, score: 100 - i }));

describe('nDCG@10 (pytrec_eval ndcg_cut.10 semantics)', () => {
  it('matches a hand-computed graded example (gain = rel, discount log2(rank + 1), unjudged = 0)', () => {
    const judgments = judged({ d1: 2, d2: 1, d3: 1 });
    // DCG  = 0 (d4, unjudged) + 1/log2(3) (d2) + 2/log2(4) (d1) = 1.6309297535714575
    // IDCG = 2/log2(2) + 1/log2(3) + 1/log2(4)                  = 3.1309297535714575
    expect(ndcgAtK(ranked('d4', 'd2', 'd1', 'd5'), judgments)).toBeCloseTo(0.5209090851403014, 12);
    // the relevant documents, least relevant first: (1 + 1/log2(3) + 2/log2(4)) / IDCG
    expect(ndcgAtK(ranked('d3', 'd2', 'd1'), judgments)).toBeCloseTo(0.8403030283801005, 12);
  });

  it('scores the ideal ordering 1, and takes the ideal from all judged documents, retrieved or not', () => {
    const judgments = judged({ a: 3, b: 2, c: 1, z: 0 });
    expect(ndcgAtK(ranked('a', 'b', 'c'), judgments)).toBe(1);
    expect(ndcgAtK(ranked('a', 'b', 'c', 'z', 'x'), judgments)).toBe(1);
    // c never retrieved: IDCG still counts it
    expect(ndcgAtK(ranked('a', 'b'), judgments)).toBeCloseTo(
      (3 + 2 / Math.log2(3)) / (3 + 2 / Math.log2(3) + 1 / 2),
      12,
    );
    expect(idealDcgAtK(judgments)).toBeCloseTo(3 + 2 / Math.log2(3) + 0.5, 12);
  });

  it('cuts both the ranking and the ideal at k', () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `r${i}`);
    const judgments = judged(Object.fromEntries(eleven.map((id) => [id, 1])));
    expect(ndcgAtK(ranked(...eleven), judgments)).toBe(1); // ideal is cut at 10 too
    const onlyEleventh = judged({ r10: 1 });
    expect(ndcgAtK(ranked(...eleven), onlyEleventh)).toBe(0);
    expect(ndcgAtK(ranked(...eleven), onlyEleventh, { k: 11 })).toBeCloseTo(1 / Math.log2(12), 12);
  });

  it('drops a retrieved document whose id is the query id before cutting at 10', () => {
    const judgments = judged({ r10: 1 });
    const withSelf = ranked('q7', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9', 'r10');
    // the self-match goes, so r10 moves from rank 11 into rank 10
    expect(ndcgAtK(withSelf, judgments, { queryId: 'q7' })).toBeCloseTo(1 / Math.log2(11), 12);
    expect(ndcgAtK(withSelf, judgments, { queryId: 'q7', ignoreIdenticalIds: false })).toBe(0);
    expect(ndcgAtK(withSelf, judgments)).toBe(0); // no query id given: nothing dropped
    // the drop applies even when the self-match is judged relevant
    expect(ndcgAtK(ranked('q7', 'x'), judged({ q7: 1, x: 1 }), { queryId: 'q7' })).toBeCloseTo(
      1 / (1 + 1 / Math.log2(3)),
      12,
    );
  });

  it('re-sorts by score, breaking ties by document id descending (trec_eval), whatever the input order', () => {
    const docs: ScoredDoc[] = [
      { id: 'a', score: 1 },
      { id: 'c', score: 2 },
      { id: 'b', score: 2 },
      { id: 'd', score: 0.5 },
    ];
    expect(trecOrder(docs).map((d) => d.id)).toEqual(['c', 'b', 'a', 'd']);
    expect(ndcgAtK(docs, judged({ b: 1 }))).toBeCloseTo(1 / Math.log2(3), 12);
    expect(ndcgAtK([...docs].reverse(), judged({ b: 1 }))).toBeCloseTo(1 / Math.log2(3), 12);
  });

  it('averages over qrels queries with a relevant document; a missing ranking scores 0; run-only queries are ignored', () => {
    const qrels = new Map([
      ['q1', judged({ a: 1 })],
      ['q2', judged({ b: 2 })],
      ['q3', judged({ c: 0 })], // no relevant document: excluded
      ['q4', judged({ d: 1 })], // not in the run: 0
    ]);
    const run = new Map([
      ['q1', ranked('a')], // 1
      ['q2', ranked('x', 'b')], // 1/log2(3)
      ['q3', ranked('c')],
      ['q9', ranked('a')], // not judged: ignored
    ]);
    const result = meanNdcgAtK(run, qrels);
    expect(result.evaluated).toBe(3);
    expect([...result.perQuery.keys()].sort()).toEqual(['q1', 'q2', 'q4']);
    expect(result.perQuery.get('q4')).toBe(0);
    expect(result.mean).toBeCloseTo((1 + 1 / Math.log2(3) + 0) / 3, 12);
    expect(meanNdcgAtK(new Map(), new Map([['q', judged({ a: 0 })]]))).toEqual({
      mean: 0,
      perQuery: new Map(),
      evaluated: 0,
    });
  });

  it('rejects a non-positive cut-off', () => {
    expect(() => ndcgAtK(ranked('a'), judged({ a: 1 }), { k: 0 })).toThrow(RangeError);
  });
});
