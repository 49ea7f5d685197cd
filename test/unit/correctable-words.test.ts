import { describe, expect, it } from 'vitest';
import {
  agreeingCorrections,
  agreementQuestions,
  contentKeys,
  correctableWords,
  correctQuery,
  isCorrectable,
  MAX_CORRECTED_WORDS,
  pairKey,
  withCorrections,
  type AgreementQuestions,
  type WordCounts,
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

/** Counts under which every word is carried and every pair shares a document. */
const everywhere = async ({ words, pairs }: AgreementQuestions): Promise<WordCounts> => ({
  carried: new Map(words.map((w) => [w, 5])),
  together: new Map(pairs.map(([a, b]) => [pairKey(a, b), 2])),
  near: new Set(),
});

describe('correctQuery', () => {
  it('asks about the distinct correctable words only, at most eight, and keeps the others as typed', async () => {
    const asked: string[][] = [];
    const query = 'alpah bravvo charlee deltta echoess foxtrott golfr hotell indiaa julieet Alpah';
    const closest = async (words: string[]) => {
      asked.push(words);
      return new Map([
        ['alpah', { word: 'alpine', score: 0.75 }],
        ['julieet', { word: 'julius', score: 0.75 }],
      ]);
    };
    const corrected = await correctQuery(query, 'en', { closest, counts: everywhere });
    expect(asked).toEqual([['alpah', 'bravvo', 'charlee', 'deltta', 'echoess', 'foxtrott', 'golfr', 'hotell']]);
    expect(asked[0]).toHaveLength(MAX_CORRECTED_WORDS);
    // "julieet" was not asked about: a correction the corrector was not asked for is not applied.
    expect(corrected?.text).toBe('alpine bravvo charlee deltta echoess foxtrott golfr hotell indiaa julius Alpine');
  });

  it('asks about the words `only` keeps, and answers null when nothing changes or nothing is asked', async () => {
    const asked: string[][] = [];
    const closest = async (words: string[]) => {
      asked.push(words);
      return new Map<string, { word: string; score: number }>();
    };
    const engine = { closest, counts: everywhere };
    expect(await correctQuery('soudough starter', 'en', engine, (w) => w === 'soudough')).toBeNull();
    expect(asked).toEqual([['soudough']]);
    expect(await correctQuery('#soudough 2024 for', 'en', engine)).toBeNull();
    expect(asked).toHaveLength(1);
  });

  it('asks the engine about the rest of the query only when a correction has other words to agree with', async () => {
    const closest = async () => new Map([['soudough', { word: 'sourdough', score: 0.875 }]]);
    const asked: AgreementQuestions[] = [];
    const counts = async (questions: AgreementQuestions) => {
      asked.push(questions);
      return everywhere(questions);
    };
    expect((await correctQuery('soudough', 'en', { closest, counts }))?.text).toBe('sourdough');
    expect(asked).toEqual([]);
    expect((await correctQuery('soudough for a starter', 'en', { closest, counts }))?.text).toBe(
      'sourdough for a starter',
    );
    expect(asked).toEqual([
      { words: ['soudough', 'starter', 'sourdough'], pairs: [['sourdough', 'starter']], reach: ['soudough'] },
    ]);
  });
});

describe('agreeingCorrections: a correction the rest of the query bears out', () => {
  /** Counts of a corpus: the documents' words, and the words the suggester finds a close word for. */
  function corpus(near: string[], ...documents: string[][]) {
    return ({ words, pairs, reach }: AgreementQuestions): WordCounts => ({
      carried: new Map(words.map((w) => [w, documents.filter((d) => d.includes(w)).length])),
      together: new Map(
        pairs.map(([a, b]) => [pairKey(a, b), documents.filter((d) => d.includes(a) && d.includes(b)).length]),
      ),
      near: new Set(reach.filter((w) => near.includes(w))),
    });
  }
  const counts = corpus(
    ['brekfast', 'glte', 'wokout', 'brot', 'startr', 'sourdugh'],
    ['sourdough', 'starter', 'feeding'],
    ['glute', 'workout', 'bands'],
    ['glue', 'craft'],
    ['sourdough', 'starter', 'discard'],
    ['brow', 'gel', 'makeup'],
    ['brow', 'lamination'],
    ['bread', 'recipes'],
    ['matcha', 'latte'],
  );
  function judged(query: string, proposed: Record<string, string>, language = 'en') {
    // The suggester's score: 1 − edits / letters of the shorter word.
    const score = (typed: string, word: string) => 1 - 1 / Math.min(typed.length, word.length);
    const corrections = new Map(Object.entries(proposed).map(([k, word]) => [k, { word, score: score(k, word) }]));
    const asked = agreementQuestions(query, language, corrections);
    if (!asked) return [...corrections.keys()];
    return [...agreeingCorrections(query, language, corrections, counts(asked)).keys()];
  }

  it('keeps a correction that shares a document with another word of the query', () => {
    expect(judged('soudough starter', { soudough: 'sourdough' })).toEqual(['soudough']);
  });

  it('drops a correction no document shares with the words the query carries', () => {
    expect(judged('brot recipes', { brot: 'brow' })).toEqual([]);
  });

  it('drops a correction when another word is neither carried nor English: another language', () => {
    expect(judged('brot backen', { brot: 'brow' })).toEqual([]);
    expect(judged('sauerteig brot', { brot: 'brow' })).toEqual([]);
  });

  it('keeps it when the other words are English a corpus may lack, and in a one-word query', () => {
    expect(judged('soudough nutrition', { soudough: 'sourdough' })).toEqual(['soudough']);
    expect(judged('brot', { brot: 'brow' })).toEqual(['brot']);
  });

  it('keeps it when the other word is a slip of its own, within reach of a word the corpus carries', () => {
    expect(judged('brekfast matcah', { matcah: 'matcha' })).toEqual(['matcah']);
  });

  it('judges two slips by each other, the closer correction first: a wrong one does not take a right one down', () => {
    expect(judged('sourdugh startr', { sourdugh: 'sourdough', startr: 'starter' })).toEqual(['sourdugh', 'startr']);
    // "starter" (one edit in six letters) is kept first; "brow" (one in four) shares no document with it.
    expect(judged('brot startr', { brot: 'brow', startr: 'starter' })).toEqual(['startr']);
    // The suggester's "glue" for "glte" (meant: glute) shares no document with "workout".
    expect(judged('glte wokout', { glte: 'glue', wokout: 'workout' })).toEqual(['wokout']);
  });

  it('reads the content alone: no entity, number, function word or unspaced script', () => {
    expect(contentKeys('Brot für #baking mit @mei 2024 and 抹茶 backen', 'de')).toEqual(['brot', 'backen']);
  });
});
