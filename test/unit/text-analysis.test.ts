import { describe, expect, it } from 'vitest';
import { analyze, memo, stemmedText } from '../../src/text/analysis.ts';
import { contentWords } from '../../src/text/function-words.ts';
import { analyzeIn } from '../../src/text/languages.ts';

describe('client-side analysis', () => {
  it('lowercases, drops stop words and possessives, and stems with Porter2', () => {
    expect(stemmedText("The Influencers' running routines: Maya's skincare is the BEST")).toBe(
      'influenc run routin maya skincar best',
    );
  });

  it('puts singular and plural forms on one stem, so documents and queries meet', () => {
    for (const [a, b] of [
      ['month', 'months'],
      ['company', 'companies'],
      ['tumour', 'tumours'],
      ['vlog', 'vlogs'],
    ]) {
      expect(stemmedText(a!)).toBe(stemmedText(b!));
    }
  });

  it('keeps words of any script and inner apostrophes', () => {
    expect(analyze("don't café हिन्दी 2026", (w) => w, false)).toBe("don't café हिन्दी 2026");
  });

  it('folds compatibility forms on both sides of the stemmed fields: full width, half width, subscripts', () => {
    // As a Japanese IME types them, and as the posts are written.
    expect(analyzeIn('ＤＩＹ ２０２４ ｽｷﾝｹｱ CO₂ ﬁtness', 'ja')).toBe(
      analyzeIn('DIY 2024 スキンケア CO2 fitness', 'ja'),
    );
    expect(analyzeIn('ＤＩＹ', 'en')).toBe('diy');
    expect(stemmedText('Ｒｏｕｔｉｎｅｓ')).toBe(stemmedText('routines'));
  });

  it('memoizes within a bound', () => {
    let calls = 0;
    const stem = memo((w) => (calls++, w), 2);
    stem('a');
    stem('a');
    stem('b');
    stem('c');
    stem('a');
    expect(calls).toBe(4); // 'a' evicted when the cache filled
  });
});

describe('contentWords: what a query asks', () => {
  it('leaves out function words and lone letters of an alphabet, unless nothing else is left', () => {
    expect(contentWords(['how', 'do', 'i', 'start', 'k', 'beauty'], 'en')).toEqual(['start', 'beauty']);
    expect(contentWords(['t', 'shirt', 'я', 'β'], 'en')).toEqual(['shirt']);
    expect(contentWords(['k'], 'en')).toEqual(['k']);
  });

  it('keeps a one-character word of a script written without spaces, and digits', () => {
    expect(contentWords(['猫', 'k', '5'], 'ja')).toEqual(['猫', '5']);
  });
});
