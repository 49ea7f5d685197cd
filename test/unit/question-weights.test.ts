import { describe, expect, it } from 'vitest';
import { isQuestion, MAX_WEIGHTED_TERMS, readQuestion, weightableTerms } from '../../src/text/question-weights.ts';

describe('isQuestion', () => {
  it('knows a question by its question mark or its opening word', () => {
    for (const q of [
      'how should a beginner get started with meal prep',
      'What do I need to know about Europe itinerary',
      'is thrift haul worth it? what are the best options',
      'any cheap tips for capsule wardrobe?',
      'Can I crochet without a pattern',
    ])
      expect(isQuestion(q), q).toBe(true);
  });

  it('leaves claims, noun phrases and hooks alone', () => {
    for (const q of [
      '0-dimensional biomaterials show inductive properties.',
      'night-time skincare routine',
      'budget meal prep with a discount code',
      'Showing how I meal prep',
      'howto guides',
    ])
      expect(isQuestion(q), q).toBe(false);
  });
});

describe('weightableTerms', () => {
  it("is an English question's distinct content words", () => {
    expect(weightableTerms('how can I get better at crochet without expensive crochet stuff?')).toEqual([
      'better',
      'crochet',
      'without',
      'expensive',
      'stuff',
    ]);
  });

  it('is null for statements, one content word, unspaced scripts and long questions', () => {
    expect(weightableTerms('crochet patterns without expensive yarn')).toBeNull();
    expect(weightableTerms('how do I crochet?')).toBeNull();
    expect(weightableTerms('how do I start スキンケア?')).toBeNull();
    const long = Array.from({ length: MAX_WEIGHTED_TERMS + 1 }, (_, i) => `word${String.fromCharCode(97 + i)}`);
    expect(weightableTerms(`how do ${long.join(' ')}?`)).toBeNull();
  });
});

describe('readQuestion', () => {
  // Three orthogonal directions: the query's vector leans on "crochet"'s; a text without a word
  // loses that word's direction.
  const axes: Record<string, number[]> = { better: [1, 0, 0], crochet: [0, 1, 0], stuff: [0, 0, 1] };
  const unit = (v: number[]) => v.map((x) => x / Math.hypot(...v));
  // The question itself reads as its content words (function words carry no direction here).
  const vectorOf = (text: string) =>
    unit(
      text
        .replace(/[?]/g, '')
        .split(' ')
        .filter((w) => w in axes)
        .reduce((sum, w) => sum.map((x, i) => x + axes[w]![i]! * (w === 'crochet' ? 3 : 1)), [0, 0, 0]),
    );
  const asked: string[][] = [];
  const together = (texts: string[]) => {
    asked.push(texts);
    return Promise.resolve(texts.map(vectorOf));
  };
  const query = 'how do I get better at crochet stuff?';

  it('weighs most the word whose loss moves the query most, none under half', async () => {
    const weights = (await readQuestion(query, together))?.weights;
    expect(weights).toBeDefined();
    const [better, crochet, stuff] = weights!;
    expect(crochet).toBeGreaterThan(1);
    expect(better).toBeLessThan(1);
    expect(better).toBe(stuff);
    expect(Math.min(...weights!)).toBeGreaterThanOrEqual(0.5);
    // The mean stays 1: only the words' shares move.
    expect((better! + crochet! + stuff!) / 3).toBeCloseTo(1, 2);
  });

  it('asks the model once: the question and each text without one word together, and answers the question’s vector', async () => {
    asked.length = 0;
    const read = await readQuestion(query, together);
    expect(asked).toEqual([[query, 'crochet stuff', 'better stuff', 'better crochet']]);
    expect(read?.vector).toEqual(vectorOf(query));
  });

  it('is null when the model cannot read the query or the query is no question', async () => {
    const unreadable = (texts: string[]) => Promise.resolve(texts.map(() => new Float32Array(0)));
    expect(await readQuestion(query, unreadable)).toBeNull();
    expect(await readQuestion('better crochet stuff', together)).toBeNull();
  });
});
