import { describe, expect, it } from 'vitest';
import { coverageOf, informationOf, specificInformation, specificScore } from '../../src/query/term-information.ts';

describe('informationOf', () => {
  it('gives a rare word more information than a common one, as BM25 weighs them', () => {
    const rare = informationOf({ docFreq: 3, docCount: 1000 });
    const common = informationOf({ docFreq: 600, docCount: 1000 });
    expect(rare).toBeGreaterThan(common);
    expect(informationOf({ docFreq: 0, docCount: 1000 })).toBeGreaterThan(rare);
  });
});

describe('coverageOf', () => {
  it("is the share of the query's information the matched words carry, each counted once", () => {
    expect(coverageOf([1, 3], [1])).toBe(0.75);
    expect(coverageOf([1, 3], [1, 1, 0])).toBe(1);
    expect(coverageOf([0, 0], [])).toBe(1);
  });
});

describe('specificInformation', () => {
  // "my travel routine": travel's hits are all travel posts; routine's hits are spread over four subjects.
  const travelRoutine = [
    { words: [0], classes: ['travel'] },
    { words: [0, 1], classes: ['travel'] },
    { words: [0], classes: ['travel'] },
    { words: [1], classes: ['parenting'] },
    { words: [1], classes: ['skincare'] },
    { words: [1], classes: ['fitness'] },
  ];

  it('lowers a word whose hits are about many subjects below one whose hits are about one', () => {
    const weighed = specificInformation([2, 3], travelRoutine);
    expect(weighed[0]).toBe(2);
    expect(weighed[1]).toBeLessThan(3 / 3);
    // A travel post that lacks "routine" now covers most of the query; before, less than half.
    expect(coverageOf([2, 3], [0])).toBeLessThan(0.5);
    expect(coverageOf(weighed, [0])).toBeGreaterThan(0.6);
  });

  it('changes nothing in a corpus nobody classifies', () => {
    const unclassified = travelRoutine.map((h) => ({ ...h, classes: [] }));
    expect(specificInformation([2, 3], unclassified)).toEqual([2, 3]);
  });

  it('never changes a one-word query: the spread is relative within the query', () => {
    expect(
      specificInformation(
        [3],
        [
          { words: [0], classes: ['a'] },
          { words: [0], classes: ['b'] },
        ],
      ),
    ).toEqual([3]);
  });

  it("leaves a word carried by a single classified hit alone: one post says nothing of the word's other uses", () => {
    const weighed = specificInformation(
      [2, 3],
      [
        { words: [0], classes: ['travel'] },
        { words: [0], classes: ['travel'] },
        { words: [1], classes: ['parenting'] },
      ],
    );
    expect(weighed).toEqual([2, 3]);
  });

  it("shares a multi-niche author's post among its niches rather than counting it in each", () => {
    // Two posts by travel+food authors carrying word 0 are two subjects' worth at most (spread 2);
    // word 1's two posts by a travel author and a food author are also spread 2: the same weight.
    const weighed = specificInformation(
      [2, 2],
      [
        { words: [0], classes: ['travel', 'food'] },
        { words: [0], classes: ['food', 'travel', 'travel'] },
        { words: [1], classes: ['travel'] },
        { words: [1], classes: ['food'] },
      ],
    );
    expect(weighed[0]).toBeCloseTo(weighed[1]!, 10);
  });
});

describe('specificScore', () => {
  // "私のゲームルーティン": ゲーム (games) keeps its information 3; ルー and ティン (the split "routine")
  // are spread over four times as many niches and keep a quarter of theirs.
  const information = [3, 4, 4];
  const weighed = [3, 1, 1];

  it("scales a hit carrying only the spread words by their share, and leaves one carrying the specific word's alone", () => {
    const routine = specificScore(
      12,
      new Map([
        [1, 5],
        [2, 5],
      ]),
      information,
      weighed,
    );
    expect(routine).toBeCloseTo(3, 10);
    expect(specificScore(6, new Map([[0, 6]]), information, weighed)).toBe(6);
    // Both: the spread words' part shrinks, the specific word's stays.
    expect(
      specificScore(
        16,
        new Map([
          [0, 6],
          [1, 5],
          [2, 5],
        ]),
        information,
        weighed,
      ),
    ).toBeCloseTo((16 * 8.5) / 16, 10);
  });

  it("changes nothing without the words' scores, when no word was scaled, or for words of no information", () => {
    expect(specificScore(12, null, information, weighed)).toBe(12);
    expect(specificScore(12, new Map(), information, weighed)).toBe(12);
    expect(
      specificScore(
        12,
        new Map([
          [1, 5],
          [2, 5],
        ]),
        information,
        information,
      ),
    ).toBe(12);
    expect(specificScore(12, new Map([[0, 5]]), [0, 4, 4], [0, 1, 1])).toBe(12);
  });
});
