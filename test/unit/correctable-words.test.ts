import { describe, expect, it } from 'vitest';
import {
  correctableWords,
  correctQuery,
  isCorrectable,
  MAX_CORRECTED_WORDS,
  withCorrections,
} from '../../src/text/correctable-words.ts';

const keys = (query: string, language = 'en') => correctableWords(query, language).map((w) => w.key);

describe('correctableWords: the words a silent correction and a suggestion may touch', () => {
  it('leaves entities, numbers, function words and short words as typed', () => {
    expect(keys('Sourdugh for #beginers with @mei 2027 rye')).toEqual(['sourdugh']);
    expect(keys('how should I begn b2b2c skincre from 2024s')).toEqual(['begn', 'skincre']);
  });

  it('leaves the words of scripts written without spaces as typed', () => {
    expect(keys('抹茶 ラテ recipies ชาเย็น')).toEqual(['recipies']);
  });

  it('reads a word as the index does: lower-cased, curly apostrophes straight, accents and marks kept', () => {
    expect(keys('Doesn’t CAFFÉ Crème')).toEqual(["doesn't", 'caffé', 'crème']);
  });

  it("leaves the function words of the query's language as typed, and English's always", () => {
    expect(keys('desde cuando with sourdugh', 'es')).toEqual(['sourdugh']);
    expect(keys('desde cuando with sourdugh', 'en')).toEqual(['desde', 'cuando', 'sourdugh']);
  });

  it('leaves words of English as typed, whatever the corpus holds: no corrections of "does", "write" or "sweet"', () => {
    expect(keys('why does my sun cream leave a white film')).toEqual([]);
    expect(keys('can chatbots help me write emails')).toEqual(['chatbots']);
    expect(keys('simple sweet treat, soudough or focacia')).toEqual(['soudough', 'focacia']);
  });

  it('holds for corrections too: never a function word, a number or a short word', () => {
    expect(['with', 'their', 'rye', 'x2000', 'sourdough'].map((w) => isCorrectable(w, 'en'))).toEqual([
      false,
      false,
      false,
      false,
      true,
    ]);
  });
});

describe('withCorrections', () => {
  it('writes each correction in the case typed and keeps the rest as typed, entities included', () => {
    const query = 'Sourdugh STARTR for #sourdugh, sourdugh!';
    const corrected = withCorrections(
      query,
      correctableWords(query, 'en'),
      new Map([
        ['sourdugh', { word: 'sourdough' }],
        ['startr', { word: 'starter' }],
      ]),
    );
    expect(corrected).toBe('Sourdough STARTER for #sourdugh, sourdough!');
  });
});

describe('correctQuery', () => {
  it('asks about the distinct correctable words only, at most eight, and keeps the others as typed', async () => {
    const asked: string[][] = [];
    const query = 'alpah bravvo charlee deltta echoess foxtrott golfr hotell indiaa julieet Alpah';
    const corrected = await correctQuery(query, 'en', async (words) => {
      asked.push(words);
      return new Map([
        ['alpah', { word: 'alpine' }],
        ['julieet', { word: 'julius' }],
      ]);
    });
    expect(asked).toEqual([['alpah', 'bravvo', 'charlee', 'deltta', 'echoess', 'foxtrott', 'golfr', 'hotell']]);
    expect(asked[0]).toHaveLength(MAX_CORRECTED_WORDS);
    // "julieet" was not asked about: a correction the corrector was not asked for is not applied.
    expect(corrected?.text).toBe('alpine bravvo charlee deltta echoess foxtrott golfr hotell indiaa julius Alpine');
  });

  it('asks about the words `only` keeps, and answers null when nothing changes or nothing is asked', async () => {
    const asked: string[][] = [];
    const closest = async (words: string[]) => {
      asked.push(words);
      return new Map<string, { word: string }>();
    };
    expect(await correctQuery('soudough starter', 'en', closest, (w) => w === 'soudough')).toBeNull();
    expect(asked).toEqual([['soudough']]);
    expect(await correctQuery('#soudough 2024 for', 'en', closest)).toBeNull();
    expect(asked).toHaveLength(1);
  });
});
