import { describe, expect, it } from 'vitest';
import { eachKnownToken, vocabularyOf } from '../../src/engine/elasticsearch/known-tokens.ts';
import { standardTokens } from '../../src/engine/elasticsearch/memory-analysis.ts';
import { generateObservations } from '../../src/seed/generator.ts';

// The scanner must give exactly the tokens the tokenizer gives that the vocabulary holds, in order:
// a token it cut differently would be a post a saved search misses or invents. The tokenizer itself
// is checked against the engine (test/integration/memory-analysis.test.ts); this checks the scanner
// against the tokenizer on random text made of the pieces where their rules differ.
const PIECES = [
  'a',
  'B',
  'z',
  'Q',
  '_',
  '0',
  '7',
  '.',
  "'",
  ':',
  ',',
  ';',
  ' ',
  '\n',
  '-',
  '#',
  '*',
  '!',
  '/',
  '@',
  'é',
  'É',
  'ß',
  'Σ',
  'ς',
  'İ',
  'K',
  '’',
  '·',
  '\u00AD',
  '\u0301',
  '\uFE0F',
  '\u20E3',
  '\u200D',
  '🔥',
  '👍🏽',
  '🇯🇵',
  '日本',
  'カタカナ',
  'ไทย',
  '١٢',
  'x²',
  '１',
  'cat',
  'Cat',
  'dog',
  'e.g',
  'U.S.A',
  '3.5',
  '1,000',
  "don't",
  'naïve',
  'café',
  'ab:cd',
];

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function expected(text: string, lowercased: boolean, words: ReadonlySet<string>): string[] {
  return standardTokens(text, lowercased).filter((t) => words.has(t));
}

function known(text: string, lowercased: boolean, words: ReadonlySet<string>): string[] {
  const out: string[] = [];
  eachKnownToken(text, lowercased, vocabularyOf(words), (w) => out.push(w));
  return out;
}

describe('known tokens', () => {
  it('finds the same words as the tokenizer on random text of ASCII and other scripts, both cases', () => {
    const random = seeded(7);
    for (let round = 0; round < 4000; round++) {
      const length = 1 + Math.floor(random() * 40);
      const text = Array.from({ length }, () => PIECES[Math.floor(random() * PIECES.length)]).join('');
      for (const lowercased of [true, false]) {
        const all = standardTokens(text, lowercased);
        // A vocabulary of some of its tokens, and words it does not hold.
        const words = new Set([...all.filter(() => random() < 0.6), 'cat', 'e.g', '3.5', 'zzz', 'Cat']);
        expect(known(text, lowercased, words), JSON.stringify(text)).toEqual(expected(text, lowercased, words));
      }
    }
  });

  it('finds the same words on every text of the demo corpus', () => {
    const texts: string[] = [];
    const walk = (value: unknown): void => {
      if (typeof value === 'string') texts.push(value);
      else if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object') Object.values(value).forEach(walk);
    };
    for (const observation of generateObservations({ posts: 300, accounts: 30, seed: 5 })) walk(observation);
    const random = seeded(11);
    const words = new Set(texts.flatMap((t) => standardTokens(t, true)).filter(() => random() < 0.05));
    expect(words.size).toBeGreaterThan(100);
    for (const text of texts) expect(known(text, true, words), text).toEqual(expected(text, true, words));
  });

  it('cuts tokens longer than 255 characters where the tokenizer does', () => {
    const text = `${'x'.repeat(255)}${'y'.repeat(10)} ${'ab'.repeat(200)}`;
    const words = new Set(['x'.repeat(255), 'y'.repeat(10), 'ab'.repeat(100).slice(0, 255)]);
    expect(known(text, true, words)).toEqual(expected(text, true, words));
    expect(known(text, true, words)).toEqual(['x'.repeat(255), 'y'.repeat(10)]);
  });

  it('folds case only for a lowercasing analyzer', () => {
    const words = new Set(['cat', 'Dog']);
    expect(known('Cat CAT cat Dog dog', true, words)).toEqual(['cat', 'cat', 'cat']);
    expect(known('Cat CAT cat Dog dog', false, words)).toEqual(['cat', 'Dog']);
  });
});
